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
)

// hostPathDeployments names the Deployments whose pods would mount a hostPath volume.
func (w *world) hostPathDeployments() []string {
	list, err := w.kube.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(w.t, err)
	var out []string
	for _, d := range list.Items {
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.HostPath != nil {
				out = append(out, d.Name)
			}
		}
	}
	return out
}

// A spec the pod policy refused creates nothing, by any path: a session cluster that rests in
// DeployFailed after refusing it puts back a deleted object of its running cluster from the spec
// that cluster was rendered from, never from the refused one.
func TestASpecThePolicyRefusedCreatesNothingWhenARunningClustersObjectIsRepaired(t *testing.T) {
	w := newWorld(t)
	w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	phase := func() v1beta1.FlinkSessionClusterPhase { return w.sessionCluster("session").Status.Phase }
	w.runSessionsUntil("running", func() bool { return phase() == v1beta1.SessionClusterRunning })
	running := w.sessionCluster("session").Status.DeployHash

	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) {
		c.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	})
	w.runSessionsUntil("deploy failed", func() bool { return phase() == v1beta1.SessionClusterDeployFailed })
	assert.Contains(t, w.sessionCluster("session").Status.Reason, "spec.volumes[0]: hostPath volume root is not allowed")

	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerNameOf("session", running), metav1.DeleteOptions{}))
	for i := 0; i < 20; i++ {
		w.reconcileSessions()
	}
	assert.Empty(t, w.hostPathDeployments(), "nothing is rendered from the refused spec")
	c := w.sessionCluster("session")
	assert.Equal(t, v1beta1.SessionClusterDeployFailed, c.Status.Phase)
	// The running cluster's JobManager is put back from the spec it was rendered from, which the
	// session cluster recorded (status.clusters), not from the refused one.
	assert.True(t, w.clusterOfOwnerExists("session", running), "the running cluster is repaired from its own spec")

	// A spec that passes puts the running cluster back, from the spec it runs.
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.Volumes = nil })
	w.runSessionsUntil("running again", func() bool {
		return phase() == v1beta1.SessionClusterRunning && w.clusterOfOwnerExists("session", running)
	})
	assert.Empty(t, w.hostPathDeployments())
}
