package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A redeploy by savepointRedeployNonce whose named savepoint cannot be restored rolls back to the
// previous job's state (the savepoint its stop took), never to the named savepoint again; the
// previous spec's job runs again, and the reason names the named savepoint as what failed.
func TestAFailedRedeployRollsBackToThePreviousJobsStateNotTheNamedSavepoint(t *testing.T) {
	w := newWorld(t)
	before := running(t, w, "wc")
	const named = "file:///checkpoints/savepoints/savepoint-000000-gone"
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = named, "1"
	})
	got := w.runUntil("wc", "rolled back", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	w.passes("wc", 10)
	got = w.get("wc")
	stop := ""
	for _, e := range got.Status.Ledger {
		if e.JobID == before.Status.JobStatus.JobID && e.Result == v1beta1.StateCompleted && e.Purpose == v1beta1.SavepointUpgrade {
			stop = e.Path
		}
	}
	require.NotEmpty(t, stop, "the update stopped the running job with a savepoint: %+v", got.Status.Ledger)
	assert.Equal(t, v1beta1.PhaseDeployFailed, got.Status.Phase)
	assert.NotEmpty(t, got.Status.JobStatus.JobID, "the previous spec's job runs again")
	assert.Equal(t, v1beta1.JobRunning, got.Status.JobStatus.State)
	assert.Equal(t, stop, got.Status.JobStatus.RestorePath, "from the state the previous job left")
	assert.NotEqual(t, named, got.Status.Deployments.NextRestorePath)
	assert.Contains(t, got.Status.Reason, "savepoint-000000-gone", "what failed: the named savepoint")
	assert.Contains(t, got.Status.Reason, stop, "what the previous job restarted from")
}
