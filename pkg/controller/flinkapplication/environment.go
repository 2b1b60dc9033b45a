package flinkapplication

import (
	"sync"

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

// Environment is what reconciles share: clients, clock, configuration and the way to observe owned
// objects. Tests build one from fakes; the controller builds one from informers.
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
	// checkpointBookInterval is 0, and every record goes to status (checkpoint_book.go).
	Book *checkpointbook.Book
	// Jars fetches session jobs' jars under the operator's jar policy.
	Jars    *jars.Fetcher
	Metrics *Metrics
	// Wake, when set, queues an object for a pass soon: what a pass started off the worker (a jar
	// fetch) calls it when it ends.
	Wake func(kind, namespace, name string)
	// jarFetches are session jobs' jar fetches, run off the workers.
	jarFetches jarFetches

	// ReadsInOrder makes each pass read from Flink one call after another (jobs.Pass.InOrder): for
	// a simulated world whose JobManagers take time to answer on one fake clock.
	ReadsInOrder bool

	// Acting, when set, is asked before every write to Kubernetes and every call that changes Flink:
	// it answers an error when this replica cannot be sure it still holds its leader lease (a
	// leader frozen past its lease), and the pass then changes nothing.
	Acting func() error

	// phaseTime is what phase deadlines count: when this process could not act and the times each
	// object waited for a worker, which they do not count, and when each starting cluster last took
	// a step (fsm.Deadlines).
	phaseTime fsm.Deadlines
	// hashes remembers each application's cluster hash by the resourceVersion it was computed from,
	// and versions the flinkVersion of each record's spec (object_memory.go).
	hashes   clusterHashes
	versions jobstate.RecordedVersions
	// autoscaling keeps the autoscaler's samples of each autoscaled job (autoscaler_metrics.go).
	autoscaling autoscalerMemory
	// kept are the states retention was told another object needs (snapshots.Kept).
	kept snapshots.Kept

	// looks remember when slow-moving figures (checkpoints, slots) were last read from Flink per
	// object (jobstate.Looks).
	looks jobstate.Looks
	// quiet remembers each application whose move into Submitting is not written yet
	// (quiet_submission.go).
	quiet sync.Map

	// written remembers our own last status write of each object, to spot a cache that has not
	// caught up with it yet and the echo of the write.
	written fsm.OwnWrites

	// routes remember the JobManager Services lately seen routing elsewhere (clusters.Routes).
	routes clusters.Routes

	// namespaces keeps the Namespaces the pod policy was last read from.
	namespaces namespaceCache
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

// staleCache tells whether the cached object predates our own last status write (fsm.OwnWrites).
func (e *Environment) staleCache(kind string, obj metav1.Object) bool {
	return e.written.Stale(objectKey(kind, obj), obj)
}

func (e *Environment) forgetApp(key string) {
	e.written.Forget(key)
	e.deadlines.Delete(key)
	e.phaseTime.Forget(key)
	e.quiet.Delete(key)
	e.autoscaling.forget(key)
	e.hashes.forget(key)
	e.versions.Forget(key)
	e.kept.Forget(key)
	e.looks.Forget(key)
}

// noteDeadline remembers when the object's phase gives up, after a pass that wrote its status. A
// pass that moved on forgets it: the new phase's deadline is judged by the next pass.
func (e *Environment) noteDeadline(rc *Context) {
	if rc.GivesUpAt.IsZero() || rc.Transitioned {
		e.deadlines.Delete(rc.Key())
		return
	}
	e.deadlines.Store(rc.Key(), rc.GivesUpAt)
}

// ownEcho tells whether an update of an object is only our own last status write coming back
// (fsm.OwnWrites.Echo).
func (e *Environment) ownEcho(kind string, old, new metav1.Object) bool {
	return e.written.Echo(objectKey(kind, new), old, new)
}

func eventType(warning bool) string {
	if warning {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}

// wakeLater is what wakes the object of a pass once something it started off the worker ends.
func (e *Environment) wakeLater(rc *Context) func() {
	kind, ns, name := rc.kind.name, rc.Meta.Namespace, rc.Meta.Name
	return func() {
		if e.Wake != nil {
			e.Wake(kind, ns, name)
		}
	}
}
