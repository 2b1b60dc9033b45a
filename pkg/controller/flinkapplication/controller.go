package flinkapplication

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	applisters "github.com/flinkfsm/flinkfsm/pkg/client/listers/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
	"github.com/flinkfsm/flinkfsm/pkg/controller/loop"
)

// Controller wires the informers of the kinds the machine runs, and of the objects the operator
// owns, to the generic loop (pkg/controller/loop): objects the operator owns enqueue their owner, so
// waiting phases move as soon as a Deployment or pod changes instead of on a resync.
type Controller struct {
	env  *Environment
	loop *loop.Loop
	// queue is the loop's workqueue.
	queue     workqueue.TypedRateLimitingInterface[queueKey]
	factories []interface{ Start(<-chan struct{}) }
	// informers are those of the operator's own kinds, which no factory starts.
	informers []cache.SharedIndexInformer
	workers   int
	// jobIndexes are the FlinkSessionJob indexers by watched namespace ("" for all).
	jobIndexes map[string]cache.Indexer
	// ownIndexes are the caches of the kinds the machine runs, by watched namespace and kind: what
	// is in the operator's shard (shard.go).
	ownIndexes map[string]map[string]cache.Indexer
	// snapshotIndexes are the FlinkSnapshot indexers by watched namespace ("" for all).
	snapshotIndexes map[string]cache.Indexer
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
	for _, k := range kinds {
		pass := k.pass
		c.loop.Register(loop.Kind{Name: k.name, Resting: resting(k.name),
			Reconcile: func(ctx context.Context, namespace, name string) (time.Duration, error) {
				return pass(c.env, ctx, namespace, name)
			}})
	}
	// Not a kind the machine runs: a FlinkSnapshot is its owner's to answer, but for one whose
	// owner is gone.
	c.loop.Register(loop.Kind{Name: snapshotKindName, Reconcile: func(ctx context.Context, namespace, name string) (time.Duration, error) {
		return c.env.reconcileOrphanedSnapshot(ctx, namespace, name)
	}})
}

// NewController wires informers for the configured namespaces (all when none are listed) to the queue.
func NewController(env *Environment) *Controller {
	c := &Controller{
		env:             env,
		workers:         env.Config.WorkerCount(),
		jobIndexes:      map[string]cache.Indexer{},
		ownIndexes:      map[string]map[string]cache.Indexer{},
		snapshotIndexes: map[string]cache.Indexer{},
	}
	// The queue's delays follow the operator's clock: a test steps through the start-up spread.
	clk, _ := env.Clock.(clock.WithTicker)
	c.newLoop(loop.Options{Clock: clk, HealthClock: env.Clock, StallAfter: env.Config.StallTimeout.Duration,
		DrainTimeout: env.Config.LeaderElection.DrainTimeout.Duration,
		// Over nine tenths of the interval: the last pass then also ends within it, on a busy
		// machine too (at the full interval the bench saw the last application observed at 10.00 s).
		StartupSpread: env.Config.StatusPollInterval.Duration * 9 / 10,
		SlowPassLog:   env.Config.SlowPassLog.Duration, Metrics: env.Metrics.loopMetrics()})
	env.Wake = func(kind, namespace, name string) {
		c.add(queueKey{Kind: kind, ObjectName: cache.ObjectName{Namespace: namespace, Name: name}})
	}
	skipped := &undecodableReporter{recorder: env.Recorder}
	namespaces := env.Config.Namespaces()
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	obs := &listerObserver{byNamespace: map[string]*namespaceListers{}}
	for _, ns := range namespaces {
		// The operator's Deployments, Services and pods all carry its app label; selecting by it keeps
		// the namespace's other objects out of the cache and out of the operator's memory.
		kubeInf := kubeinformers.NewSharedInformerFactoryWithOptions(env.Kube, 0, kubeinformers.WithNamespace(ns),
			kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = k8.AppLabel }),
			kubeinformers.WithTransform(trimForCache))
		// Flink's HA ConfigMaps carry Flink's labels, not the operator's; they are cached by their
		// own label, and of their metadata only: their data changes at each checkpoint and their
		// leader annotation every few seconds, none of which the operator reads.
		haInf := kubeinformers.NewSharedInformerFactoryWithOptions(env.Kube, 0, kubeinformers.WithNamespace(ns),
			kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = flink.HAConfigMapSelector }),
			kubeinformers.WithTransform(haConfigMapMetadata))
		listers := c.watch(ns, kubeInf, haInf, skipped.report)
		c.factories = append(c.factories, kubeInf, haInf)
		if env.Book != nil {
			// The checkpoint book's pages, by their own label: read when a job's recorded checkpoint
			// is (checkpoint_book.go); their changes wake nobody.
			bookInf := kubeinformers.NewSharedInformerFactoryWithOptions(env.Kube, 0, kubeinformers.WithNamespace(ns),
				kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = checkpointbook.Label }),
				kubeinformers.WithTransform(checkpointBookPageForCache))
			pages := bookInf.Core().V1().ConfigMaps().Informer()
			c.loop.Watch("checkpoint book in "+namespaceWords(ns), pages.HasSynced)
			listers.bookPages = pages.GetIndexer()
			c.factories = append(c.factories, bookInf)
		}
		obs.byNamespace[ns] = listers
	}
	env.Observer, env.Sessions = obs, obs
	return c
}

