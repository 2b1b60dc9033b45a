package clusters

import (
	"fmt"
	"iter"

	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// PodProblem says why a pod of a cluster does not run, in the words of Kubernetes: the scheduler's
// reason for an unschedulable pod, the reason an image cannot be pulled, a crash loop's last exit.
// A cluster that never starts then fails with its cause instead of only "did not complete in time".
func PodProblem(p *corev1.Pod) string {
	role := "pod"
	if c := p.Labels[k8.ComponentLabel]; c != "" {
		role = c + " pod"
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return fmt.Sprintf("%s %s is unschedulable: %s", role, p.Name, client.Excerpt(c.Message))
		}
	}
	if p.Status.Phase == corev1.PodFailed && p.DeletionTimestamp == nil {
		// An evicted pod stays, Failed, beside the one its ReplicaSet starts instead.
		return fmt.Sprintf("%s %s failed (%s): %s", role, p.Name, client.Excerpt(p.Status.Reason), client.Excerpt(p.Status.Message))
	}
	// Every pass asks this of every pod of the application: the two lists are read in place, not
	// copied into one.
	for s := range containerStatuses(p) {
		if w := s.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError":
				return fmt.Sprintf("%s %s: %s: %s", role, p.Name, w.Reason, client.Excerpt(w.Message))
			case "CrashLoopBackOff":
				msg := fmt.Sprintf("%s %s is crash-looping (%d restarts)", role, p.Name, s.RestartCount)
				if t := s.LastTerminationState.Terminated; t != nil {
					msg += fmt.Sprintf(", last exit %d (%s)", t.ExitCode, t.Reason)
				}
				return msg
			}
		}
	}
	return ""
}

// PodChangeMatters tells whether a pod's update changes what a pass reads of it: whether it is
// Ready, what keeps it from running, whether it is on its way out, and the labels that tie it to a
// cluster. A pod changes three or four times on its way to Ready (bound to a node, started,
// containers ready); passes for the others only took workers from applications that had work.
func PodChangeMatters(old, new interface{}) bool {
	o, ok1 := old.(*CachedPod)
	n, ok2 := new.(*CachedPod)
	if !ok1 || !ok2 {
		return true
	}
	return o.Ready != n.Ready || o.Problem != n.Problem || o.Terminating() != n.Terminating() ||
		o.Labels[k8.AppLabel] != n.Labels[k8.AppLabel] || o.Labels[k8.HashLabel] != n.Labels[k8.HashLabel] ||
		o.Labels[k8.ComponentLabel] != n.Labels[k8.ComponentLabel]
}

// containerStatuses yields the pod's init containers' statuses, then its containers'.
func containerStatuses(p *corev1.Pod) iter.Seq[*corev1.ContainerStatus] {
	return func(yield func(*corev1.ContainerStatus) bool) {
		for _, list := range [2][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for i := range list {
				if !yield(&list[i]) {
					return
				}
			}
		}
	}
}
