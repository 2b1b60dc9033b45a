package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// A job truly FAILED under NO_EXTERNALIZED_CHECKPOINTS, Flink discarded its checkpoints and the
// operator marked them. A JobManager that then answers that the job is RUNNING with the marked
// checkpoint not discarded (the mirror of the lie of the first attack review) took the mark back
// for good, though the checkpoints were gone from storage: restarted without HA, the job was sent
// from the recorded checkpoint Flink discarded (second attack review of the discard record). The
// answer now only disputes the mark: nothing is sent from the checkpoint, nor from older state.
func TestAJobManagersWordThatAFailedJobRunsOnlyDisputesTheDiscard(t *testing.T) {
	w := newWorld(t)
	lies := w.lyingJobManagers("RUNNING", false)
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig[flink.CheckpointRetentionKey] = "NO_EXTERNALIZED_CHECKPOINTS"
	})
	saved := manualSavepoint(t, w, "wc", "n1")
	w.runFor("wc", 3*time.Minute)
	jobID := w.get("wc").Status.JobStatus.JobID
	recorded, _ := w.recordedCheckpointAt("wc")
	require.NotEmpty(t, recorded)
	jm := w.jm(app, app.Status.DeployHash)
	require.True(t, jm.FailJobNow(jobID))
	w.runUntil("wc", "the job shown FAILED and marked", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.State == v1beta1.JobFailed && discardMarked(a, jobID)
	})
	require.False(t, w.storage.Exists(recorded), "Flink discarded %s as the job failed", recorded)
	lies.job.Store(jobID)
	lies.lie.Store(true)
	w.runFor("wc", 30*time.Second)
	t.Logf("marked during the lie: %v; state %s", discardMarked(w.get("wc"), jobID), w.get("wc").Status.JobStatus.State)
	// The JobManager restarts (without HA) before it tells the truth again.
	jm.Crash()
	lies.lie.Store(false)
	j, exists := w.restartFailedJob("wc", jobID)
	got := w.get("wc")
	logJobs(t, w, "wc")
	t.Logf("phase %s reason %q", got.Status.Phase, got.Status.Reason)
	t.Logf("marked at the end: %v", discardMarked(got, jobID))
	if j.JobID == "" {
		// Which word was true only storage can say: the user names the state to start from.
		assert.Equal(t, v1beta1.PhaseDeployFailed, got.Status.Phase)
		assert.Contains(t, got.Status.Reason, "only its storage can say")
		return
	}
	assert.True(t, exists, "job %s started from %s, which Flink discarded", j.JobID, j.RestoredFrom)
	assert.Equal(t, saved, j.RestoredFrom, "what is left of the job's state")
}