// namespaceWords names a watched namespace in the health report's words.
func namespaceWords(ns string) string {
	if ns == metav1.NamespaceAll {
		return "all namespaces"
	}
	return "namespace " + ns
}

// haOwnerIndex indexes HA ConfigMaps by the application or session cluster whose cluster made them.
const haOwnerIndex = "haOwner"

func haOwnerOf(obj interface{}) ([]string, error) {
	if m, ok := obj.(metav1.Object); ok {
		if owner, _, ok := flink.HAConfigMapCluster(m); ok {
			return []string{m.GetNamespace() + "/" + owner}, nil
		}
	}
	return nil, nil
}

// clusterIndex indexes FlinkSessionJobs by the FlinkSessionCluster they name, so that a change of a
// session cluster wakes its jobs at once.
const clusterIndex = "sessionCluster"

func sessionJobCluster(obj interface{}) ([]string, error) {
	if j, ok := obj.(*v1beta1.FlinkSessionJob); ok {
		return []string{j.Namespace + "/" + j.Spec.ClusterName}, nil
	}
	return nil, nil
}

// appIndex indexes the Deployments, Services and pods the operator created by the application (or
// session cluster) their app label names. Each pass reads its own objects from it; a label
// selector over the namespace's list would cost every pass the size of the whole fleet.
const appIndex = "appLabel"

func appLabelIndex(obj interface{}) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if app := m.GetLabels()[k8.AppLabel]; app != "" {
		return []string{m.GetNamespace() + "/" + app}, nil
	}
	return nil, nil
}

