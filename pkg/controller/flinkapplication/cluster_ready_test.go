package flinkapplication

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// readyPods adds n Ready pods of a cluster's component, as its ReplicaSet and kubelet would.
func (w *world) readyPods(app *v1beta1.FlinkApplication, hash, component string, n int) {
	for i := range n {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%s-%d", app.Name, hash, component, i), Namespace: ns,
				Labels: map[string]string{k8.AppLabel: app.Name, k8.HashLabel: hash, k8.ComponentLabel: component}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}
		_, err := w.kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
		require.NoError(w.t, err)
	}
}

// A Deployment reports its pods available only after the ReplicaSet and Deployment controllers
// have each caught up, a second or more after the pods are Ready on a busy control plane. A cluster
// whose pods are Ready and whose JobManager reports the task slots takes its job without waiting.
func TestAClusterWhosePodsAreReadyTakesItsJobBeforeItsDeploymentsSaySo(t *testing.T) {
	w := newWorld(t)
	app := w.create(wordcount("wc"))
	hash := flink.ClusterHash(app)
	for _, name := range []string{flink.JobManagerName(app, hash), flink.TaskManagerName(app, hash)} {
		w.notReady[name] = true // the Deployments' status still says 0 ready
	}
	_, err := w.reconcile("wc")
	require.NoError(t, err)
	require.Equal(t, v1beta1.PhaseClusterStarting, w.get("wc").Status.Phase)

	w.readyPods(app, hash, flink.JobManagerComponent, 1)
	w.readyPods(app, hash, flink.TaskManagerComponent, int(flink.TaskManagerReplicas(app)))
	for range 3 {
		_, err := w.reconcile("wc")
		require.NoError(t, err)
	}
	got := w.get("wc")
	require.NotEmpty(t, w.jm(app, hash).Jobs(), "the job was submitted: reason %q", got.Status.Reason)
	assert.Equal(t, got.Status.JobStatus.JobID, w.jm(app, hash).Jobs()[0].ID, "under the job id written ahead")
}

// The pods' readiness counts only with every TaskManager: a cluster short of one waits, even though
// its JobManager answers with enough slots (the simulated one counts the Deployment's replicas).
func TestAClusterShortOfATaskManagerPodKeepsStarting(t *testing.T) {
	w := newWorld(t)
	app := w.create(wordcount("wc"))
	hash := flink.ClusterHash(app)
	for _, name := range []string{flink.JobManagerName(app, hash), flink.TaskManagerName(app, hash)} {
		w.notReady[name] = true
	}
	w.readyPods(app, hash, flink.JobManagerComponent, 1)
	w.readyPods(app, hash, flink.TaskManagerComponent, int(flink.TaskManagerReplicas(app))-1)
	for range 3 {
		_, err := w.reconcile("wc")
		require.NoError(t, err)
	}
	assert.Equal(t, v1beta1.PhaseClusterStarting, w.get("wc").Status.Phase)
	assert.Empty(t, w.jm(app, hash).Jobs(), "nothing was submitted")
}
