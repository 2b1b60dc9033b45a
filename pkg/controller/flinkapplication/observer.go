package flinkapplication

import (
	"fmt"

	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	applisters "github.com/flinkfsm/flinkfsm/pkg/client/listers/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

type namespaceListers struct {
	apps applisters.FlinkApplicationLister
	// The operator's Deployments, Services, pods, UI Ingresses and logging ConfigMaps, indexed by
	// appIndex.
	deploys, services, pods, ingresses, configMaps cache.Indexer
	// haConfigMaps are the ConfigMaps of Flink's Kubernetes HA services, metadata only, indexed by
	// haOwnerIndex.
	haConfigMaps cache.Indexer
	// snapshots are the FlinkSnapshots, indexed by snapshotOwnerIndex.
	snapshots cache.Indexer
	// bookPages are the checkpoint book's pages; nil when the book is off.
	bookPages cache.Indexer

	sessionClusters applisters.FlinkSessionClusterLister
	sessionJobs     applisters.FlinkSessionJobLister
	sessionJobIndex cache.Indexer
}

// listerObserver reads applications and their objects from the informer caches.
type listerObserver struct {
	byNamespace map[string]*namespaceListers
}

func (o *listerObserver) listers(namespace string) (*namespaceListers, error) {
	if l, ok := o.byNamespace[namespace]; ok {
		return l, nil
	}
	if l, ok := o.byNamespace[""]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("namespace %s is not watched", namespace)
}

func (o *listerObserver) Application(namespace, name string) (*v1beta1.FlinkApplication, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	return l.apps.FlinkApplications(namespace).Get(name)
}

func (o *listerObserver) ApplicationsIn(namespace string) ([]*v1beta1.FlinkApplication, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	return l.apps.FlinkApplications(namespace).List(labels.Everything())
}

func (o *listerObserver) SessionJobsIn(namespace string) ([]*v1beta1.FlinkSessionJob, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	return l.sessionJobs.FlinkSessionJobs(namespace).List(labels.Everything())
}

// UIIngress is the Flink UI's Ingress of the application, nil when it has none: the Ingress named
// after it that it controls.
func (o *listerObserver) UIIngress(app *v1beta1.FlinkApplication) (*networkingv1.Ingress, error) {
	l, err := o.listers(app.Namespace)
	if err != nil {
		return nil, err
	}
	ingresses, err := indexed[*networkingv1.Ingress](l.ingresses, app.Namespace+"/"+app.Name)
	if err != nil {
		return nil, err
	}
	owner := flink.OwnerFromApplication(app)
	for _, ing := range ingresses {
		if ing.Name == flink.GenericServiceNameOf(app.Name) && owner.IsOwnerOf(ing) {
			return ing, nil
		}
	}
	return nil, nil
}

func (o *listerObserver) SessionCluster(namespace, name string) (*v1beta1.FlinkSessionCluster, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	return l.sessionClusters.FlinkSessionClusters(namespace).Get(name)
}

func (o *listerObserver) SessionJob(namespace, name string) (*v1beta1.FlinkSessionJob, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	return l.sessionJobs.FlinkSessionJobs(namespace).Get(name)
}

func (o *listerObserver) SessionJobsOf(namespace, cluster string) ([]*v1beta1.FlinkSessionJob, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	objs, err := l.sessionJobIndex.ByIndex(clusterIndex, namespace+"/"+cluster)
	if err != nil {
		return nil, err
	}
	var out []*v1beta1.FlinkSessionJob
	for _, obj := range objs {
		if j, ok := obj.(*v1beta1.FlinkSessionJob); ok {
			out = append(out, j)
		}
	}
	return out, nil
}

func (o *listerObserver) Owned(owner flink.ClusterOwner) (map[string]*ClusterObjects, *corev1.Service, error) {
	l, err := o.listers(owner.Namespace)
	if err != nil {
		return nil, nil, err
	}
	key := owner.Namespace + "/" + owner.Name
	deploys, err := indexed[*appsv1.Deployment](l.deploys, key)
	if err != nil {
		return nil, nil, err
	}
	services, err := indexed[*corev1.Service](l.services, key)
	if err != nil {
		return nil, nil, err
	}
	pods, err := indexed[*cachedPod](l.pods, key)
	if err != nil {
		return nil, nil, err
	}
	configMaps, err := indexed[*corev1.ConfigMap](l.configMaps, key)
	if err != nil {
		return nil, nil, err
	}
	owned, generic := groupOwned(owner, deploys, services, pods, configMaps)
	return owned, generic, nil
}

// HAConfigMaps names the HA ConfigMaps of the owner's clusters, by cluster hash.
func (o *listerObserver) HAConfigMaps(namespace, owner string) (map[string][]string, error) {
	l, err := o.listers(namespace)
	if err != nil || l.haConfigMaps == nil {
		return nil, err
	}
	objs, err := l.haConfigMaps.ByIndex(haOwnerIndex, namespace+"/"+owner)
	if err != nil {
		return nil, err
	}
	return haConfigMapsByHash(objs), nil
}

// CheckpointBookPage is the checkpoint book's page of that name, nil if there is none.
func (o *listerObserver) CheckpointBookPage(namespace, name string) (*corev1.ConfigMap, error) {
	l, err := o.listers(namespace)
	if err != nil || l.bookPages == nil {
		return nil, err
	}
	obj, ok, err := l.bookPages.GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, err
	}
	page, _ := obj.(*corev1.ConfigMap)
	return page, nil
}

