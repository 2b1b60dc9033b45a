package flinkapplication

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// trimForCache keeps what the operator never reads out of the caches, which are most of its
// memory: server-side apply's record of field ownership (about as large as the rest of an object's
// metadata and spec); of Deployments and Services, what a pass never reads (below). Pods, which it
// only reads to explain a cluster that does not start (podProblem), count Ready (podReady) and
// follow a starting cluster (podProgress), are kept as those answers (cachedPod). A write of an
// object read from the cache leaves the stored managedFields alone (an update without them keeps
// them); pods are never written, Deployments and Services only patched.
func trimForCache(obj interface{}) (interface{}, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		return podForCache(o), nil
	case *appsv1.Deployment:
		// The pod template is what the operator rendered, and most of the object; it reads a
		// Deployment's replicas, labels, its own annotation (flink.RetainedCheckpointsAnnotation)
		// and the replica counts of its status, and changes it only by patches. The selector,
		// strategy, the Deployment controller's conditions and revision annotation are a third of
		// what was left, for each of 20,000 Deployments at 10,000 applications.
		o.Spec.Template = corev1.PodTemplateSpec{}
		o.Spec.Selector, o.Spec.Strategy = nil, appsv1.DeploymentStrategy{}
		o.Status.Conditions = nil
		o.Annotations = onlyKey(o.Annotations, flink.RetainedCheckpointsAnnotation)
	case *corev1.Service:
		// Of a Service a pass reads its name, labels, owner and what decides where a call through it
		// lands (flink.JobManagerServiceProblem): its type, cluster IP, external name and selector.
		// Its ports, the list of its cluster IPs and the API server's other defaults are half of the rest.
		o.Spec = corev1.ServiceSpec{Type: o.Spec.Type, ClusterIP: o.Spec.ClusterIP, ExternalName: o.Spec.ExternalName,
			Selector: o.Spec.Selector}
	}
	return obj, nil
}

// onlyKey is m with key alone, nil when m does not have it.
func onlyKey(m map[string]string, key string) map[string]string {
	v, ok := m[key]
	if !ok {
		return nil
	}
	if len(m) == 1 {
		return m
	}
	return map[string]string{key: v}
}
