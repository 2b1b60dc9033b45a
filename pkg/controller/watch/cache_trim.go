package watch

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// trimForCache keeps what the operator never reads out of the caches, which are most of its
// memory: server-side apply's record of field ownership (about as large as the rest of an object's
// metadata and spec); of Deployments, Services and ConfigMaps, what a pass never reads (below).
// Pods, which it only reads to explain a cluster that does not start (clusters.PodProblem), count Ready
// (clusters.PodReady) and follow a starting cluster (clusters.PodProgress), are kept as those answers (clusters.CachedPod). A
// write of an object read from the cache leaves the stored managedFields alone (an update without
// them keeps them); pods are never written, Deployments and Services only patched.
//
// The Deployments, Services and ConfigMaps are in the tenant's namespace, and whoever may edit
// them there may write into them as much as the API server takes (a ConfigMap's 1 MiB of data,
// 256 KiB of annotations, any number of labels, owner references and finalizers) while keeping the
// label the informer selects on. Each is kept as what a pass reads of it (keepOwnMetadata, and the
// few fields of its spec below), which is bounded whatever the tenant writes: under 2 KiB in JSON.
func trimForCache(obj interface{}) (interface{}, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		return clusters.PodForCache(o), nil
	case *appsv1.Deployment:
		// The pod template is what the operator rendered, and most of the object; it reads a
		// Deployment's replicas, labels, its own annotations (flink.RetainedCheckpointsAnnotation,
		// flink.CheckpointRetentionAnnotation)
		// and the replica counts of its status, and changes it only by patches. The selector,
		// strategy, the Deployment controller's conditions and revision annotation are a third of
		// what was left, for each of 20,000 Deployments at 10,000 applications.
		keepOwnMetadata(&o.ObjectMeta, flink.RetainedCheckpointsAnnotation, flink.CheckpointRetentionAnnotation)
		o.Spec.Template = corev1.PodTemplateSpec{}
		o.Spec.Selector, o.Spec.Strategy = nil, appsv1.DeploymentStrategy{}
		o.Status.Conditions = nil
	case *corev1.Service:
		// Of a Service a pass reads its name, labels, owner and what decides where a call through it
		// lands (flink.JobManagerServiceProblem): its type, external name and selector. Its ports,
		// cluster IPs and the API server's other defaults are half of the rest.
		keepOwnMetadata(&o.ObjectMeta)
		o.Spec = corev1.ServiceSpec{Type: o.Spec.Type, ExternalName: o.Spec.ExternalName, Selector: ownSelector(o.Spec.Selector)}
	case *corev1.ConfigMap:
		// The operator's ConfigMaps (a cluster's logging configuration) are read for their name,
		// labels and owner (clusters.Group); their data is what it rendered, and goes to the pods.
		keepOwnMetadata(&o.ObjectMeta)
		o.Data, o.BinaryData, o.Immutable = nil, nil, nil
	}
	return obj, nil
}

// ownLabels are the labels a pass reads of the objects the operator creates: which application and
// cluster they belong to, which component, which BlueGreen colour.
var ownLabels = [...]string{k8.AppLabel, k8.HashLabel, k8.ComponentLabel, flink.VersionLabel}

// maxAnnotationKept bounds the value of each annotation a pass reads of an object (a count, or a
// checkpoint retention policy of at most 27 characters): a longer one cannot be what the operator
// wrote, and is not kept.
const maxAnnotationKept = 32

// keepOwnMetadata keeps of an object's metadata what a pass reads: its name, namespace, UID,
// resourceVersion, generation and deletion timestamp, the operator's labels (ownLabels), its
// controller (the owner a pass checks, k8.IsControlledByName), and the annotations named, if any.
// The rest is for other readers: other labels and annotations, other owners, finalizers.
func keepOwnMetadata(m *metav1.ObjectMeta, annotations ...string) {
	m.Labels = onlyKeys(m.Labels, ownLabels[:]...)
	m.Annotations = onlyKeys(m.Annotations, annotations...)
	for k, v := range m.Annotations {
		if len(v) > maxAnnotationKept {
			delete(m.Annotations, k)
		}
	}
	if len(m.Annotations) == 0 {
		m.Annotations = nil
	}
	if ref := metav1.GetControllerOfNoCopy(m); ref != nil {
		if len(m.OwnerReferences) > 1 {
			m.OwnerReferences = []metav1.OwnerReference{*ref}
		}
	} else {
		m.OwnerReferences = nil
	}
	m.Finalizers, m.ManagedFields = nil, nil
}

// ownSelector is a Service's selector as a pass needs it: the operator's own (keys of ownLabels)
// as it is, any other as a one-entry stand-in that equals no selector the operator renders, so that
// a selector of a thousand keys costs no more than one.
func ownSelector(selector map[string]string) map[string]string {
	for k := range selector {
		if !isOwnLabel(k) {
			return map[string]string{foreignSelector: strconv.Itoa(len(selector))}
		}
	}
	return selector
}

// foreignSelector stands, in the cache, for a selector with keys the operator does not set; its
// value counts them.
const foreignSelector = "flinkfsm.io/not-the-operators-selector"

func isOwnLabel(key string) bool {
	for _, k := range ownLabels {
		if k == key {
			return true
		}
	}
	return false
}

// onlyKeys is m with the keys given alone, nil when it has none of them. An empty key keeps none.
func onlyKeys(m map[string]string, keys ...string) map[string]string {
	n := 0
	for _, k := range keys {
		if _, ok := m[k]; ok && k != "" {
			n++
		}
	}
	switch {
	case n == 0:
		return nil
	case n == len(m):
		return m
	}
	out := make(map[string]string, n)
	for _, k := range keys {
		if v, ok := m[k]; ok && k != "" {
			out[k] = v
		}
	}
	return out
}

// haConfigMapMetadata keeps of an HA ConfigMap what tells whose it is: its name, to delete it
// (clusters.DeleteHAConfigMaps), and the three labels flink.HAConfigMapCluster reads. Its data changes at each
// checkpoint and its leader annotation every few seconds, none of which the operator reads; and
// whoever may write ConfigMaps in the namespace may write one with these labels as large as the
// API server takes. Each costs the cache its name and three label values (63 bytes each at most).
func haConfigMapMetadata(obj interface{}) (interface{}, error) {
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace, UID: cm.UID,
			ResourceVersion: cm.ResourceVersion,
			Labels:          onlyKeys(cm.Labels, flink.FlinkObjectLabel, flink.HAConfigMapTypeLabel, flink.HAClusterIDLabel)}}, nil
	}
	return obj, nil
}

// bookPageForCache keeps of a ConfigMap labelled as a page of the checkpoint book what the book
// reads of it (BookPages.ForCache: checkpointbook.ForCache).
func bookPageForCache(forCache func(*corev1.ConfigMap) *corev1.ConfigMap) cache.TransformFunc {
	return func(obj interface{}) (interface{}, error) {
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			return forCache(cm), nil
		}
		return obj, nil
	}
}