func (c *Controller) watch(ns string, kubeInf, haInf kubeinformers.SharedInformerFactory, skip skipFunc) *namespaceListers {
	byNamespace := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	// The kinds the machine runs are cached as far as the shard selects them; FlinkSnapshots all,
	// as a snapshot is in the shard of its owner, whatever its own labels (shard.go).
	shard := c.env.shardSelector()
	apps := applicationResource.informer(c.env.Apps, ns, shard, byNamespace, skip)
	sessionClusters := sessionClusterResource.informer(c.env.Apps, ns, shard, byNamespace, skip)
	sessionJobs := sessionJobResource.informer(c.env.Apps, ns, shard,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, clusterIndex: sessionJobCluster}, skip)
	snapshots := snapshotResource.informer(c.env.Apps, ns, "", cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, snapshotOwnerIndex: snapshotOwnerOf}, skip)
	c.informers = append(c.informers, apps, sessionClusters, sessionJobs, snapshots)
	c.ownIndexes[ns] = map[string]cache.Indexer{applicationKindName: apps.GetIndexer(),
		sessionClusterKindName: sessionClusters.GetIndexer(), sessionJobKindName: sessionJobs.GetIndexer()}
	c.snapshotIndexes[ns] = snapshots.GetIndexer()
	for _, inf := range []cache.SharedIndexInformer{apps, sessionClusters, sessionJobs, snapshots} {
		_ = inf.SetTransform(trimForCache)
	}
	deploys := kubeInf.Apps().V1().Deployments()
	services := kubeInf.Core().V1().Services()
	pods := kubeInf.Core().V1().Pods()
	ingresses := kubeInf.Networking().V1().Ingresses()
	configMaps := kubeInf.Core().V1().ConfigMaps()
	haConfigMaps := haInf.Core().V1().ConfigMaps().Informer()
	_ = haConfigMaps.AddIndexers(cache.Indexers{haOwnerIndex: haOwnerOf})
	for _, inf := range []cache.SharedIndexInformer{deploys.Informer(), services.Informer(), pods.Informer(), ingresses.Informer(),
		configMaps.Informer()} {
		_ = inf.AddIndexers(cache.Indexers{appIndex: appLabelIndex})
	}
	where := " in " + namespaceWords(ns)
	for _, inf := range []struct {
		kind string
		inf  cache.SharedIndexInformer
	}{{applicationKindName, apps}, {sessionClusterKindName, sessionClusters}, {sessionJobKindName, sessionJobs},
		{"Deployment", deploys.Informer()}, {"Service", services.Informer()}, {"Pod", pods.Informer()},
		{"Ingress", ingresses.Informer()}, {"ConfigMap", configMaps.Informer()}, {"HA ConfigMap", haConfigMaps},
		{snapshotKindName, snapshots}} {
		c.loop.Watch(inf.kind+where, inf.inf.HasSynced)
	}
	jobIndex := sessionJobs.GetIndexer()
	c.jobIndexes[ns] = jobIndex
	// enqueue gets echo set for the update that is our own last status write coming back: the pass
	// that wrote it already asked for its next look, so the object itself is not queued again.
	onChange := func(kind string, enqueue func(obj interface{}, echo bool)) cache.ResourceEventHandlerFuncs {
		return cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj interface{}) { enqueue(obj, false) },
			UpdateFunc: func(old, new interface{}) {
				o, n := old.(metav1.Object), new.(metav1.Object)
				if o.GetResourceVersion() != n.GetResourceVersion() {
					enqueue(new, c.env.ownEcho(kind, o, n))
				}
			},
			DeleteFunc: func(obj interface{}) { enqueue(obj, false) },
		}
	}
	_, _ = apps.AddEventHandler(onChange(applicationKindName, func(obj interface{}, echo bool) {
		if !echo {
			c.enqueue(obj)
		}
	}))
	// A session cluster's changes wake its jobs; a job's wake its cluster, which lists its jobs
	// and holds its deletion while any is left.
	_, _ = sessionClusters.AddEventHandler(onChange(sessionClusterKindName, func(obj interface{}, echo bool) {
		if name, ok := objectName(obj); ok {
			c.enqueueSessionCluster(name, !echo)
		}
	}))
	_, _ = sessionJobs.AddEventHandler(onChange(sessionJobKindName, func(obj interface{}, echo bool) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if j, ok := obj.(*v1beta1.FlinkSessionJob); ok {
			if !echo {
				c.add(queueKey{Kind: sessionJobKindName, ObjectName: cache.ObjectName{Namespace: j.Namespace, Name: j.Name}})
			}
			// A job that stopped decoding leaves the cache with its metadata only; its cluster
			// learns of it at its next poll.
			if j.Spec.ClusterName != "" {
				c.addOwn(queueKey{Kind: sessionClusterKindName, ObjectName: cache.ObjectName{Namespace: j.Namespace, Name: j.Spec.ClusterName}})
			}
		}
	}))
	// A FlinkSnapshot wakes its owner when a user creates, changes or deletes it; the status the
	// owner's pass writes to it wakes nobody.
	_, _ = snapshots.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueSnapshotOwner,
		UpdateFunc: func(old, new interface{}) {
			if snapshotChangeMatters(old, new) {
				c.enqueueSnapshotOwner(new)
			}
		},
		DeleteFunc: c.enqueueSnapshotOwner,
	})
	owned := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOwner,
		UpdateFunc: func(_, new interface{}) { c.enqueueOwner(new) },
		DeleteFunc: c.enqueueOwner,
	}
	_, _ = deploys.Informer().AddEventHandler(owned)
	_, _ = services.Informer().AddEventHandler(owned)
	_, _ = ingresses.Informer().AddEventHandler(owned)
	_, _ = configMaps.Informer().AddEventHandler(owned)
	// A cluster's HA ConfigMaps appear when its JobManager starts and can outlive it; the pass that
	// removes them runs when one appears or goes. Their updates (leader renewals every few seconds,
	// checkpoints) say nothing the operator acts on.
	_, _ = haConfigMaps.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: c.enqueueHAOwner, DeleteFunc: c.enqueueHAOwner})
	_, _ = pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueOwner,
		UpdateFunc: func(old, new interface{}) {
			if clusters.PodChangeMatters(old, new) {
				c.enqueueOwner(new)
			}
		},
		DeleteFunc: c.enqueueOwner,
	})
	return &namespaceListers{apps: applisters.NewFlinkApplicationLister(apps.GetIndexer()),
		deploys: deploys.Informer().GetIndexer(), services: services.Informer().GetIndexer(), pods: pods.Informer().GetIndexer(),
		ingresses: ingresses.Informer().GetIndexer(), configMaps: configMaps.Informer().GetIndexer(),
		haConfigMaps: haConfigMaps.GetIndexer(), snapshots: snapshots.GetIndexer(),
		sessionClusters: applisters.NewFlinkSessionClusterLister(sessionClusters.GetIndexer()),
		sessionJobs:     applisters.NewFlinkSessionJobLister(jobIndex), sessionJobIndex: jobIndex}
}

