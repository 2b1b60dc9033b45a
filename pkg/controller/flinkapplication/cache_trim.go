package flinkapplication

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// trimForCache keeps what the operator never reads out of the caches, which are most of its
// memory: server-side apply's record of field ownership (about as large as the rest of an object's
// metadata and spec); of Deployments, their pod spec. Pods, which it only reads to explain a
// cluster that does not start (podProblem), count Ready (podReady) and follow a starting cluster
// (podProgress), are kept as those answers (cachedPod). A write of an object read from the cache
// leaves the stored managedFields alone (an update without them keeps them); pods are never
// written, Deployments only patched.
func trimForCache(obj interface{}) (interface{}, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		return podForCache(o), nil
	case *appsv1.Deployment:
		// The pod spec is what the operator rendered, and most of the object; it reads a
		// Deployment's replicas, labels, annotations and status, and changes it only by patches.
		o.Spec.Template.Spec = corev1.PodSpec{}
	}
	return obj, nil
}
