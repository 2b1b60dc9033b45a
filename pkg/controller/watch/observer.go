package watch

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	applisters "github.com/flinkfsm/flinkfsm/pkg/client/listers/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// Observer reads an application and the objects it owns, normally from informer caches.
type Observer interface {
	Application(namespace, name string) (*v1beta1.FlinkApplication, error)
	// Owned returns the owner's clusters by hash and its generic Service (nil if absent).
	Owned(owner flink.ClusterOwner) (map[string]*clusters.Objects, *corev1.Service, error)
	// UIIngress returns the application's Flink UI Ingress (nil if absent).
	UIIngress(app *v1beta1.FlinkApplication) (*networkingv1.Ingress, error)
	// HAConfigMaps names the ConfigMaps of Flink's Kubernetes HA services that the owner's clusters
	// left, by cluster hash (nil if none).
	HAConfigMaps(namespace, owner string) (map[string][]string, error)
	// CheckpointBookPage is the page of the checkpoint book of that name (package checkpointbook),
	// nil if there is none.
	CheckpointBookPage(namespace, name string) (*corev1.ConfigMap, error)
	// Snapshots are the FlinkSnapshots whose spec.owner is the object of this kind.
	Snapshots(namespace, kind, owner string) ([]*v1beta1.FlinkSnapshot, error)
	// Snapshot is the FlinkSnapshot of that name.
	Snapshot(namespace, name string) (*v1beta1.FlinkSnapshot, error)
	// SnapshotsIn lists the FlinkSnapshots of a namespace.
	SnapshotsIn(namespace string) ([]*v1beta1.FlinkSnapshot, error)
	// ApplicationsIn lists the FlinkApplications of a namespace.
	ApplicationsIn(namespace string) ([]*v1beta1.FlinkApplication, error)
}

// SessionObserver reads session clusters and session jobs, normally from informer caches.
type SessionObserver interface {
	SessionCluster(namespace, name string) (*v1beta1.FlinkSessionCluster, error)
	SessionJob(namespace, name string) (*v1beta1.FlinkSessionJob, error)
	// SessionJobsOf lists the FlinkSessionJobs that name the cluster.
	SessionJobsOf(namespace, cluster string) ([]*v1beta1.FlinkSessionJob, error)
	// SessionJobsIn lists the FlinkSessionJobs of a namespace.
	SessionJobsIn(namespace string) ([]*v1beta1.FlinkSessionJob, error)
	// SessionClustersIn lists the FlinkSessionClusters of a namespace.
	SessionClustersIn(namespace string) ([]*v1beta1.FlinkSessionCluster, error)
}

// The informers' caches of one watched namespace ("" for all).
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

// Listers read the kinds the machine runs and the objects they own from the informers' caches:
// they are the Observer and the SessionObserver of a running operator.
type Listers struct {
	byNamespace map[string]*namespaceListers
}

func (o *Listers) listers(namespace string) (*namespaceListers, error) {
	if l, ok := o.byNamespace[namespace]; ok {
		return l, nil
	}
	if l, ok := o.byNamespace[""]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("namespace %s is not watched", namespace)
}

func (o *Listers) Application(namespace, name string) (*v1beta1.FlinkApplication, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	return l.apps.FlinkApplications(namespace).Get(name)
}

func (o *Listers) ApplicationsIn(namespace string) ([]*v1beta1.FlinkApplication, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	return l.apps.FlinkApplications(namespace).List(labels.Everything())
}

func (o *Listers) SessionJobsIn(namespace string) ([]*v1beta1.FlinkSessionJob, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	return l.sessionJobs.FlinkSessionJobs(namespace).List(labels.Everything())
}

func (o *Listers) SessionClustersIn(namespace string) ([]*v1beta1.FlinkSessionCluster, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	return l.sessionClusters.FlinkSessionClusters(namespace).List(labels.Everything())
}

// UIIngress is the Flink UI's Ingress of the application, nil when it has none: the Ingress named
// after it that it controls.
func (o *Listers) UIIngress(app *v1beta1.FlinkApplication) (*networkingv1.Ingress, error) {
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

func (o *Listers) SessionCluster(namespace, name string) (*v1beta1.FlinkSessionCluster, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	return l.sessionClusters.FlinkSessionClusters(namespace).Get(name)
}

func (o *Listers) SessionJob(namespace, name string) (*v1beta1.FlinkSessionJob, error) {
	l, err := o.listers(namespace)
	if err != nil {
		return nil, err
	}
	return l.sessionJobs.FlinkSessionJobs(namespace).Get(name)
}

func (o *Listers) SessionJobsOf(namespace, cluster string) ([]*v1beta1.FlinkSessionJob, error) {
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

func (o *Listers) Owned(owner flink.ClusterOwner) (map[string]*clusters.Objects, *corev1.Service, error) {
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
	pods, err := indexed[*clusters.CachedPod](l.pods, key)
	if err != nil {
		return nil, nil, err
	}
	configMaps, err := indexed[*corev1.ConfigMap](l.configMaps, key)
	if err != nil {
		return nil, nil, err
	}
	owned, generic := clusters.Group(owner, deploys, services, pods, configMaps)
	return owned, generic, nil
}

// HAConfigMaps names the HA ConfigMaps of the owner's clusters, by cluster hash.
func (o *Listers) HAConfigMaps(namespace, owner string) (map[string][]string, error) {
	l, err := o.listers(namespace)
	if err != nil || l.haConfigMaps == nil {
		return nil, err
	}
	objs, err := l.haConfigMaps.ByIndex(haOwnerIndex, namespace+"/"+owner)
	if err != nil {
		return nil, err
	}
	return HAConfigMapsByHash(objs), nil
}

// CheckpointBookPage is the checkpoint book's page of that name, nil if there is none.
func (o *Listers) CheckpointBookPage(namespace, name string) (*corev1.ConfigMap, error) {
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
func (o *Listers) Snapshots(namespace, kind, owner string) ([]*v1beta1.FlinkSnapshot, error) {
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
func (o *Listers) SnapshotsIn(namespace string) ([]*v1beta1.FlinkSnapshot, error) {
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
func (o *Listers) Snapshot(namespace, name string) (*v1beta1.FlinkSnapshot, error) {
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

// HAConfigMapsByHash groups HA ConfigMaps by the hash of the cluster they belong to.
func HAConfigMapsByHash(objs []interface{}) map[string][]string {
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
