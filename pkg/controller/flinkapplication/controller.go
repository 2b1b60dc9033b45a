package flinkapplication

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	appinformers "github.com/flinkfsm/flinkfsm/pkg/client/informers/externalversions"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// Controller is sample-controller's loop around the state machine: informers feed a rate-limited
// workqueue, and objects the operator owns enqueue their FlinkApplication, so waiting phases move
// as soon as a Deployment or pod changes instead of on a resync.
type Controller struct {
	env       *Environment
	queue     workqueue.TypedRateLimitingInterface[queueKey]
	synced    []cache.InformerSynced
	factories []interface{ Start(<-chan struct{}) }
	workers   int
	// jobIndexes are the FlinkSessionJob indexers by watched namespace ("" for all).
	jobIndexes map[string]cache.Indexer
}

// NewController wires informers for the configured namespaces (all when none are listed) to the queue.
func NewController(env *Environment) *Controller {
	c := &Controller{
		env: env,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[queueKey](),
			workqueue.TypedRateLimitingQueueConfig[queueKey]{Name: "flinkapplications"}),
		workers:    env.Config.Workers,
		jobIndexes: map[string]cache.Indexer{},
	}
	namespaces := env.Config.Namespaces()
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	obs := &listerObserver{byNamespace: map[string]*namespaceListers{}}
	for _, ns := range namespaces {
		// The operator's Deployments, Services and pods all carry its app label; selecting by it keeps
		// the namespace's other objects out of the cache and out of the operator's memory.
		kubeInf := kubeinformers.NewSharedInformerFactoryWithOptions(env.Kube, 0, kubeinformers.WithNamespace(ns),
			kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = k8.AppLabel }))
		appInf := appinformers.NewSharedInformerFactoryWithOptions(env.Apps, 0, appinformers.WithNamespace(ns))
		obs.byNamespace[ns] = c.watch(ns, kubeInf, appInf)
		c.factories = append(c.factories, kubeInf, appInf)
	}
	env.Observer, env.Sessions = obs, obs
	return c
}

// queueKey names an object of one of the kinds the controller reconciles.
type queueKey struct {
	Kind string
	cache.ObjectName
}

func (k queueKey) String() string { return k.Kind + " " + k.ObjectName.String() }

// clusterIndex indexes FlinkSessionJobs by the FlinkSessionCluster they name, so that a change of a
// session cluster wakes its jobs at once.
const clusterIndex = "sessionCluster"

func sessionJobCluster(obj interface{}) ([]string, error) {
	if j, ok := obj.(*v1beta1.FlinkSessionJob); ok {
		return []string{j.Namespace + "/" + j.Spec.ClusterName}, nil
	}
	return nil, nil
}