func (c *Controller) enqueue(obj interface{}) {
	if name, ok := objectName(obj); ok {
		c.add(queueKey{Kind: applicationKindName, ObjectName: name})
	}
}

func objectName(obj interface{}) (cache.ObjectName, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	name, err := cache.ObjectToName(obj)
	return name, err == nil
}

// enqueueSessionCluster queues every job that names a session cluster, and the cluster itself unless
// only its jobs need to look.
func (c *Controller) enqueueSessionCluster(name cache.ObjectName, itself bool) {
	if itself {
		c.addOwn(queueKey{Kind: sessionClusterKindName, ObjectName: name})
	}
	index := c.jobIndexes[name.Namespace]
	if index == nil {
		index = c.jobIndexes[metav1.NamespaceAll]
	}
	if index == nil {
		return
	}
	jobs, _ := index.ByIndex(clusterIndex, name.Namespace+"/"+name.Name)
	for _, obj := range jobs {
		if j, ok := obj.(*v1beta1.FlinkSessionJob); ok {
			c.add(queueKey{Kind: sessionJobKindName, ObjectName: cache.ObjectName{Namespace: j.Namespace, Name: j.Name}})
		}
	}
}

// enqueueOwner finds the FlinkApplication behind a Deployment, Service or pod. Pods belong to a
// ReplicaSet, not to the application, so they are matched by the operator's app label.
func (c *Controller) enqueueOwner(obj interface{}) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	switch obj.(type) {
	case *cachedPod, *corev1.Pod:
		// A cluster's pods are controlled by its ReplicaSets; the label names the application or
		// session cluster, and the one in the cache is woken (with the jobs naming a session cluster
		// of that name). Waking both cost a new leader, which receives every pod as an add, a
		// pass per application that found no session cluster. An owner not in the cache yet gets
		// its first pass from its own add event. The cache holds cachedPods, tombstones included;
		// a whole pod is one only if a transform was skipped.
		if app := m.GetLabels()[k8.AppLabel]; app != "" {
			name := cache.ObjectName{Namespace: m.GetNamespace(), Name: app}
			if key := (queueKey{Kind: applicationKindName, ObjectName: name}); c.cached(key) {
				c.add(key)
			}
			c.enqueueSessionCluster(name, c.cached(queueKey{Kind: sessionClusterKindName, ObjectName: name}))
		}
		return
	}
	if ref := metav1.GetControllerOf(m); ref != nil {
		name := cache.ObjectName{Namespace: m.GetNamespace(), Name: ref.Name}
		switch ref.Kind {
		case applicationKindName:
			c.addOwn(queueKey{Kind: applicationKindName, ObjectName: name})
		case sessionClusterKindName:
			c.enqueueSessionCluster(name, true)
		}
	}
}

