package flinkapplication

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// A LastState update whose JobManager's Deployment is deleted while the job is being cancelled:
// the job went with its JobManager, and no JobManager is left to ask for its checkpoints. The
// update goes on from the recorded state at once, as a recovery does, instead of asking the gone
// JobManager pass after pass until the phase gives up.
func TestACancelWhoseJobManagerIsDeletedGoesOnFromTheRecordedState(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.UpgradeMode = v1beta1.UpgradeModeLastState })
	w.passes("wc", 10)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	w.runUntilPhase("wc", v1beta1.PhaseCancelling)
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(),
		flink.JobManagerNameOf("wc", old.Status.DeployHash), metav1.DeleteOptions{}))
	w.passes("wc", 8)
	app := w.get("wc")
	for _, h := range app.Status.History {
		assert.NotEqual(t, v1beta1.PhaseRollingBack, h.To, "rolled back: %s", h.Reason)
	}
	app = w.runUntilPhase("wc", v1beta1.PhaseRunning)
	assert.Equal(t, "flink-wordcount:2", app.Spec.Image)
	assert.Contains(t, app.Status.JobStatus.RestorePath, "/chk-", "the new job starts from the recorded checkpoint")
}
