package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// podSteps plays, one call at a time, what Kubernetes does to start a pod of the cluster: create
// it, bind it to a node, run it, and report it Ready.
func (w *world) podSteps(owner, hash, component string) []func() {
	ctx := context.Background()
	pods := w.kube.CoreV1().Pods(ns)
	name := owner + "-" + hash + "-" + component + "-0"
	change := func(edit func(s *corev1.PodStatus)) func() {
		return func() {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			require.NoError(w.t, err)
			edit(&p.Status)
			_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
			require.NoError(w.t, err)
		}
	}
	return []func(){
		func() {
			_, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
				Labels: map[string]string{k8.AppLabel: owner, k8.HashLabel: hash, k8.ComponentLabel: component}},
				Status: corev1.PodStatus{Phase: corev1.PodPending}}, metav1.CreateOptions{})
			require.NoError(w.t, err)
		},
		change(func(s *corev1.PodStatus) {
			s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		}),
		change(func(s *corev1.PodStatus) { s.Phase = corev1.PodRunning }),
		change(func(s *corev1.PodStatus) {
			s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
		}),
	}
}

// On a control plane starting thousands of clusters, Kubernetes takes a cluster's steps minutes
// apart: 2,000 at once on the test machine took it 335 s in all. A cluster that keeps taking steps
// is not failing, however long its whole start takes; a first deploy must not end in DeployFailed
// for it.
func TestAClusterKubernetesIsStillStartingStepByStepIsNotFailed(t *testing.T) {
	w := newWorld(t)
	app := w.create(wordcount("wc"))
	hash := flink.ClusterHash(app)
	jm, tm := flink.JobManagerName(app, hash), flink.TaskManagerName(app, hash)
	w.broken[jm], w.broken[tm] = true, true
	w.runUntilPhase("wc", v1beta1.PhaseClusterStarting)

	timeout := w.env.Config.ClusterStartTimeout.Duration
	steps := append(w.podSteps(app.Name, hash, flink.JobManagerComponent), w.podSteps(app.Name, hash, flink.TaskManagerComponent)...)
	for i, step := range steps {
		// Each step comes within the deadline of the one before; all of them take 6.4 times it.
		w.runFor("wc", timeout*4/5)
		require.Equal(t, v1beta1.PhaseClusterStarting, w.get("wc").Status.Phase, "before step %d: %s", i+1, w.get("wc").Status.Reason)
		step()
	}
	delete(w.broken, jm)
	delete(w.broken, tm)
	done := w.runUntil("wc", "Running or failed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	assert.Equal(t, v1beta1.PhaseRunning, done.Status.Phase, done.Status.Reason)
}

// The deadline still ends a cluster that stops starting: it runs from the last step Kubernetes
// took, not from the phase's start, and says so.
func TestAStartingClusterThatStopsTakingStepsFailsADeadlineAfterTheLastOne(t *testing.T) {
	w := newWorld(t)
	app := w.create(wordcount("wc"))
	hash := flink.ClusterHash(app)
	w.broken[flink.JobManagerName(app, hash)], w.broken[flink.TaskManagerName(app, hash)] = true, true
	w.runUntilPhase("wc", v1beta1.PhaseClusterStarting)
	timeout := w.env.Config.ClusterStartTimeout.Duration

	w.runFor("wc", timeout*4/5)
	steps := w.podSteps(app.Name, hash, flink.JobManagerComponent)
	steps[0]()
	steps[1]() // scheduled, then never runs: a volume that cannot be mounted, say
	last := w.clock.Now()
	failed := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	failedAfter := w.clock.Now().Sub(last)
	assert.GreaterOrEqual(t, failedAfter, timeout, "not before the deadline from the last step")
	assert.Less(t, failedAfter, timeout+10*time.Second, "soon after it")
	assert.Contains(t, failed.Status.Reason, "ClusterStarting did not complete within 5m0s without progress")
}

// A session cluster's new cluster is started the same way, and judged the same way.
func TestASessionClusterKubernetesIsStillStartingStepByStepIsNotFailed(t *testing.T) {
	w := newWorld(t)
	w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	hash := flink.SessionClusterHash(w.sessionCluster("session"))
	jm, tm := flink.JobManagerNameOf("session", hash), flink.TaskManagerNameOf("session", hash)
	w.broken[jm], w.broken[tm] = true, true
	phase := func() v1beta1.FlinkSessionClusterPhase { return w.sessionCluster("session").Status.Phase }
	w.runSessionsUntil("ClusterStarting", func() bool { return phase() == v1beta1.SessionClusterStarting })

	timeout := w.env.Config.ClusterStartTimeout.Duration
	for i, step := range append(w.podSteps("session", hash, flink.JobManagerComponent), w.podSteps("session", hash, flink.TaskManagerComponent)...) {
		end := w.clock.Now().Add(timeout * 4 / 5)
		w.runSessionsUntil("a step's wait", func() bool { return !w.clock.Now().Before(end) })
		require.Equal(t, v1beta1.SessionClusterStarting, phase(), "before step %d: %s", i+1, w.sessionCluster("session").Status.Reason)
		step()
	}
	delete(w.broken, jm)
	delete(w.broken, tm)
	w.runSessionsUntil("Running or failed", func() bool {
		return phase() == v1beta1.SessionClusterRunning || phase() == v1beta1.SessionClusterDeployFailed
	})
	assert.Equal(t, v1beta1.SessionClusterRunning, phase(), w.sessionCluster("session").Status.Reason)
}
