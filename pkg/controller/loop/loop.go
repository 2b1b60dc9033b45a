// Package loop is the operator's generic controller loop, sample-controller's: a rate-limited
// workqueue of keys in two lanes (lanes.go), the workers that take them, a quiet start after a
// takeover (takeover.go), the time each key waited for a worker (due.go), health for /healthz
// (health.go) and the pass metrics. It knows no kind: each kind registers how to reconcile one of
// its objects and how to tell that one rests (Register, as cert-manager registers its controllers).
package loop

import (
	"context"
	"fmt"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Key names an object of one of the kinds the loop runs.
type Key struct {
	Kind string
	cache.ObjectName
}

func (k Key) String() string { return k.Kind + " " + k.ObjectName.String() }

// Kind is what the loop knows of a kind: how to run one pass over one of its objects, and whether
// one rests.
type Kind struct {
	Name string
	// Reconcile runs one pass over the object; a positive after asks for the next one then.
	Reconcile func(ctx context.Context, namespace, name string) (after time.Duration, err error)
	// Resting tells whether the cached object rests: nothing it asks of the operator is lost by
	// looking at it up to a poll interval later. Nil: never.
	Resting func(namespace, name string) bool
}

// Options configure a Loop.
type Options struct {
	// Clock runs the queue's delays (the real clock when nil) and, with HealthClock, health.
	Clock       clock.WithTicker
	HealthClock clock.PassiveClock
	// StallAfter is how long work may wait while no worker moves before /healthz fails.
	StallAfter time.Duration
	// DrainTimeout bounds how long passes in flight may finish once the loop is told to stop.
	DrainTimeout time.Duration
	// StartupSpread is the time over which the first passes of resting objects are spread after
	// the caches sync (takeover.go).
	StartupSpread time.Duration
	// SlowPassLog logs passes that take longer; 0 logs none.
	SlowPassLog time.Duration
	Metrics     *Metrics
	// QueueAtOnce queues keys as they come from the start, for a loop whose caches are filled by
	// hand (tests): nothing holds them until Run has seen informers sync.
	QueueAtOnce bool
}

// Loop runs the registered kinds' passes from its workqueue.
type Loop struct {
	opts   Options
	kinds  map[string]Kind
	queue  workqueue.TypedRateLimitingInterface[Key]
	lanes  *laneQueue
	health *health
	// due is when each queued key was due, to tell how long it waited for a worker.
	due dueTimes
	// start holds what the initial lists queue until the caches have synced (takeover.go).
	start startupHold
}

// New makes a loop that holds what it is asked to queue until Run has seen the caches sync
// (unless QueueAtOnce).
func New(opts Options) *Loop {
	l := &Loop{opts: opts, kinds: map[string]Kind{}}
	l.lanes = newLaneQueue(l.resting)
	l.queue = newQueue(opts.Clock, l.lanes)
	l.start.holding = !opts.QueueAtOnce
	hc := opts.HealthClock
	if hc == nil {
		hc = clock.RealClock{}
	}
	l.health = &health{clock: hc, stallAfter: opts.StallAfter, queue: l.queue}
	l.health.moved()
	return l
}

// Register adds a kind; keys of kinds not registered are dropped when their turn comes.
func (l *Loop) Register(k Kind) { l.kinds[k.Name] = k }

// Watch adds an informer to those that must sync before any worker runs, and stay synced for
// /healthz, under a name the health report uses.
func (l *Loop) Watch(name string, synced cache.InformerSynced) {
	l.health.informers = append(l.health.informers, namedInformer{name, synced})
}

// Queue is the loop's workqueue, for tests that take what waits in it.
func (l *Loop) Queue() workqueue.TypedRateLimitingInterface[Key] { return l.queue }

// Add queues a key an event asked for, to be handled now: in the needed lane, and while the loop
// starts once its caches have synced.
func (l *Loop) Add(key Key) {
	if l.start.hold(key) {
		return
	}
	l.lanes.ask(key)
	l.QueueNow(key)
}

// QueueNow queues a key to be handled now, even while the loop starts.
func (l *Loop) QueueNow(key Key) {
	l.due.at(key, time.Now())
	l.queue.Add(key)
}

func (l *Loop) resting(key Key) bool {
	k, ok := l.kinds[key.Kind]
	return ok && k.Resting != nil && k.Resting(key.Namespace, key.Name)
}

// Background is work that runs beside the workers from the moment the caches have synced: start
// it on work, which ends only once the workers are drained; stop is called after they are.
type Background func(work context.Context) (stop func())

// Run waits for the watched caches and runs workers over the queue until ctx ends. Then it drains:
// no new pass starts, and the passes in flight finish within the drain timeout with their calls
// intact, so a submission gets its answer and its status write instead of becoming ambiguous. Only
// past the timeout are their calls cancelled.
func (l *Loop) Run(ctx context.Context, workers int, background ...Background) error {
	defer utilruntime.HandleCrash()
	defer l.queue.ShutDown()
	synced := make([]cache.InformerSynced, len(l.health.informers))
	for i, inf := range l.health.informers {
		synced[i] = inf.synced
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("caches did not sync: %v", l.health.check())
	}
	l.releaseStartup()
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	for _, b := range background {
		if stop := b(work); stop != nil {
			defer stop()
		}
	}
	var running sync.WaitGroup
	for i := 0; i < workers; i++ {
		running.Add(1)
		go func() {
			defer running.Done()
			for l.processNextWorkItem(work) {
			}
		}()
	}
	<-ctx.Done()
	l.queue.ShutDown()
	drained := make(chan struct{})
	go func() { running.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(l.opts.DrainTimeout):
		klog.FromContext(ctx).Info("passes still in flight at the end of the drain timeout; cancelling their calls")
		cancelWork()
		<-drained
	}
	return nil
}

// Healthy is nil while the loop works: its caches synced, and workers taking what waits in its
// queue. Otherwise it says why not; /healthz answers it.
func (l *Loop) Healthy() error { return l.health.check() }

// Stalled is nil unless work waits that no worker takes: the process is stuck, not just starting.
func (l *Loop) Stalled() error { return l.health.stalled() }

func (l *Loop) processNextWorkItem(ctx context.Context) bool {
	if l.queue.Len() == 0 {
		// A worker about to wait for work is not a stuck one.
		l.health.moved()
	}
	key, shutdown := l.queue.Get()
	if shutdown {
		return false
	}
	l.health.moved()
	defer l.health.moved()
	defer l.queue.Done(key)
	from := l.lanes.takenFrom(key)
	waited, known := l.due.taken(key, time.Now())
	if known {
		l.opts.Metrics.waited(from, waited.to.Sub(waited.from))
	}
	queued := known && waited.remembered()
	if queued {
		ctx = WithQueueWait(ctx, waited.from, waited.to)
	}
	began := time.Now()
	after, err := l.reconcileSafely(ctx, key)
	took := time.Since(began)
	l.opts.Metrics.passEnded(key.Kind, took, err)
	if slow := l.opts.SlowPassLog; slow > 0 && took > slow {
		var wait time.Duration
		if queued {
			wait = waited.to.Sub(waited.from)
		}
		klog.FromContext(ctx).Info("slow pass", "object", key.String(), "tookMs", took.Milliseconds(), "waitedMs", wait.Milliseconds())
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "reconcile failed", "object", key.String())
		l.queue.AddRateLimited(key)
		return true
	}
	l.queue.Forget(key)
	if after >= time.Second {
		// Polls of objects created together would stay in lockstep and arrive in bursts.
		after = wait.Jitter(after, 0.1)
	}
	if after > 0 {
		l.due.at(key, time.Now().Add(after))
		l.queue.AddAfter(key, after)
	}
	return true
}

// reconcileSafely turns a panic in one object's pass into an error for that object.
func (l *Loop) reconcileSafely(ctx context.Context, key Key) (after time.Duration, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic reconciling %s: %v", key, r)
		}
	}()
	k, ok := l.kinds[key.Kind]
	if !ok || k.Reconcile == nil {
		return 0, nil
	}
	return k.Reconcile(ctx, key.Namespace, key.Name)
}
