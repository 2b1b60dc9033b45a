package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// Attack review of c84e7a2: status.jobStatus.state is the deployed BlueGreen version's job's (A)
// while both versions run. A FAILED in DualRunning, and status showed FAILED. The new version (B)
// is then promoted: status.jobStatus.jobID becomes B's, but jobStatus.state keeps A's FAILED until
// a pass reads B with details (showJobAsSeen only clears it when the pass saw B stopped). B's
// JobManager restarts without HA at the promotion (leaderless, then knowing no job): B is lost with
// its checkpoints intact. The restore policy's new fallback (Restore.endedDiscarding) reads the
// stale FAILED as B's end, leaves out B's recorded checkpoints (NO_EXTERNALIZED_CHECKPOINTS
// discards at FAILED), and B starts again from the savepoint it started from: a rewind of
// everything B processed since.
func TestAPromotedVersionLostAtItsPromotionIsNotRewoundByTheDeployedJobsEnd(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	blueGreenSpec(&app.Spec)
	app.Spec.FlinkConfig[flink.CheckpointRetentionKey] = "NO_EXTERNALIZED_CHECKPOINTS"
	w.create(app)
	old := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.passes("wc", 10)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	dual := w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
	s, c := *dual.Status.Deployments.Stable, *dual.Status.Deployments.Candidate
	w.runUntil("wc", "a checkpoint of the new version's job recorded", func(a *v1beta1.FlinkApplication) bool {
		return ledger.Of(&a.Status.Ledger).Checkpoint(c.JobID) != nil
	})
	for end := w.clock.Now().Add(30 * time.Second); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, v1beta1.PhaseDualRunning, w.get("wc").Status.Phase)
	// The deployed version's job fails; the top-level job status shows it FAILED.
	require.True(t, w.jm(old, s.ClusterHash).FailJobNow(s.JobID))
	w.runUntil("wc", "the deployed job shown FAILED", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.State == v1beta1.JobFailed
	})
	recorded := ledger.Of(&w.get("wc").Status.Ledger).Checkpoint(c.JobID)
	require.NotNil(t, recorded)
	// The user promotes the new version (Promotion Auto does the same).
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.TearDownVersionHash = s.SpecHash })
	w.runUntilPhase("wc", v1beta1.PhaseTeardown)
	// The new version's JobManager restarts without HA: leaderless at the promotion pass, then
	// knowing no job.
	w.jm(old, c.ClusterHash).Restart()
	w.runUntil("wc", "the new version's job started again, or the application given up", func(a *v1beta1.FlinkApplication) bool {
		j, _, _ := firstRestoreAfter(w, "wc", c.JobID)
		return j.JobID != "" || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	got := w.get("wc")
	j, restored, ok := firstRestoreAfter(w, "wc", c.JobID)
	require.NotEmpty(t, j.JobID, "phase %s, reason %q", got.Status.Phase, got.Status.Reason)
	require.True(t, w.storage.Exists(recorded.Path), "B's recorded checkpoint %s is still in storage", recorded.Path)
	require.True(t, ok, "job %s started from %s, which exists", j.JobID, j.RestoredFrom)
	assert.Equal(t, c.JobID, restored.JobID, "job %s started from %s, not from job %s's own newest checkpoint (recorded %s, still in storage)",
		j.JobID, j.RestoredFrom, c.JobID, recorded.Path)
}
