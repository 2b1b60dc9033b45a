package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Attack review s9 (deployedJobOver, LastState); failed on f74b4bd. A BlueGreen LastState update
// starts the new version from the deployed job's newest checkpoint (startBeside), chosen while that
// job runs. The job goes on completing checkpoints (num-retained keeps them) and FAILS before the
// new version's job is sent: the case deployedJobOver was written for. It asks chooseRestore, which
// records Flink's newest checkpoint of the job into the ledger (jobstate.Job.RecordFlinksCheckpoint, one
// checkpoint entry per job) — overwriting the very entry that dated the path chosen before — and
// then reads ledger.TimeOf(next), which is now zero, so it changes nothing. (When startBeside's
// checkpoint was never recorded in the ledger at all, TimeOf is zero from the start.) Harm: the new
// version's job starts from a checkpoint older than the newest one Flink completed for the job it
// replaces.
func TestABlueGreenLastStateVersionWhoseDeployedJobFailsBeforeItIsSentStartsFromItsNewestCheckpoint(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		blueGreenSpec(s)
		s.UpgradeMode = v1beta1.UpgradeModeLastState
		s.BlueGreen = &v1beta1.BlueGreenSpec{LastStateFrom: v1beta1.LastStateFromCheckpoint}
		s.FlinkConfig["state.checkpoints.num-retained"] = "20"
	})
	deployed := old.Status.JobStatus.JobID
	require.NotEmpty(t, deployed)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	sub := w.runUntilPhase("wc", v1beta1.PhaseSubmitting)
	chosen := sub.Status.Deployments.NextRestorePath
	require.Contains(t, chosen, deployed+"/chk-", "LastState starts the new version from the deployed job's checkpoint")
	// The deployed job completes further checkpoints, then fails, before the new version's job is sent.
	w.clock.Step(35 * time.Second)
	require.True(t, w.jm(old, old.Status.DeployHash).FailJobNow(deployed))
	w.clock.Step(5 * time.Second) // FAILING, then FAILED: the job is over before the next pass
	newest := newestCheckpointInStorage(w, deployed)
	require.NotEqual(t, chosen, newest, "the deployed job completed newer checkpoints")
	dual := w.runUntil("wc", "the new version's job sent", func(a *v1beta1.FlinkApplication) bool {
		c := a.Status.Deployments.Candidate
		return c != nil && c.SubmittedAt != nil || a.Status.Phase == v1beta1.PhaseDualRunning || a.Status.Phase == v1beta1.PhaseRunning
	})
	c := dual.Status.Deployments.Candidate
	var from string
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		if c != nil && j.JobID == c.JobID {
			from = j.RestoredFrom
		}
	}
	t.Logf("chosen at startBeside %s; newest of the failed job %s; restored from %s; ledger %+v", chosen, newest, from, dual.Status.Ledger)
	assert.Equal(t, newest, from, "the new version replaced the failed job %s and went back behind its newest checkpoint", deployed)
}

// Attack review s9 (discardedWithVersion dated the gone checkpoint by the survivor's start); failed
// on f74b4bd. A BlueGreen application with Flink HA, restartFailedJob and fallbackWithoutState,
// retention DELETE_ON_CANCELLATION. The savepoint for the new version fails, so its job Y starts
// from the deployed job X's newest checkpoint p (recoverBeside). Y completes a checkpoint of its
// own (c). Y's JobManager then fails over: HA recovers Y from c, and Flink reports Y's start-time
// as the recovery, after c. The deployed version is torn down (savepoint with cancel: CANCELED),
// and Flink discards X's checkpoints, p with them: discardedWithVersion records p gone, and, p not
// being in the ledger (X's one checkpoint entry moved on), dates it by Y's start-time ("which only
// orders it before that job's own checkpoints" - not after a failover). When Y then FAILS before
// its next checkpoint, the restore policy takes p, dated after c, for Y's newest state; it is gone,
// so with fallbackWithoutState the job starts WITHOUT STATE while Y's own checkpoint c is in
// storage.
func TestATornDownVersionsCheckpointIsDatedBeforeTheSurvivorsOwnCheckpointAfterAFailover(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		blueGreenSpec(s)
		s.RestartFailedJob, s.FallbackWithoutState = true, true
		s.FlinkConfig["high-availability.type"] = "kubernetes"
		s.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/ha"
		s.FlinkConfig[flink.CheckpointRetentionKey] = "DELETE_ON_CANCELLATION"
		s.FlinkConfig["state.checkpoints.num-retained"] = "100"
	})
	x := old.Status.JobStatus.JobID
	xjm := w.jm(old, old.Status.DeployHash)
	xjm.SetFaults(flinksim.Faults{FailSavepoints: true})
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.Image = "flink-wordcount:2"
		a.Spec.FlinkConfig["execution.checkpointing.interval"] = "3m"
	})
	dual := w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
	xjm.SetFaults(flinksim.Faults{})
	yRec := dual.Status.Deployments.Candidate
	y, p := yRec.JobID, yRec.RestorePath
	require.Contains(t, p, x+"/chk-", "the new version starts from the deployed job's checkpoint")
	// Y completes a checkpoint of its own; X goes on checkpointing.
	w.runUntil("wc", "Y checkpointed", func(*v1beta1.FlinkApplication) bool { return newestCheckpointInStorage(w, y) != "" })
	w.passes("wc", 5)
	c := newestCheckpointInStorage(w, y)
	// Y's JobManager fails over; HA recovers Y from c.
	w.jm(old, yRec.ClusterHash).Restart()
	for i := 0; i < 200; i++ {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, v1beta1.PhaseDualRunning, w.get("wc").Status.Phase)
	for _, e := range w.get("wc").Status.Ledger {
		t.Logf("ledger before the teardown: %s job %s %s at %v", e.Purpose, e.JobID, e.Path, e.Time)
	}
	// The deployed version is torn down: cancelled under DELETE_ON_CANCELLATION, Flink discards p.
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.TearDownVersionHash = old.Status.DeployHash })
	promoted := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	require.Equal(t, y, promoted.Status.JobStatus.JobID)
	require.Equal(t, c, newestCheckpointInStorage(w, y), "Y completed nothing since its failover")
	for _, e := range promoted.Status.Ledger {
		t.Logf("ledger after the teardown: %s job %s %s at %v gone %v", e.Purpose, e.JobID, e.Path, e.Time, e.Gone)
	}
	// Y fails before its next checkpoint.
	require.True(t, w.jm(old, yRec.ClusterHash).FailJobNow(y))
	w.runUntil("wc", "Y's failure handled", func(a *v1beta1.FlinkApplication) bool {
		return len(w.timeline.Jobs(ns+"/wc")) > 2 || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	w.passes("wc", 20)
	after := w.get("wc")
	from := "(no job)"
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		if j.JobID != x && j.JobID != y {
			from = j.RestoredFrom
		}
	}
	require.True(t, w.storage.Exists(c), "Y's own checkpoint %s is in storage", c)
	assert.Equal(t, c, from, "Y's restart restores its own newest checkpoint %s (phase %s, reason %q)", c, after.Status.Phase, after.Status.Reason)
}