// Snapshots are the FlinkSnapshots of the owner of this kind.
func (o *listerObserver) Snapshots(namespace, kind, owner string) ([]*v1beta1.FlinkSnapshot, error) {
	l, err := o.listers(namespace)
	if err != nil || l.snapshots == nil {
		return nil, err
	}
	objs, err := l.snapshots.ByIndex(snapshotOwnerIndex, snapshotOwnerKey(namespace, kind, owner))
	if err != nil {
		return nil, err
	}
	out := make([]*v1beta1.FlinkSnapshot, 0, len(objs))
	for _, obj := range objs {
		if s, ok := obj.(*v1beta1.FlinkSnapshot); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// SnapshotsIn lists the FlinkSnapshots of a namespace.
func (o *listerObserver) SnapshotsIn(namespace string) ([]*v1beta1.FlinkSnapshot, error) {
	l, err := o.listers(namespace)
	if err != nil || l.snapshots == nil {
		return nil, err
	}
	objs, err := l.snapshots.ByIndex(cache.NamespaceIndex, namespace)
	if err != nil {
		return nil, err
	}
	out := make([]*v1beta1.FlinkSnapshot, 0, len(objs))
	for _, obj := range objs {
		if s, ok := obj.(*v1beta1.FlinkSnapshot); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// Snapshot is the FlinkSnapshot of that name.
func (o *listerObserver) Snapshot(namespace, name string) (*v1beta1.FlinkSnapshot, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	if l.snapshots == nil {
		return nil, apierrors.NewNotFound(v1beta1.Resource("flinksnapshots"), name)
	}
	obj, exists, err := l.snapshots.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apierrors.NewNotFound(v1beta1.Resource("flinksnapshots"), name)
	}
	s, _ := obj.(*v1beta1.FlinkSnapshot)
	return s, nil
}

// haConfigMapsByHash groups HA ConfigMaps by the hash of the cluster they belong to.
func haConfigMapsByHash(objs []interface{}) map[string][]string {
	var out map[string][]string
	for _, obj := range objs {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		if _, hash, ok := flink.HAConfigMapCluster(cm); ok {
			if out == nil {
				out = map[string][]string{}
			}
			out[hash] = append(out[hash], cm.Name)
		}
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

// indexed is what an informer's appIndex holds under key, as objects of type T.
func indexed[T any](index cache.Indexer, key string) ([]T, error) {
	objs, err := index.ByIndex(appIndex, key)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(objs))
	for _, obj := range objs {
		if t, ok := obj.(T); ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// groupOwned sorts the application's Deployments and Services into clusters by hash, counts each
// cluster's pods, and finds its generic Service (clusters.Group).
func groupOwned(owner flink.ClusterOwner, deploys []*appsv1.Deployment, services []*corev1.Service, pods []*cachedPod,
	configMaps []*corev1.ConfigMap) (map[string]*ClusterObjects, *corev1.Service) {
	return clusters.Group(owner, deploys, services, pods, configMaps)
}
