package operator

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaling"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flinkapplication"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
	"github.com/flinkfsm/flinkfsm/pkg/controller/loop"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessioncluster"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
	"github.com/flinkfsm/flinkfsm/pkg/controller/watch"
)

// Controller wires the informers (pkg/controller/watch) of the kinds the machine runs, and of the
// objects the operator owns, to the generic loop (pkg/controller/loop): objects the operator owns
// enqueue their owner, so waiting phases move as soon as a Deployment or pod changes instead of on
// a resync.
type Controller struct {
	env *flinkapplication.Environment
	// kinds are the kinds the machine runs, over env (kinds.go).
	kinds []registeredKind
	loop  *loop.Loop
	// queue is the loop's workqueue.
	queue   workqueue.TypedRateLimitingInterface[queueKey]
	watch   *watch.Watch
	workers int
}

// queueKey names an object of one of the kinds the controller reconciles.
type queueKey = loop.Key

// add queues a key to be handled now; while the controller starts, once its caches have synced.
func (c *Controller) add(key queueKey) { c.loop.Add(key) }

// newLoop is the controller's loop, with the machine's kinds and the orphaned FlinkSnapshots'
// pass registered, each kind resting as keyAtRest tells.
func (c *Controller) newLoop(opts loop.Options) {
	c.loop = loop.New(opts)
	c.queue = c.loop.Queue()
	resting := func(kind string) func(namespace, name string) bool {
		return func(namespace, name string) bool {
			return c.keyAtRest(queueKey{Kind: kind, ObjectName: cache.ObjectName{Namespace: namespace, Name: name}})
		}
	}
	for _, k := range c.kinds {
		c.loop.Register(loop.Kind{Name: k.name, Resting: resting(k.name), Reconcile: k.pass})
	}
	// Not a kind the machine runs: a FlinkSnapshot is its owner's to answer, but for one whose
	// owner is gone.
	c.loop.Register(loop.Kind{Name: v1beta1.FlinkSnapshotKind, Reconcile: func(ctx context.Context, namespace, name string) (time.Duration, error) {
		return c.env.ReconcileOrphanedSnapshot(ctx, namespace, name)
	}})
}

// NewController wires informers for the configured namespaces (all when none are listed) to the queue.
func NewController(env *flinkapplication.Environment) *Controller {
	c := &Controller{env: env, kinds: kindsOver(env), workers: env.Config.WorkerCount()}
	// The queue's delays follow the operator's clock: a test steps through the start-up spread.
	clk, _ := env.Clock.(clock.WithTicker)
	c.newLoop(loop.Options{Clock: clk, HealthClock: env.Clock, StallAfter: env.Config.StallTimeout.Duration,
		DrainTimeout: env.Config.LeaderElection.DrainTimeout.Duration,
		// Over nine tenths of the interval: the last pass then also ends within it, on a busy
		// machine too (at the full interval the bench saw the last application observed at 10.00 s).
		StartupSpread: env.Config.StatusPollInterval.Duration * 9 / 10,
		SlowPassLog:   env.Config.SlowPassLog.Duration, Metrics: env.Metrics.LoopMetrics()})
	env.Wake = func(kind, namespace, name string) {
		c.add(queueKey{Kind: kind, ObjectName: cache.ObjectName{Namespace: namespace, Name: name}})
	}
	cfg := watch.Config{Kube: env.Kube, Apps: env.Apps, Namespaces: env.Config.Namespaces(), Shard: env.Shard,
		Recorder: env.Recorder, Echo: env.OwnEcho, Synced: c.loop.Watch,
		Enqueue: func(kind, namespace, name string) {
			c.add(queueKey{Kind: kind, ObjectName: cache.ObjectName{Namespace: namespace, Name: name}})
		}}
	if env.Book != nil {
		cfg.BookPages = &watch.BookPages{Label: checkpointbook.Label, ForCache: checkpointbook.ForCache}
	}
	c.watch = watch.New(cfg)
	obs := c.watch.Listers()
	env.Observer, env.Sessions = obs, obs
	return c
}

