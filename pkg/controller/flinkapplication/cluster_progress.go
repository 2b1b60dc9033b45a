package flinkapplication

import (
	"sync"
	"time"

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

// podProgress is how many of those steps the pod has taken; a pod on its way out counts none.
func podProgress(p *corev1.Pod) int {
	if p.DeletionTimestamp != nil {
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
	if podReady(p) {
		steps++
	}
	return steps
}

// startingClusterProgress is the progress of the cluster an application's deployment starts.
func startingClusterProgress(rc *Context) int {
	return rc.Clusters[targetCluster(&rc.App.Status.JobOwnerStatus)].progress()
}

// sessionClusterProgress is the progress of the cluster a session cluster's new spec starts.
func sessionClusterProgress(rc *Context) int {
	return rc.Clusters[rc.Hash].progress()
}

func (c *ClusterObjects) progress() int {
	if c == nil {
		return 0
	}
	return c.Progress
}

// progressMemory remembers, for each object in a phase whose deadline follows progress, the most
// steps seen in this visit of the phase and when they were first seen. It is only memory: an
// operator that restarts starts again from the phase's start, and the time before its first pass
// does not count against a deadline anyway (activity).
type progressMemory struct {
	mu   sync.Mutex
	seen map[string]progressSeen
}

type progressSeen struct {
	// phaseStarted tells one visit of the phase from the next; status keeps it to the second.
	phaseStarted int64
	most         int
	at           time.Time
}

// since is when the object's phase last made progress: the first pass that saw more steps than any
// before it in this visit, or the phase's start.
func (m *progressMemory) since(key string, phaseStarted, now time.Time, steps int) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]progressSeen{}
	}
	s, ok := m.seen[key]
	switch {
	case !ok || s.phaseStarted != phaseStarted.Unix():
		s = progressSeen{phaseStarted: phaseStarted.Unix(), most: steps, at: phaseStarted}
	case steps > s.most:
		s.most, s.at = steps, now
	}
	m.seen[key] = s
	return s.at
}

func (m *progressMemory) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.seen, key)
}
