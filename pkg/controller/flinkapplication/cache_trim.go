package flinkapplication

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// trimForCache keeps what the operator never reads out of the caches, which are most of its
// memory: server-side apply's record of field ownership (about as large as the rest of an object's
// metadata and spec), and of pods, which it only reads to explain a cluster that does not start
// (podProblem), count Ready (podReady) and follow a starting cluster (podProgress), the spec, the
// annotations and all of the status but what those read; of Deployments, their pod spec. A write
// of an object read from the cache leaves the stored managedFields alone (an update without them
// keeps them); pods are never written, Deployments only patched.
func trimForCache(obj interface{}) (interface{}, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		o.Spec, o.Annotations, o.Status = corev1.PodSpec{}, nil, podStatusForCache(o.Status)
	case *appsv1.Deployment:
		// The pod spec is what the operator rendered, and most of the object; it reads a
		// Deployment's replicas, labels, annotations and status, and changes it only by patches.
		o.Spec.Template.Spec = corev1.PodSpec{}
	}
	return obj, nil
}

// podStatusForCache is what podReady, podProblem and podProgress read of a pod's status: its phase,
// its conditions and,
// of each container, why it waits, its restarts and its last exit. The rest (images, IDs, IPs,
// times, resources, volume mounts) was a sixth of the operator's heap at 1,000 applications.
func podStatusForCache(s corev1.PodStatus) corev1.PodStatus {
	containers := func(in []corev1.ContainerStatus) []corev1.ContainerStatus {
		if len(in) == 0 {
			return nil
		}
		out := make([]corev1.ContainerStatus, len(in))
		for i, c := range in {
			out[i] = corev1.ContainerStatus{Name: c.Name, Ready: c.Ready, RestartCount: c.RestartCount,
				State: corev1.ContainerState{Waiting: c.State.Waiting}}
			if t := c.LastTerminationState.Terminated; t != nil {
				// Not its message: a container may leave up to 4 KiB there.
				out[i].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Reason: t.Reason}
			}
		}
		return out
	}
	conditions := make([]corev1.PodCondition, len(s.Conditions))
	for i, c := range s.Conditions {
		conditions[i] = corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
	}
	return corev1.PodStatus{Phase: s.Phase, Conditions: conditions,
		InitContainerStatuses: containers(s.InitContainerStatuses), ContainerStatuses: containers(s.ContainerStatuses)}
}
