package clusters

import (
	corev1 "k8s.io/api/core/v1"
)

// A cluster's pods start in steps that Kubernetes takes one after another, each behind a queue of
// its own: the ReplicaSet controller creates a pod, the scheduler binds it, the kubelet runs it and
// it turns Ready. On a control plane starting thousands of clusters at once each of those queues is
// minutes long (2,000 clusters at once on the test machine took Kubernetes alone 335 s), so a
// deadline over the whole phase failed clusters that were about to start. A starting cluster's
// deadline bounds the time it goes without a new step instead, as a Deployment's
// progressDeadlineSeconds does. A cluster that cannot start (unschedulable, an image that cannot
// be pulled, a crash loop) takes no new step and fails as before, with its cause.
//
// What counts as a step is bounded, so that pods coming and going cannot pass for progress: a pod
// that is on its way out or has ended (an evicted pod stays, Failed, until it is collected) counts
// none, and a component counts at most four steps for each pod its Deployment asks for, whatever
// pods carry its labels (a tenant may create some). A replacement pod retakes the steps its
// predecessor took, which are no progress: a JobManager evicted every two minutes keeps its cluster
// from no deadline. So a cluster of P pods makes at most 4·P steps, and its start is bounded from
// when it began (status.phaseStartedAt, which an operator that restarts reads back) by
// clusterStartTimeout for each of them and once more (fsm.BoundOfStart), whatever the memory of the
// last step, which a restart loses, says.

// StepsPerPod are the steps a pod takes: created, scheduled, running, Ready.
const StepsPerPod = 4

// PodProgress is how many of those steps the pod has taken; a pod on its way out, or one that
// ended, counts none.
func PodProgress(p *corev1.Pod) int {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return 0
	}
	steps := 1
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			steps++
		}
	}
	if p.Status.Phase == corev1.PodRunning {
		steps++
	}
	if PodReady(p) {
		steps++
	}
	return steps
}

// Steps are the steps a starting cluster took and the most it can take.
type Steps struct{ Taken, Most int }

// Steps are the steps the cluster took in starting and the most it can take; none for a cluster
// not found.
func (c *Objects) Steps() Steps {
	if c == nil {
		return Steps{}
	}
	return Steps{Taken: c.Progress, Most: c.MostProgress}
}

// countSteps sets the cluster's Progress from its pods' steps by component, each component's
// capped at what its Deployment's pods can take, and MostProgress to the cluster's total of those.
func (c *Objects) countSteps() {
	jm, tm := 0, 0
	if c.JobManager != nil {
		jm = StepsPerPod * int(max(Replicas(c.JobManager), 0))
	}
	if c.TaskManager != nil {
		tm = StepsPerPod * int(max(Replicas(c.TaskManager), 0))
	}
	c.Progress, c.MostProgress = min(c.jobManagerSteps, jm)+min(c.taskManagerSteps, tm), jm+tm
}
