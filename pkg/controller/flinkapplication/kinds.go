package flinkapplication

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessioncluster"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
)

// Every kind is registered here, in kinds, which is wiring: it moves to pkg/operator with the world
// tests (docs/architecture.md). The FlinkApplication runs through this package's pass (Context);
// FlinkSessionJob and FlinkSessionCluster are packages of their own (sessionjob, sessioncluster).

// registeredKind is everything the controller knows of one kind it reconciles, registered in one
// place (kinds): how one of its objects is reconciled, and what the docs draw of its phase table.
// How its informer lists and watches it is package watch's.
type registeredKind struct {
	name string
	// pass runs one pass of the state machine for one object of the kind.
	pass func(e *Environment, ctx context.Context, namespace, name string) (time.Duration, error)
	// diagram and rows are the kind's phase table as the docs draw it (fsm.Diagram, fsm.Rows).
	diagram func() string
	rows    func() [][3]string
}

// drawnAs registers how the docs draw a kind's table.
func drawnAs[P any](k registeredKind, drawn func() fsm.Drawn[P]) registeredKind {
	k.diagram = func() string { return fsm.Diagram(drawn()) }
	k.rows = func() [][3]string { return fsm.Rows(drawn()) }
	return k
}

// kinds are the kinds the controller reconciles, in the order the docs draw their state machines.
var kinds = []registeredKind{
	drawnAs(registeredKind{name: applicationKindName, pass: (*Environment).Reconcile}, drawnApplication),
	drawnAs(registeredKind{name: sessionJobKindName, pass: (*Environment).ReconcileSessionJob}, sessionjob.Drawn),
	drawnAs(registeredKind{name: sessionClusterKindName, pass: (*Environment).ReconcileSessionCluster}, sessioncluster.Drawn),
}

// kindNamed is the registered kind of that name; the FlinkApplication's for a name not registered.
func kindNamed(name string) registeredKind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	return kinds[0]
}

// objectKey names an object across kinds (kindpass.ObjectKey).
func objectKey(kind string, obj metav1.Object) string { return kindpass.ObjectKey(kind, obj) }

// ReconcileSessionJob runs one pass of the state machine for one FlinkSessionJob
// (sessionjob.Reconcile).
func (e *Environment) ReconcileSessionJob(ctx context.Context, namespace, name string) (time.Duration, error) {
	return sessionjob.Reconcile(ctx, &e.Environment, &e.sessionJobs, namespace, name)
}

// ReconcileSessionCluster runs one pass of the state machine for one FlinkSessionCluster
// (sessioncluster.Reconcile).
func (e *Environment) ReconcileSessionCluster(ctx context.Context, namespace, name string) (time.Duration, error) {
	return sessioncluster.Reconcile(ctx, &e.Environment, namespace, name)
}

// DiagramKinds are the kinds whose state machines the docs draw, in the order they are drawn.
var DiagramKinds = func() []string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.name)
	}
	return out
}()

// PhaseDiagram renders a kind's phase table as a Mermaid state diagram (fsm.Diagram).
func PhaseDiagram(kind string) string { return kindNamed(kind).diagram() }

// PhaseTable describes each phase of a kind: where it moves and whether it has a deadline, for the docs.
func PhaseTable(kind string) [][3]string { return kindNamed(kind).rows() }
