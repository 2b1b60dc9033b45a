package watch

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	applisters "github.com/flinkfsm/flinkfsm/pkg/client/listers/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// Config is what the informers are wired with. The kinds' passes are not among it: an event maps
// to the objects to wake (Enqueue), and the operator's own status writes coming back are told
// apart by Echo.
type Config struct {
	Kube kubernetes.Interface
	Apps versioned.Interface
	// Namespaces are the watched namespaces; none for all.
	Namespaces []string
	// Shard selects, by their labels, the FlinkApplications, FlinkSessionClusters and
	// FlinkSessionJobs this operator owns; nil for all of them (shard.go).
	Shard labels.Selector
	// Recorder gets the Warning Event on an object that does not decode (itemwise.go).
	Recorder record.EventRecorder
	// Echo tells whether an update of an object of a kind the machine runs is only the operator's
	// own last status write coming back, which wakes nobody.
	Echo func(kind string, old, new metav1.Object) bool
	// Enqueue queues an object for a pass now.
	Enqueue func(kind, namespace, name string)
	// Synced adds an informer, under a name for the health report, to those that must sync before
	// any pass runs (loop.Loop.Watch).
	Synced func(name string, synced cache.InformerSynced)
	// BookPages, when set, caches the checkpoint book's pages; nil when the book is off.
	BookPages *BookPages
}

// BookPages are the checkpoint book's pages as their informer selects and keeps them (package
// checkpointbook: its Label and ForCache).
type BookPages struct {
	// Label selects the pages.
	Label string
	// ForCache is what the cache keeps of a page.
	ForCache func(*corev1.ConfigMap) *corev1.ConfigMap
}

// Watch holds the informers of the kinds the machine runs, and of the objects the operator owns,
// and maps their events to the objects to wake: objects the operator owns wake their owner, so
// waiting phases move as soon as a Deployment or pod changes instead of on a resync.
type Watch struct {
	cfg       Config
	factories []interface{ Start(<-chan struct{}) }
	// informers are those of the operator's own kinds, which no factory starts.
	informers []cache.SharedIndexInformer
	// jobIndexes are the FlinkSessionJob indexers by watched namespace ("" for all).
	jobIndexes map[string]cache.Indexer
	// ownIndexes are the caches of the kinds the machine runs, by watched namespace and kind: what
	// is in the operator's shard (shard.go).
	ownIndexes map[string]map[string]cache.Indexer
	// snapshotIndexes are the FlinkSnapshot indexers by watched namespace ("" for all).
	snapshotIndexes map[string]cache.Indexer
	listers         *Listers
}

// New wires informers for the configured namespaces (all when none are listed) to cfg.Enqueue.
// Nothing is listed or watched before Start.
func New(cfg Config) *Watch {
	w := &Watch{
		cfg:             cfg,
		jobIndexes:      map[string]cache.Indexer{},
		ownIndexes:      map[string]map[string]cache.Indexer{},
		snapshotIndexes: map[string]cache.Indexer{},
	}
	skipped := &undecodableReporter{recorder: cfg.Recorder}
	namespaces := cfg.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	obs := &Listers{byNamespace: map[string]*namespaceListers{}}
	for _, ns := range namespaces {
		// The operator's Deployments, Services and pods all carry its app label; selecting by it keeps
		// the namespace's other objects out of the cache and out of the operator's memory.
		kubeInf := kubeinformers.NewSharedInformerFactoryWithOptions(cfg.Kube, 0, kubeinformers.WithNamespace(ns),
			kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = k8.AppLabel }),
			kubeinformers.WithTransform(trimForCache))
		// Flink's HA ConfigMaps carry Flink's labels, not the operator's; they are cached by their
		// own label, and of their metadata only: their data changes at each checkpoint and their
		// leader annotation every few seconds, none of which the operator reads.
		haInf := kubeinformers.NewSharedInformerFactoryWithOptions(cfg.Kube, 0, kubeinformers.WithNamespace(ns),
			kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = flink.HAConfigMapSelector }),
			kubeinformers.WithTransform(haConfigMapMetadata))
		listers := w.watch(ns, kubeInf, haInf, skipped.report)
		w.factories = append(w.factories, kubeInf, haInf)
		if book := cfg.BookPages; book != nil {
			// The checkpoint book's pages, by their own label: read when a job's recorded checkpoint
			// is; their changes wake nobody.
			bookInf := kubeinformers.NewSharedInformerFactoryWithOptions(cfg.Kube, 0, kubeinformers.WithNamespace(ns),
				kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = book.Label }),
				kubeinformers.WithTransform(bookPageForCache(book.ForCache)))
			pages := bookInf.Core().V1().ConfigMaps().Informer()
			cfg.Synced("checkpoint book in "+namespaceWords(ns), pages.HasSynced)
			listers.bookPages = pages.GetIndexer()
			w.factories = append(w.factories, bookInf)
		}
		obs.byNamespace[ns] = listers
	}
	w.listers = obs
	return w
}