// Run starts the informers and runs the loop until ctx ends, then drains it (loop.Run). The
// checkpoint book is written while the workers run and once more after they are drained: a leader
// that steps down leaves nothing its passes noted unwritten.
func (c *Controller) Run(ctx context.Context) error {
	c.watch.Start(ctx)
	var background []loop.Background
	if book := c.env.Book; book != nil {
		logger := klog.FromContext(ctx)
		report := func(_ int, err error) {
			if err != nil {
				logger.Error(err, "writing the checkpoint book")
			}
		}
		background = append(background, func(work context.Context) func() {
			books, stopBook := context.WithCancel(work)
			go book.Run(books, c.env.Config.CheckpointBookInterval.Duration, report)
			return func() {
				stopBook()
				// Bounded, so that a slow API server does not hold the lease from the next leader.
				last, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.env.Config.CheckpointBookInterval.Duration)
				defer cancel()
				report(book.Flush(last))
			}
		})
	}
	return c.loop.Run(ctx, c.workers, background...)
}

// Healthy is nil while the controller works: its caches synced, and workers taking what waits in
// its queue. Otherwise it says why not; /healthz answers it.
func (c *Controller) Healthy() error { return c.loop.Healthy() }

// Stalled is nil unless work waits that no worker takes: the process is stuck, not just starting.
func (c *Controller) Stalled() error { return c.loop.Stalled() }

// What rests, for the loop's lanes and its quiet takeover (pkg/controller/loop): an object at rest
// is polled behind what needs the operator, and after a takeover its first pass is spread over most
// of a statusPollInterval.

// keyAtRest tells whether the cached object of the key is at rest: nothing it asks of the
// operator is lost by looking at it up to a statusPollInterval later.
func (c *Controller) keyAtRest(key queueKey) bool {
	obj, ok := c.watch.Cached(key.Kind, key.Namespace, key.Name)
	if !ok {
		// Gone, or not a kind the machine runs (an orphaned FlinkSnapshot): its pass is short.
		return false
	}
	var s lifecycle.Subject
	switch o := obj.(type) {
	case *v1beta1.FlinkApplication:
		s = flinkapplication.Subject{FlinkApplication: o}
	case *v1beta1.FlinkSessionJob:
		s = sessionjob.Subject{FlinkSessionJob: o}
	case *v1beta1.FlinkSessionCluster:
		s = sessioncluster.Subject{FlinkSessionCluster: o}
	default:
		return false
	}
	return atRest(s) && !c.watch.SnapshotsWait(key.Kind, key.Namespace, key.Name)
}

// atRest tells whether an object rests in a steady phase with its spec acted on and nothing to
// retry. A job shown Red may be one to restart (restartFailedJob): it is looked at first.
func atRest(s lifecycle.Subject) bool {
	if !fsm.AtRest(s) {
		return false
	}
	if j := s.Job(); j != nil && j.JobStatus.Health == v1beta1.Red {
		return false
	}
	return true
}

// The informers, their caches and what wakes whom are package watch's. What they read besides the
// caches (phase deadlines, the checkpoint book, the autoscaler's vertex names) is handed in here.

// Collector is the Prometheus collector of the per-object series, to register beside the
// controller's metrics.
func (c *Controller) Collector() prometheus.Collector {
	m := watch.ObjectMetrics{
		Deadline: func(kind, namespace, name string) (time.Time, bool) {
			return c.env.Deadline(kind + "/" + namespace + "/" + name)
		},
		VertexName:  func(v v1beta1.VertexScaling) string { return autoscaling.ShownVertexName(nameOr(v.Name, v.ID)) },
		MaxVertices: autoscaling.MaxTrackedVertices,
	}
	if book := c.env.Book; book != nil {
		m.BookCheckpoint = func(kind, namespace, name string) (string, time.Time, bool) {
			k := checkpointbook.Key{Namespace: namespace, Kind: kind, Name: name}
			page, _ := c.watch.Listers().CheckpointBookPage(namespace, checkpointbook.PageName(k))
			e, ok := book.Newest(k, page)
			return e.JobID, e.At, ok
		}
	}
	return c.watch.Collector(m)
}

// nameOr is name, or id when the name is empty.
func nameOr(name, id string) string {
	if name != "" {
		return name
	}
	return id
}
