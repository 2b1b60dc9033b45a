package flinkapplication

import (
	"hash/fnv"
	"reflect"
	"strconv"
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

	// looked remembers when slow-moving figures (checkpoints, slots) were last read from Flink per
	// object, so that a running job costs one REST call per status poll, not three. It is only a
	// cache: an operator that restarts starts it from what status dates (lookDue).
	looked sync.Map
	// quiet remembers each application whose move into Submitting is not written yet
	// (quiet_submission.go).
	quiet sync.Map

	// written remembers the resourceVersion of our own last status write per application, to spot
	// a cache that has not caught up with it yet.
	written sync.Map
	// writing holds the objects whose status write is on the wire: its echo may reach the informer
	// before its answer reaches the pass, and is still only the echo.
	writing sync.Map

	// routes remembers the JobManager Services lately seen routing elsewhere (jobmanager_routes.go).
	routes routeMemory

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

// staleCache tells whether the cached application predates our own last status write: acting on it
// could repeat a step already taken, so the reconcile waits for the cache instead.
func (e *Environment) staleCache(kind string, obj metav1.Object) bool {
	v, ok := e.written.Load(objectKey(kind, obj))
	if !ok {
		return false
	}
	have, err1 := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	wrote, err2 := strconv.ParseUint(v.(string), 10, 64)
	return err1 == nil && err2 == nil && have < wrote
}

func (e *Environment) rememberWrite(key, resourceVersion string) {
	e.written.Store(key, resourceVersion)
}

func (e *Environment) forgetApp(key string) {
	e.written.Delete(key)
	e.deadlines.Delete(key)
	e.phaseTime.Forget(key)
	e.quiet.Delete(key)
	e.autoscaling.forget(key)
	e.hashes.forget(key)
	e.versions.Forget(key)
	e.kept.Forget(key)
}

// noteDeadline remembers when the object's phase gives up, after a pass that wrote its status. A
// pass that moved on forgets it: the new phase's deadline is judged by the next pass.
func (e *Environment) noteDeadline(rc *Context) {
	if rc.GivesUpAt.IsZero() || rc.Transitioned {
		e.deadlines.Delete(rc.writeKey())
		return
	}
	e.deadlines.Store(rc.writeKey(), rc.GivesUpAt)
}

// lookDue tells whether what is named was last read from Flink at least every ago, and if so
// notes that it is read now. A process that has not read it yet (a new leader, a restarted
// operator) takes since as the last read instead of reading at once: the time status shows the
// figure was read by (see checkpointsLooked), or a time spread over the interval (spreadLooked),
// so that its first passes cost the fleet one call each, not three. A zero since reads at once.
func (e *Environment) lookDue(rc *Context, what string, every time.Duration, since time.Time) bool {
	key := lookKey(rc, what)
	last, ok := e.looked.Load(key)
	if !ok && !since.IsZero() {
		last, ok = since, true
		e.looked.Store(key, since)
	}
	if ok && rc.Now.Sub(last.(time.Time)) < every {
		return false
	}
	e.looked.Store(key, rc.Now)
	return true
}

// lookWouldBeDue is what lookDue would say now, without noting anything: a read asked ahead of
// the answer that decides whether it is made (observeLiveJob) counts as made only once it is used.
func (e *Environment) lookWouldBeDue(rc *Context, what string, every time.Duration, since time.Time) bool {
	last := since
	if v, ok := e.looked.Load(lookKey(rc, what)); ok {
		last = v.(time.Time)
	}
	return last.IsZero() || rc.Now.Sub(last) >= every
}

// lookFailed forgets the read of what is named that Flink did not answer: the next comes due as for
// a process that has not read it yet (lookDue's since), not an interval after the failed one.
func (e *Environment) lookFailed(rc *Context, what string) {
	e.looked.Delete(lookKey(rc, what))
}

// lookedAt notes that what is named was last read at, which may be earlier than it was: the next
// read comes due an interval after at.
func (e *Environment) lookedAt(rc *Context, what string, at time.Time) {
	if !at.IsZero() {
		e.looked.Store(lookKey(rc, what), at)
	}
}

// lookKey names what is read from Flink for the pass's object, in Environment.looked.
func lookKey(rc *Context, what string) string { return rc.writeKey() + "/" + what }

// checkpointsLooked is when the job's checkpoints were read at the latest, for a process that has
// not read them: the trigger time of the checkpoint recorded (in status or the checkpoint book,
// whichever is newer), which the read that recorded it
// followed. Reading them again a record window after that is no later than the operator that
// recorded it would have, so the recorded checkpoint still outlives the next read
// (checkpointRecordWindow); past it (a long outage) they are read at once. A job with no checkpoint
// recorded only has its restart count to show from them (one that checkpoints has them read at
// every pass until its first is recorded): its first read is spread.
func checkpointsLooked(rc *Context, every time.Duration) time.Time {
	if path, at := rc.checkpointRecords().Recorded(); path != "" && !at.IsZero() {
		return at
	}
	return spreadLooked(rc, "checkpoints", every)
}

// spreadLooked is, for a figure nothing in status dates (the cluster's slots and TaskManagers), a
// last read between now and every ago, fixed per object and figure: the first reads of a fleet's
// figures after a restart are spread over the interval rather than made all in its first passes.
func spreadLooked(rc *Context, what string, every time.Duration) time.Time {
	if every <= 0 {
		return time.Time{}
	}
	return rc.Now.Add(-time.Duration(phaseOf(rc, what, every)))
}

// phaseOf is a phase in [0, every) fixed by the pass's object and what is spread (every > 0): what
// many objects do at the same interval, each does at its own phase.
func phaseOf(rc *Context, what string, every time.Duration) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(lookKey(rc, what)))
	return int64(h.Sum64() % uint64(every))
}

// ownEcho tells whether an update of an object is only our own last status write coming back: its
// resourceVersion is the one that write returned (or the write is still waiting for its answer), and
// nothing else a pass reads changed with it.
func (e *Environment) ownEcho(kind string, old, new metav1.Object) bool {
	key := kind + "/" + new.GetNamespace() + "/" + new.GetName()
	v, ok := e.written.Load(key)
	_, inFlight := e.writing.Load(key)
	return (inFlight || ok && v.(string) == new.GetResourceVersion()) && old.GetGeneration() == new.GetGeneration() &&
		(old.GetDeletionTimestamp() == nil) == (new.GetDeletionTimestamp() == nil) &&
		reflect.DeepEqual(old.GetFinalizers(), new.GetFinalizers()) &&
		reflect.DeepEqual(old.GetLabels(), new.GetLabels()) && reflect.DeepEqual(old.GetAnnotations(), new.GetAnnotations())
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
