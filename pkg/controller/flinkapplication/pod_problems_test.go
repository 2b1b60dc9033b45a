package flinkapplication

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// A cluster that never starts fails with its cause, read from its pods, not with a bare timeout.
func TestAClusterThatNeverStartsSaysWhy(t *testing.T) {
	for _, c := range []struct {
		name   string
		status corev1.PodStatus
		want   string
	}{
		{"unschedulable", corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient memory."}}},
			"jobmanager pod wc-jm-0 is unschedulable: 0/3 nodes are available: 3 Insufficient memory."},
		{"image pull", corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "flink-wordcount:1"`}}}}},
			`ImagePullBackOff: Back-off pulling image "flink-wordcount:1"`},
		{"crash loop", corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{RestartCount: 5,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}},
			"is crash-looping (5 restarts), last exit 137 (OOMKilled)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			app := w.create(wordcount("wc"))
			hash := flink.ClusterHash(app)
			w.broken[flink.JobManagerName(app, hash)] = true
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "wc-jm-0", Namespace: ns, Labels: map[string]string{
				k8.AppLabel: "wc", k8.HashLabel: hash, k8.ComponentLabel: flink.JobManagerComponent}}, Status: c.status}
			_, err := w.kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
			require.NoError(t, err)
			w.runUntil("wc", "ClusterStarting", func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == v1beta1.PhaseClusterStarting })
			w.passes("wc", 3)
			assert.Contains(t, w.get("wc").Status.Reason, c.want, "said while waiting")
			failed := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
			assert.Contains(t, failed.Status.Reason, "did not complete within")
			assert.Contains(t, failed.Status.Reason, c.want, "the cause, not only the timeout")
		})
	}
}
