package operator

import (
	"context"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flinkapplication"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessioncluster"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
)

// The kinds the operator runs are listed here, and nowhere else: each is a package of its own
// (flinkapplication, sessionjob, sessioncluster) that imports no other kind, and the loop
// (pkg/controller/loop) knows none of them. A kind is registered with how one of its objects is
// reconciled; the docs draw each kind's phase table from the list (hack/docgen).

// registeredKind is one kind the controller reconciles: how one of its objects is reconciled.
type registeredKind struct {
	name string
	// pass runs one pass of the state machine for one object of the kind.
	pass func(ctx context.Context, namespace, name string) (time.Duration, error)
}

// kindsOver are the kinds the controller reconciles over the environment, each with the memory
// only it keeps: the session jobs' jar transfers in flight are theirs.
func kindsOver(env *flinkapplication.Environment) []registeredKind {
	sessionJobs := &sessionjob.Memory{}
	return []registeredKind{
		{name: v1beta1.FlinkApplicationKind, pass: env.Reconcile},
		{name: v1beta1.FlinkSessionJobKind, pass: func(ctx context.Context, namespace, name string) (time.Duration, error) {
			return sessionjob.Reconcile(ctx, &env.Environment, sessionJobs, namespace, name)
		}},
		{name: v1beta1.FlinkSessionClusterKind, pass: func(ctx context.Context, namespace, name string) (time.Duration, error) {
			return sessioncluster.Reconcile(ctx, &env.Environment, namespace, name)
		}},
	}
}

// drawnKind is what the docs draw of a kind's phase table (fsm.Diagram, fsm.Rows).
type drawnKind struct {
	name    string
	diagram func() string
	rows    func() [][3]string
}

func drawnAs[P any](name string, drawn func() fsm.Drawn[P]) drawnKind {
	return drawnKind{name: name, diagram: func() string { return fsm.Diagram(drawn()) }, rows: func() [][3]string { return fsm.Rows(drawn()) }}
}

// drawnKinds are the kinds whose state machines the docs draw, in the order they are drawn.
var drawnKinds = []drawnKind{
	drawnAs(v1beta1.FlinkApplicationKind, flinkapplication.Drawn),
	drawnAs(v1beta1.FlinkSessionJobKind, sessionjob.Drawn),
	drawnAs(v1beta1.FlinkSessionClusterKind, sessioncluster.Drawn),
}

// DiagramKinds are the kinds whose state machines the docs draw, in the order they are drawn.
func DiagramKinds() []string {
	var out []string
	for _, k := range drawnKinds {
		out = append(out, k.name)
	}
	return out
}

// drawn is the drawn kind of that name; the FlinkApplication's for a name not registered.
func drawn(name string) drawnKind {
	for _, k := range drawnKinds {
		if k.name == name {
			return k
		}
	}
	return drawnKinds[0]
}

// PhaseDiagram renders a kind's phase table as a Mermaid state diagram (fsm.Diagram).
func PhaseDiagram(kind string) string { return drawn(kind).diagram() }

// PhaseTable describes each phase of a kind: where it moves and whether it has a deadline, for the docs.
func PhaseTable(kind string) [][3]string { return drawn(kind).rows() }
