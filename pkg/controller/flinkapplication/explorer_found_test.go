package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Defects the randomized explorer (explorer_test.go) found in issue 55, each reduced to a world
// test of its own; the comment names the seeds that found it.

// A JobManager that answers GET /jobs/:id with errors for minutes while its job checkpoints on
// (explorer seeds 1 and 18) leaves the operator's record of the job's newest checkpoint as old as
// the errors: the checkpoints are read from their own endpoint, which still answers, and recorded
// as due. Lost with its JobManager without HA, the job starts again from a checkpoint that still
// exists, not from one Flink subsumed minutes before.
func TestAJobWhoseStatusIsUnreadableStillHasItsCheckpointsRecorded(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jobID := app.Status.JobStatus.JobID
	w.jm(app, app.Status.DeployHash).SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointJob: 1}})
	end := w.clock.Now().Add(5 * time.Minute)
	for w.clock.Now().Before(end) {
		_, _ = w.reconcile("wc")
	}
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(app, app.Status.DeployHash), metav1.DeleteOptions{}))
	again := w.runUntil("wc", "running again", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != jobID && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	restored, ok := w.storage.Get(again.Status.JobStatus.RestorePath)
	require.True(t, ok, "restored from %q, which exists", again.Status.JobStatus.RestorePath)
	assert.Equal(t, jobID, restored.JobID)
}