// Listers read from the caches: the Observer and SessionObserver of the operator.
func (w *Watch) Listers() *Listers { return w.listers }

// Start starts the informers; they run until ctx ends.
func (w *Watch) Start(ctx context.Context) {
	for _, f := range w.factories {
		f.Start(ctx.Done())
	}
	for _, inf := range w.informers {
		go inf.RunWithContext(ctx)
	}
}

// objectKey names an object of one of the operator's kinds, as the loop's queue keys do.
type objectKey struct {
	Kind string
	cache.ObjectName
}

// add queues an object for a pass now.
func (w *Watch) add(key objectKey) { w.cfg.Enqueue(key.Kind, key.Namespace, key.Name) }

// namespaceWords names a watched namespace in the health report's words.
func namespaceWords(ns string) string {
	if ns == metav1.NamespaceAll {
		return "all namespaces"
	}
	return "namespace " + ns
}

func (w *Watch) watch(ns string, kubeInf, haInf kubeinformers.SharedInformerFactory, skip skipFunc) *namespaceListers {
	byNamespace := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	// The kinds the machine runs are cached as far as the shard selects them; FlinkSnapshots all,
	// as a snapshot is in the shard of its owner, whatever its own labels (shard.go).
	shard := ShardSelector(w.cfg.Shard)
	apps := applicationResource.informer(w.cfg.Apps, ns, shard, byNamespace, skip)
	sessionClusters := sessionClusterResource.informer(w.cfg.Apps, ns, shard, byNamespace, skip)
	sessionJobs := sessionJobResource.informer(w.cfg.Apps, ns, shard,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, clusterIndex: sessionJobCluster}, skip)
	snapshots := snapshotResource.informer(w.cfg.Apps, ns, "", cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, snapshotOwnerIndex: snapshotOwnerOf}, skip)
	w.informers = append(w.informers, apps, sessionClusters, sessionJobs, snapshots)
	w.ownIndexes[ns] = map[string]cache.Indexer{v1beta1.FlinkApplicationKind: apps.GetIndexer(),
		v1beta1.FlinkSessionClusterKind: sessionClusters.GetIndexer(), v1beta1.FlinkSessionJobKind: sessionJobs.GetIndexer()}
	w.snapshotIndexes[ns] = snapshots.GetIndexer()
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
	}{{v1beta1.FlinkApplicationKind, apps}, {v1beta1.FlinkSessionClusterKind, sessionClusters}, {v1beta1.FlinkSessionJobKind, sessionJobs},
		{"Deployment", deploys.Informer()}, {"Service", services.Informer()}, {"Pod", pods.Informer()},
		{"Ingress", ingresses.Informer()}, {"ConfigMap", configMaps.Informer()}, {"HA ConfigMap", haConfigMaps},
		{v1beta1.FlinkSnapshotKind, snapshots}} {
		w.cfg.Synced(inf.kind+where, inf.inf.HasSynced)
	}
	jobIndex := sessionJobs.GetIndexer()
	w.jobIndexes[ns] = jobIndex
	// enqueue gets echo set for the update that is our own last status write coming back: the pass
	// that wrote it already asked for its next look, so the object itself is not queued again.
	onChange := func(kind string, enqueue func(obj interface{}, echo bool)) cache.ResourceEventHandlerFuncs {
		return cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj interface{}) { enqueue(obj, false) },
			UpdateFunc: func(old, new interface{}) {
				o, n := old.(metav1.Object), new.(metav1.Object)
				if o.GetResourceVersion() != n.GetResourceVersion() {
					enqueue(new, w.cfg.Echo(kind, o, n))
				}
			},
			DeleteFunc: func(obj interface{}) { enqueue(obj, false) },
		}
	}
	_, _ = apps.AddEventHandler(onChange(v1beta1.FlinkApplicationKind, func(obj interface{}, echo bool) {
		if !echo {
			w.enqueue(obj)
		}
	}))
	// A session cluster's changes wake its jobs; a job's wake its cluster, which lists its jobs
	// and holds its deletion while any is left.
	_, _ = sessionClusters.AddEventHandler(onChange(v1beta1.FlinkSessionClusterKind, func(obj interface{}, echo bool) {
		if name, ok := objectName(obj); ok {
			w.enqueueSessionCluster(name, !echo)
		}
	}))
	_, _ = sessionJobs.AddEventHandler(onChange(v1beta1.FlinkSessionJobKind, func(obj interface{}, echo bool) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if j, ok := obj.(*v1beta1.FlinkSessionJob); ok {
			if !echo {
				w.add(objectKey{Kind: v1beta1.FlinkSessionJobKind, ObjectName: cache.ObjectName{Namespace: j.Namespace, Name: j.Name}})
			}
			// A job that stopped decoding leaves the cache with its metadata only; its cluster
			// learns of it at its next poll.
			if j.Spec.ClusterName != "" {
				w.addOwn(objectKey{Kind: v1beta1.FlinkSessionClusterKind, ObjectName: cache.ObjectName{Namespace: j.Namespace, Name: j.Spec.ClusterName}})
			}
		}
	}))
	// A FlinkSnapshot wakes its owner when a user creates, changes or deletes it; the status the
	// owner's pass writes to it wakes nobody.
	_, _ = snapshots.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: w.enqueueSnapshotOwner,
		UpdateFunc: func(old, new interface{}) {
			if snapshotChangeMatters(old, new) {
				w.enqueueSnapshotOwner(new)
			}
		},
		DeleteFunc: w.enqueueSnapshotOwner,
	})
	owned := cache.ResourceEventHandlerFuncs{
		AddFunc:    w.enqueueOwner,
		UpdateFunc: func(_, new interface{}) { w.enqueueOwner(new) },
		DeleteFunc: w.enqueueOwner,
	}
	_, _ = deploys.Informer().AddEventHandler(owned)
	_, _ = services.Informer().AddEventHandler(owned)
	_, _ = ingresses.Informer().AddEventHandler(owned)
	_, _ = configMaps.Informer().AddEventHandler(owned)
	// A cluster's HA ConfigMaps appear when its JobManager starts and can outlive it; the pass that
	// removes them runs when one appears or goes. Their updates (leader renewals every few seconds,
	// checkpoints) say nothing the operator acts on.
	_, _ = haConfigMaps.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: w.enqueueHAOwner, DeleteFunc: w.enqueueHAOwner})
	_, _ = pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: w.enqueueOwner,
		UpdateFunc: func(old, new interface{}) {
			if clusters.PodChangeMatters(old, new) {
				w.enqueueOwner(new)
			}
		},
		DeleteFunc: w.enqueueOwner,
	})
	return &namespaceListers{apps: applisters.NewFlinkApplicationLister(apps.GetIndexer()),
		deploys: deploys.Informer().GetIndexer(), services: services.Informer().GetIndexer(), pods: pods.Informer().GetIndexer(),
		ingresses: ingresses.Informer().GetIndexer(), configMaps: configMaps.Informer().GetIndexer(),
		haConfigMaps: haConfigMaps.GetIndexer(), snapshots: snapshots.GetIndexer(),
		sessionClusters: applisters.NewFlinkSessionClusterLister(sessionClusters.GetIndexer()),
		sessionJobs:     applisters.NewFlinkSessionJobLister(jobIndex), sessionJobIndex: jobIndex}
}