func (c *Controller) watch(ns string, kubeInf kubeinformers.SharedInformerFactory, appInf appinformers.SharedInformerFactory) *namespaceListers {
	apps := appInf.Flink().V1beta1().FlinkApplications()
	sessionClusters := appInf.Flink().V1beta1().FlinkSessionClusters()
	sessionJobs := appInf.Flink().V1beta1().FlinkSessionJobs()
	_ = sessionJobs.Informer().AddIndexers(cache.Indexers{clusterIndex: sessionJobCluster})
	deploys := kubeInf.Apps().V1().Deployments()
	services := kubeInf.Core().V1().Services()
	pods := kubeInf.Core().V1().Pods()
	c.synced = append(c.synced, apps.Informer().HasSynced, deploys.Informer().HasSynced,
		services.Informer().HasSynced, pods.Informer().HasSynced,
		sessionClusters.Informer().HasSynced, sessionJobs.Informer().HasSynced)
	jobIndex := sessionJobs.Informer().GetIndexer()
	c.jobIndexes[ns] = jobIndex
	onChange := func(enqueue func(obj interface{})) cache.ResourceEventHandlerFuncs {
		return cache.ResourceEventHandlerFuncs{
			AddFunc: enqueue,
			UpdateFunc: func(old, new interface{}) {
				if old.(metav1.Object).GetResourceVersion() != new.(metav1.Object).GetResourceVersion() {
					enqueue(new)
				}
			},
			DeleteFunc: enqueue,
		}
	}
	_, _ = apps.Informer().AddEventHandler(onChange(c.enqueue))
	// A session cluster's changes wake its jobs; a job's wake its cluster, which lists its jobs
	// and holds its deletion while any is left.
	_, _ = sessionClusters.Informer().AddEventHandler(onChange(func(obj interface{}) {
		if name, ok := objectName(obj); ok {
			c.enqueueSessionCluster(name)
		}
	}))
	_, _ = sessionJobs.Informer().AddEventHandler(onChange(func(obj interface{}) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if j, ok := obj.(*v1beta1.FlinkSessionJob); ok {
			c.queue.Add(queueKey{sessionJobKindName, cache.ObjectName{Namespace: j.Namespace, Name: j.Name}})
			c.queue.Add(queueKey{sessionClusterKindName, cache.ObjectName{Namespace: j.Namespace, Name: j.Spec.ClusterName}})
		}
	}))
	owned := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOwner,
		UpdateFunc: func(_, new interface{}) { c.enqueueOwner(new) },
		DeleteFunc: c.enqueueOwner,
	}
	_, _ = deploys.Informer().AddEventHandler(owned)
	_, _ = services.Informer().AddEventHandler(owned)
	_, _ = pods.Informer().AddEventHandler(owned)
	return &namespaceListers{apps: apps.Lister(), deploys: deploys.Lister(), services: services.Lister(), pods: pods.Lister(),
		sessionClusters: sessionClusters.Lister(), sessionJobs: sessionJobs.Lister(), sessionJobIndex: jobIndex}
}

func (c *Controller) enqueue(obj interface{}) {
	if name, ok := objectName(obj); ok {
		c.queue.Add(queueKey{applicationKindName, name})
	}
}

func objectName(obj interface{}) (cache.ObjectName, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	name, err := cache.ObjectToName(obj)
	return name, err == nil
}

// enqueueSessionCluster queues a session cluster and every job that names it.
func (c *Controller) enqueueSessionCluster(name cache.ObjectName) {
	c.queue.Add(queueKey{sessionClusterKindName, name})
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
			c.queue.Add(queueKey{sessionJobKindName, cache.ObjectName{Namespace: j.Namespace, Name: j.Name}})
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
	if ref := metav1.GetControllerOf(m); ref != nil {
		name := cache.ObjectName{Namespace: m.GetNamespace(), Name: ref.Name}
		switch ref.Kind {
		case applicationKindName:
			c.queue.Add(queueKey{applicationKindName, name})
		case sessionClusterKindName:
			c.enqueueSessionCluster(name)
		}
		return
	}
	if _, isPod := obj.(*corev1.Pod); isPod {
		// The label names the application or session cluster; both are woken, one of them is gone at once.
		if app := m.GetLabels()[k8.AppLabel]; app != "" {
			name := cache.ObjectName{Namespace: m.GetNamespace(), Name: app}
			c.queue.Add(queueKey{applicationKindName, name})
			c.enqueueSessionCluster(name)
		}
	}
}

// Run waits for the caches and works the queue until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	for _, f := range c.factories {
		f.Start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return fmt.Errorf("caches did not sync")
	}
	for i := 0; i < c.workers; i++ {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.processNextWorkItem(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	after, err := c.reconcileSafely(ctx, key)
	if err != nil {
		klog.FromContext(ctx).Error(err, "reconcile failed", "object", key.String())
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	if after > 0 {
		c.queue.AddAfter(key, after)
	}
	return true
}

// reconcileSafely turns a panic in one application's reconcile into an error for that application.
func (c *Controller) reconcileSafely(ctx context.Context, key queueKey) (after time.Duration, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic reconciling %s: %v", key, r)
		}
	}()
	switch key.Kind {
	case sessionJobKindName:
		return c.env.ReconcileSessionJob(ctx, key.Namespace, key.Name)
	case sessionClusterKindName:
		return c.env.ReconcileSessionCluster(ctx, key.Namespace, key.Name)
	}
	return c.env.Reconcile(ctx, key.Namespace, key.Name)
}
