package flinkapplication

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessioncluster"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
)

// The FlinkApplication runs through this package's pass (Context): the machine moves its phase, and
// handlers read and write its status and the job settings it derives from its spec (settings.go).
// FlinkSessionJob and FlinkSessionCluster are packages of their own (sessionjob, sessioncluster).
// Every kind is registered here, in kinds, which is wiring: it moves to pkg/operator with the world
// tests (docs/architecture.md).

const (
	applicationKindName    = v1beta1.FlinkApplicationKind
	sessionJobKindName     = v1beta1.FlinkSessionJobKind
	sessionClusterKindName = v1beta1.FlinkSessionClusterKind
	// snapshotKindName is not a kind the machine runs: a FlinkSnapshot is acted on by its owner's
	// pass (package snapshots).
	snapshotKindName = v1beta1.FlinkSnapshotKind
)

// objectKind is what differs between the kinds the machine runs.
type objectKind struct {
	name string
	// table is the kind's phase table, read when it is needed: the tables are built in init.
	table func() map[Phase]phaseSpec
	// sharedCluster is set when other objects' jobs run on the same cluster (a session cluster):
	// the fence before a submission then only looks for this object's own jobs.
	sharedCluster bool
	// patch sends a merge patch to the object, to its status when status is set.
	patch func(rc *Context, patch []byte, status ...string) (metav1.Object, error)
	// migrate rewrites, on first read, status that an earlier operator (or the Lyft operator) wrote
	// in another shape; nil for a kind that has had one shape only.
	migrate func(rc *Context)
}

var (
	applicationKind = &objectKind{
		name: applicationKindName, migrate: migrateStatus,
		table: func() map[Phase]phaseSpec { return phaseTable },
		patch: func(rc *Context, patch []byte, status ...string) (metav1.Object, error) {
			return rc.env.Apps.FlinkV1beta1().FlinkApplications(rc.Meta.Namespace).Patch(
				rc, rc.Meta.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager}, status...)
		},
	}
)

// registeredKind is everything the controller knows of one kind it reconciles, registered in one
// place (kinds): its phase table and the order the docs list its phases in, and how one of its
// objects is reconciled. How its informer lists and watches it is package watch's.
type registeredKind struct {
	*objectKind
	phases []string
	// pass runs one pass of the state machine for one object of the kind.
	pass func(e *Environment, ctx context.Context, namespace, name string) (time.Duration, error)
	// endOfLife says in the diagram how an object of the kind leaves Deleting.
	endOfLife string
}

// kinds are the kinds the controller reconciles, in the order the docs draw their state machines.
var kinds = []registeredKind{
	{objectKind: applicationKind, phases: phaseNames(v1beta1.Phases), pass: (*Environment).Reconcile,
		endOfLife: "job handled per deleteMode, finalizer removed"},
	{objectKind: &objectKind{name: sessionJobKindName}, pass: (*Environment).ReconcileSessionJob},
	{objectKind: &objectKind{name: sessionClusterKindName}, pass: (*Environment).ReconcileSessionCluster},
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

func phaseNames[P ~string](phases []P) []string {
	out := make([]string, len(phases))
	for i, p := range phases {
		out[i] = string(p)
	}
	return out
}

// phases is the phase table of the pass's kind.
func (rc *Context) phases() map[Phase]phaseSpec {
	return rc.kind.table()
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

// drawn is what the docs draw of a kind this package's pass runs.
func drawn(kind string) fsm.Drawn[*Context] {
	k := kindNamed(kind)
	return fsm.Drawn[*Context]{Table: k.table(), Listed: k.phases, Global: fsm.GlobalExits, EndOfLife: k.endOfLife}
}

// PhaseDiagram renders a kind's phase table as a Mermaid state diagram (fsm.Diagram).
func PhaseDiagram(kind string) string {
	switch kind {
	case sessioncluster.KindName:
		return fsm.Diagram(sessioncluster.Drawn())
	case sessionjob.KindName:
		return fsm.Diagram(sessionjob.Drawn())
	}
	return fsm.Diagram(drawn(kind))
}

// PhaseTable describes each phase of a kind: where it moves and whether it has a deadline, for the docs.
func PhaseTable(kind string) [][3]string {
	switch kind {
	case sessioncluster.KindName:
		return fsm.Rows(sessioncluster.Drawn())
	case sessionjob.KindName:
		return fsm.Rows(sessionjob.Drawn())
	}
	return fsm.Rows(drawn(kind))
}
