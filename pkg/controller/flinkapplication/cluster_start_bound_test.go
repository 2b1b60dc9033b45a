package flinkapplication

import (
	"context"
	"fmt"
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

// startedPod creates a pod of the cluster that took the first steps of starting: created,
// scheduled, running, and Ready if ready.
func (w *world) startedPod(owner, hash, component, name string, ready bool) {
	status := corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}}
	if ready {
		status.Conditions = append(status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	}
	_, err := w.kube.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
		Labels: map[string]string{k8.AppLabel: owner, k8.HashLabel: hash, k8.ComponentLabel: component}}, Status: status}, metav1.CreateOptions{})
	require.NoError(w.t, err)
}

// evictPod does to a pod what the kubelet does to one it evicts: it fails, and stays until the pod
// garbage collector gets to it.
func (w *world) evictPod(name string) {
	p, err := w.kube.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(w.t, err)
	p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", "The node was low on resource: ephemeral-storage."
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	_, err = w.kube.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
	require.NoError(w.t, err)
}

// A JobManager pod evicted every two minutes, its ReplicaSet starting another each time, is not
// a cluster on its way up: its new pods take the steps the evicted ones took, which are no
// progress. The start fails by the usual path (a first deploy ends in DeployFailed with its
// cause) within clusterStartTimeout of its last real step, not never.
func TestAJobManagerEvictedEveryTwoMinutesFailsItsStartInTime(t *testing.T) {
	w := newWorld(t)
	app := w.create(wordcount("wc"))
	hash := flink.ClusterHash(app)
	w.broken[flink.JobManagerName(app, hash)], w.broken[flink.TaskManagerName(app, hash)] = true, true
	w.runUntilPhase("wc", v1beta1.PhaseClusterStarting)
	started := w.clock.Now()
	timeout := w.env.Config.ClusterStartTimeout.Duration
	for i := 0; i < 2; i++ {
		w.startedPod("wc", hash, flink.TaskManagerComponent, fmt.Sprintf("wc-%s-tm-%d", hash, i), true)
	}
	for i := 0; w.clock.Now().Sub(started) < 6*timeout; i++ {
		jm := fmt.Sprintf("wc-%s-jm-%d", hash, i)
		w.startedPod("wc", hash, flink.JobManagerComponent, jm, false)
		w.runFor("wc", 2*time.Minute)
		if w.get("wc").Status.Phase != v1beta1.PhaseClusterStarting {
			break
		}
		w.evictPod(jm)
	}
	failed := w.get("wc")
	require.Equal(t, v1beta1.PhaseDeployFailed, failed.Status.Phase, "after %s: %s", w.clock.Now().Sub(started), failed.Status.Reason)
	assert.Contains(t, failed.Status.Reason, "ClusterStarting did not complete")
	assert.Contains(t, failed.Status.Reason, "failed (Evicted): The node was low on resource", "the cause")
	assert.Less(t, w.clock.Now().Sub(started), 2*timeout, "within the deadline of its last real step")
}

// The start's deadline runs from when it began, as status says (phaseStartedAt), so an operator
// that restarts, and does not count the time before its first pass against a deadline, still
// ends a start that never gets anywhere: at the most the start's steps could have earned it.
func TestAStartThatNeverGetsAnywhereFailsThoughTheOperatorRestarts(t *testing.T) {
	w := newWorld(t)
	app := w.create(wordcount("wc"))
	hash := flink.ClusterHash(app)
	w.broken[flink.JobManagerName(app, hash)], w.broken[flink.TaskManagerName(app, hash)] = true, true
	w.runUntilPhase("wc", v1beta1.PhaseClusterStarting)
	started := w.get("wc").Status.PhaseStartedAt.Time
	timeout := w.env.Config.ClusterStartTimeout.Duration
	// One JobManager and two TaskManagers: four steps each, each worth a deadline, and one more.
	most := 13 * timeout
	for w.clock.Now().Sub(started) < most+10*time.Minute && w.get("wc").Status.Phase == v1beta1.PhaseClusterStarting {
		w.runFor("wc", timeout*4/5)
		w.restartOperator()
	}
	failed := w.get("wc")
	require.Equal(t, v1beta1.PhaseDeployFailed, failed.Status.Phase, "after %s: %s", w.clock.Now().Sub(started), failed.Status.Reason)
	assert.GreaterOrEqual(t, w.clock.Now().Sub(started), most)
	assert.Contains(t, failed.Status.Reason, "of its start")
}