// enqueueSnapshotOwner wakes the FlinkApplication or FlinkSessionJob a FlinkSnapshot is of.
func (c *Controller) enqueueSnapshotOwner(obj interface{}) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if s, ok := obj.(*v1beta1.FlinkSnapshot); ok && (s.Spec.Owner.Kind == applicationKindName || s.Spec.Owner.Kind == sessionJobKindName) {
		c.addOwn(queueKey{Kind: s.Spec.Owner.Kind, ObjectName: cache.ObjectName{Namespace: s.Namespace, Name: s.Spec.Owner.Name}})
		if s.DeletionTimestamp != nil && c.env.inShard(s) {
			c.add(queueKey{Kind: snapshotKindName, ObjectName: cache.ObjectName{Namespace: s.Namespace, Name: s.Name}})
		}
	}
}

// snapshotChangeMatters tells whether an update of a FlinkSnapshot asks its owner for something:
// a spec change, a deletion, a finalizer gone.
func snapshotChangeMatters(old, new interface{}) bool {
	o, ok1 := old.(*v1beta1.FlinkSnapshot)
	n, ok2 := new.(*v1beta1.FlinkSnapshot)
	if !ok1 || !ok2 {
		return true
	}
	return o.Generation != n.Generation || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) ||
		len(o.Finalizers) != len(n.Finalizers)
}

// snapshotOwnerIndex indexes FlinkSnapshots by "<namespace>/<owner kind>/<owner name>".
const snapshotOwnerIndex = "snapshotOwner"

func snapshotOwnerOf(obj interface{}) ([]string, error) {
	if s, ok := obj.(*v1beta1.FlinkSnapshot); ok {
		return []string{snapshotOwnerKey(s.Namespace, s.Spec.Owner.Kind, s.Spec.Owner.Name)}, nil
	}
	return nil, nil
}

func snapshotOwnerKey(namespace, kind, name string) string {
	return namespace + "/" + kind + "/" + name
}

// enqueueHAOwner wakes the application or session cluster (whichever exists) whose cluster an HA
// ConfigMap belongs to.
func (c *Controller) enqueueHAOwner(obj interface{}) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if owner, _, ok := flink.HAConfigMapCluster(m); ok {
		name := cache.ObjectName{Namespace: m.GetNamespace(), Name: owner}
		c.addOwn(queueKey{Kind: applicationKindName, ObjectName: name})
		c.enqueueSessionCluster(name, true)
	}
}

// Run starts the informers and runs the loop until ctx ends, then drains it (loop.Run). The
// checkpoint book is written while the workers run and once more after they are drained: a leader
// that steps down leaves nothing its passes noted unwritten.
func (c *Controller) Run(ctx context.Context) error {
	for _, f := range c.factories {
		f.Start(ctx.Done())
	}
	for _, inf := range c.informers {
		go inf.RunWithContext(ctx)
	}
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