func (w *Watch) enqueue(obj interface{}) {
	if name, ok := objectName(obj); ok {
		w.add(objectKey{Kind: v1beta1.FlinkApplicationKind, ObjectName: name})
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
func (w *Watch) enqueueSessionCluster(name cache.ObjectName, itself bool) {
	if itself {
		w.addOwn(objectKey{Kind: v1beta1.FlinkSessionClusterKind, ObjectName: name})
	}
	index := w.jobIndexes[name.Namespace]
	if index == nil {
		index = w.jobIndexes[metav1.NamespaceAll]
	}
	if index == nil {
		return
	}
	jobs, _ := index.ByIndex(clusterIndex, name.Namespace+"/"+name.Name)
	for _, obj := range jobs {
		if j, ok := obj.(*v1beta1.FlinkSessionJob); ok {
			w.add(objectKey{Kind: v1beta1.FlinkSessionJobKind, ObjectName: cache.ObjectName{Namespace: j.Namespace, Name: j.Name}})
		}
	}
}

// enqueueOwner finds the FlinkApplication behind a Deployment, Service or pod. Pods belong to a
// ReplicaSet, not to the application, so they are matched by the operator's app label.
func (w *Watch) enqueueOwner(obj interface{}) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	switch obj.(type) {
	case *clusters.CachedPod, *corev1.Pod:
		// A cluster's pods are controlled by its ReplicaSets; the label names the application or
		// session cluster, and the one in the cache is woken (with the jobs naming a session cluster
		// of that name). Waking both cost a new leader, which receives every pod as an add, a
		// pass per application that found no session cluster. An owner not in the cache yet gets
		// its first pass from its own add event. The cache holds cachedPods, tombstones included;
		// a whole pod is one only if a transform was skipped.
		if app := m.GetLabels()[k8.AppLabel]; app != "" {
			name := cache.ObjectName{Namespace: m.GetNamespace(), Name: app}
			if key := (objectKey{Kind: v1beta1.FlinkApplicationKind, ObjectName: name}); w.cached(key) {
				w.add(key)
			}
			w.enqueueSessionCluster(name, w.cached(objectKey{Kind: v1beta1.FlinkSessionClusterKind, ObjectName: name}))
		}
		return
	}
	if ref := metav1.GetControllerOf(m); ref != nil {
		name := cache.ObjectName{Namespace: m.GetNamespace(), Name: ref.Name}
		switch ref.Kind {
		case v1beta1.FlinkApplicationKind:
			w.addOwn(objectKey{Kind: v1beta1.FlinkApplicationKind, ObjectName: name})
		case v1beta1.FlinkSessionClusterKind:
			w.enqueueSessionCluster(name, true)
		}
	}
}

// enqueueSnapshotOwner wakes the FlinkApplication or FlinkSessionJob a FlinkSnapshot is of.
func (w *Watch) enqueueSnapshotOwner(obj interface{}) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if s, ok := obj.(*v1beta1.FlinkSnapshot); ok && (s.Spec.Owner.Kind == v1beta1.FlinkApplicationKind || s.Spec.Owner.Kind == v1beta1.FlinkSessionJobKind) {
		w.addOwn(objectKey{Kind: s.Spec.Owner.Kind, ObjectName: cache.ObjectName{Namespace: s.Namespace, Name: s.Spec.Owner.Name}})
		if s.DeletionTimestamp != nil && InShard(w.cfg.Shard, s) {
			w.add(objectKey{Kind: v1beta1.FlinkSnapshotKind, ObjectName: cache.ObjectName{Namespace: s.Namespace, Name: s.Name}})
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

// enqueueHAOwner wakes the application or session cluster (whichever exists) whose cluster an HA
// ConfigMap belongs to.
func (w *Watch) enqueueHAOwner(obj interface{}) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if owner, _, ok := flink.HAConfigMapCluster(m); ok {
		name := cache.ObjectName{Namespace: m.GetNamespace(), Name: owner}
		w.addOwn(objectKey{Kind: v1beta1.FlinkApplicationKind, ObjectName: name})
		w.enqueueSessionCluster(name, true)
	}
}

// addOwn queues an object of a kind the machine runs, woken by another object (its child, its
// FlinkSnapshot, one of its session jobs), only while it is in the shard: the caches hold exactly
// the shard's objects. An operator that owns everything queues it regardless, as it always did.
func (w *Watch) addOwn(key objectKey) {
	if w.cfg.Shard != nil && !w.cached(key) {
		return
	}
	w.add(key)
}

// cached tells whether the object is in the informer cache of its kind.
func (w *Watch) cached(key objectKey) bool {
	_, ok := w.Cached(key.Kind, key.Namespace, key.Name)
	return ok
}

// Cached is the object in the informer cache of its kind (one the machine runs), if it is there.
func (w *Watch) Cached(kind, namespace, name string) (interface{}, bool) {
	byKind := w.ownIndexes[namespace]
	if byKind == nil {
		byKind = w.ownIndexes[metav1.NamespaceAll]
	}
	index := byKind[kind]
	if index == nil {
		return nil, false
	}
	obj, exists, err := index.GetByKey(cache.ObjectName{Namespace: namespace, Name: name}.String())
	return obj, err == nil && exists
}

// SnapshotsWait tells whether a FlinkSnapshot of the object waits for its pass: one not answered
// yet, pending, changed since its answer or deleted.
func (w *Watch) SnapshotsWait(kind, namespace, name string) bool {
	index := w.snapshotIndexes[namespace]
	if index == nil {
		index = w.snapshotIndexes[metav1.NamespaceAll]
	}
	if index == nil {
		return false
	}
	objs, err := index.ByIndex(snapshotOwnerIndex, snapshotOwnerKey(namespace, kind, name))
	if err != nil {
		return true
	}
	for _, obj := range objs {
		s, ok := obj.(*v1beta1.FlinkSnapshot)
		if !ok {
			continue
		}
		if s.DeletionTimestamp != nil || s.Status.ObservedGeneration != s.Generation ||
			s.Status.State == "" || s.Status.State == v1beta1.StatePending {
			return true
		}
	}
	return false
}
