package kindpass

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jars"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
	"github.com/flinkfsm/flinkfsm/pkg/controller/watch"
)

// FieldManager names the operator's writes.
const FieldManager = "flinkfsm"

// Environment is what the passes of every kind share: clients, clock, configuration and the way to
// observe owned objects, and what the operator remembers between passes. Tests build one from
// fakes; the controller builds one from informers.
type Environment struct {
	Kube     kubernetes.Interface
	Apps     versioned.Interface
	Flink    client.API
	FlinkURL func(namespace, service string, port int32) string
	Clock    clock.Clock
	Recorder record.EventRecorder
	Config   *config.Config
	// Shard selects, by their labels, the FlinkApplications, FlinkSessionClusters and
	// FlinkSessionJobs of the watched namespaces that this operator owns; nil for all of them
	// (config shardSelector, shard.go).
	Shard    labels.Selector
	Observer Observer
	// Sessions reads FlinkSessionClusters and FlinkSessionJobs; nil when the operator runs none.
	Sessions SessionObserver
	// Book keeps running jobs' newest checkpoints between their records in status; nil when
	// checkpointBookInterval is 0, and every record goes to status.
	Book *checkpointbook.Book
	// Jars fetches session jobs' jars under the operator's jar policy.
	Jars    *jars.Fetcher
	Metrics *Metrics
	// Wake, when set, queues an object for a pass soon: what a pass started off the worker (a jar
	// fetch) calls it when it ends.
	Wake func(kind, namespace, name string)

	// ReadsInOrder makes each pass read from Flink one call after another (jobs.Pass.InOrder): for
	// a simulated world whose JobManagers take time to answer on one fake clock.
	ReadsInOrder bool

	// Acting, when set, is asked before every write to Kubernetes and every call that changes Flink:
	// it answers an error when this replica cannot be sure it still holds its leader lease (a
	// leader frozen past its lease), and the pass then changes nothing.
	Acting func() error

	// PhaseTime is what phase deadlines count: when this process could not act and the times each
	// object waited for a worker, which they do not count, and when each starting cluster last took
	// a step (fsm.Deadlines).
	PhaseTime fsm.Deadlines
	// Versions remembers the flinkVersion of each record's spec.
	Versions jobstate.RecordedVersions
	// kept are the states retention was told another object needs (snapshots.Kept).
	kept snapshots.Kept

	// Looks remember when slow-moving figures (checkpoints, slots) were last read from Flink per
	// object (jobstate.Looks).
	Looks jobstate.Looks

	// written remembers our own last status write of each object, to spot a cache that has not
	// caught up with it yet and the echo of the write.
	written fsm.OwnWrites

	// routes remember the JobManager Services lately seen routing elsewhere (clusters.Routes).
	routes clusters.Routes

	// namespaces keeps the Namespaces the pod policy was last read from.
	namespaces clusters.NamespaceCache
	// otherShards keeps what the other shards restore from, for retention (snapshots.OtherShards).
	otherShards snapshots.OtherShards

	// deadlines holds when each object's current phase gives up, for the metric that alerts on an
	// object stuck past it.
	deadlines sync.Map
}

// Observer reads an application and the objects it owns, normally from informer caches
// (watch.Listers).
type Observer = watch.Observer

// SessionObserver reads session clusters and session jobs, normally from informer caches.
type SessionObserver = watch.SessionObserver

// ObjectKey names an object across kinds, for what the operator remembers of it.
func ObjectKey(kind string, obj metav1.Object) string {
	return kind + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

// StaleCache tells whether the cached object predates our own last status write (fsm.OwnWrites).
func (e *Environment) StaleCache(kind string, obj metav1.Object) bool {
	return e.written.Stale(ObjectKey(kind, obj), obj)
}

// OwnEcho tells whether an update of an object is only our own last status write coming back
// (fsm.OwnWrites.Echo).
func (e *Environment) OwnEcho(kind string, old, new metav1.Object) bool {
	return e.written.Echo(ObjectKey(kind, new), old, new)
}

// Forget drops what the operator remembers of an object that is gone.
func (e *Environment) Forget(key string) {
	e.written.Forget(key)
	e.deadlines.Delete(key)
	e.PhaseTime.Forget(key)
	e.Versions.Forget(key)
	e.kept.Forget(key)
	e.Looks.Forget(key)
}

// NoteDeadline remembers when the object's phase gives up, after a pass that wrote its status. A
// pass that moved on forgets it: the new phase's deadline is judged by the next pass.
func (e *Environment) NoteDeadline(p *Pass) {
	if p.GivesUpAt.IsZero() || p.Transitioned {
		e.deadlines.Delete(p.Key())
		return
	}
	e.deadlines.Store(p.Key(), p.GivesUpAt)
}

// Deadline is when the current phase of the object with this key gives up, as its last written
// pass left it.
func (e *Environment) Deadline(key string) (time.Time, bool) {
	d, ok := e.deadlines.Load(key)
	if !ok {
		return time.Time{}, false
	}
	return d.(time.Time), true
}

// WakeLater is what wakes the object of a pass once something it started off the worker ends.
func (e *Environment) WakeLater(p *Pass) func() {
	kind, ns, name := p.KindName, p.Meta.Namespace, p.Meta.Name
	return func() {
		if e.Wake != nil {
			e.Wake(kind, ns, name)
		}
	}
}

// bookPage is the page of the checkpoint book with this key, as the cluster has it; nil when it is
// not there or cannot be read.
func (e *Environment) bookPage(k checkpointbook.Key) *corev1.ConfigMap {
	page, err := e.Observer.CheckpointBookPage(k.Namespace, checkpointbook.PageName(k))
	if err != nil {
		return nil
	}
	return page
}

// EventType is the type of an Event that warns or not.
func EventType(warning bool) string {
	if warning {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}
