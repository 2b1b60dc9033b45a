package flinkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Defects the randomized explorer found in its "restore older than the replaced job's newest
// completed state" runs, each reduced to a world test of its own; the comment names the seeds.

// savepointOf is the savepoint of the job that Flink's storage holds; nil while there is none.
func (w *world) savepointOf(jobID string) *flinksim.Snapshot {
	var out *flinksim.Snapshot
	for _, s := range w.storage.Snapshots() {
		if s.Savepoint && s.JobID == jobID {
			s := s
			out = &s
		}
	}
	return out
}

// A savepoint the operator asked for whose end it never read, because the JobManager went with its
// job before it did (explorer seed 1017: the pass that read it was killed before its status write,
// and the session cluster's JobManager restarted), may hold newer state than anything recorded. The
// job is not started again from older state: the application fails, saying which savepoint is in
// doubt, until the user names the state to start from.
func TestAJobLostBeforeItsSavepointsEndWasReadIsNotRestartedFromOlderState(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jobID := app.Status.JobStatus.JobID
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "one" })
	_, _ = w.reconcile("wc") // the savepoint is asked for, and persisted
	jm := w.jm(app, app.Status.DeployHash)
	for i := 0; i < 5 && jm.SavepointTriggers() == 0; i++ {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, 1, jm.SavepointTriggers(), "the trigger is sent")
	jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointSavepointStatus: 1}})
	for i := 0; i < 20 && w.savepointOf(jobID) == nil; i++ {
		_, _ = w.reconcile("wc")
	}
	savepoint := w.savepointOf(jobID)
	require.NotNil(t, savepoint, "Flink completed the savepoint")
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(app, app.Status.DeployHash), metav1.DeleteOptions{}))
	_ = w.events()
	got := w.runUntil("wc", "the job started again, or the application failed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseDeployFailed ||
			a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != jobID && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	require.Equal(t, v1beta1.PhaseDeployFailed, got.Status.Phase, "not started again from %s", got.Status.JobStatus.RestorePath)
	assert.Contains(t, got.Status.Reason, "savepoint", "it says which savepoint is in doubt")
	assert.True(t, strings.Contains(strings.Join(w.events(), "\n"), "Warning"), "with a Warning")

	// The user names the savepoint, and the job starts from it.
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = savepoint.Path, "by-hand"
	})
	again := w.runUntil("wc", "running from the named savepoint", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != jobID && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	assert.Equal(t, savepoint.Path, again.Status.JobStatus.RestorePath)
}

// The same for a session job whose session cluster's JobManager restarts without HA, as in seed
// 1017 itself: the job it lost is not started again from older state than the savepoint in doubt,
// also not when its spec changes meanwhile, until the user names the state to start from.
func TestASessionJobLostBeforeItsSavepointsEndWasReadIsNotRestartedFromOlderState(t *testing.T) {
	w, _ := runningJobs(t)
	w.reconcileSessions()
	jobID := w.sessionJob("a").Status.JobStatus.JobID
	jm := w.jms["session-"+w.sessionCluster("session").Status.DeployHash]
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.SavepointTriggerNonce = "now" })
	for i := 0; i < 10 && jm.SavepointTriggers() == 0; i++ {
		w.reconcileSessions()
	}
	require.Equal(t, 1, jm.SavepointTriggers(), "the trigger is sent")
	jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointSavepointStatus: 1}})
	for i := 0; i < 20 && w.savepointOf(jobID) == nil; i++ {
		w.reconcileSessions()
	}
	savepoint := w.savepointOf(jobID)
	require.NotNil(t, savepoint, "Flink completed the savepoint")
	jm.SetFaults(flinksim.Faults{})
	jm.Restart()
	w.runSessionsUntil("a's job lost", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) })
	assert.Contains(t, w.sessionJob("a").Status.Reason, "savepoint", "it says which savepoint is in doubt")

	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "c d"} })
	for i := 0; i < 40; i++ {
		w.reconcileSessions()
	}
	for _, j := range w.jobsOf("session", "a") {
		assert.False(t, j.JobID != jobID && len(j.States) > 0, "job %s started from %q after the loss", j.JobID, j.RestoredFrom)
	}

	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) {
		j.Spec.Job.InitialSavepointPath, j.Spec.Job.SavepointRedeployNonce = savepoint.Path, "by-hand"
	})
	w.runSessionsUntil("a running from the named savepoint", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.JobID != jobID
	})
	assert.Equal(t, savepoint.Path, w.sessionJob("a").Status.JobStatus.RestorePath)
	w.assertOneJobEach("a", "b")
}

// completedSavepoint is the path of the newest Completed savepoint of the purpose in the ledger.
func completedSavepoint(app *v1beta1.FlinkApplication, purpose v1beta1.SavepointPurpose) string {
	for i := len(app.Status.Ledger) - 1; i >= 0; i-- {
		if e := app.Status.Ledger[i]; e.Purpose == purpose && e.Result == v1beta1.StateCompleted {
			return e.Path
		}
	}
	return ""
}

// A savepoint whose completion is read while Flink does not tell the job's checkpoint statistics
// (explorer seed 1010: a fifth of the JobManager's requests failing) is no older than when it was
// seen completed: dated back to when it was asked for, a pass or more before its trigger was sent,
// it counted as older than the checkpoints completed in between. A job lost with its JobManager
// without HA starts again from the savepoint.
func TestASavepointReadWithoutFlinksTimeOfItIsNotOlderThanTheCheckpointsBeforeIt(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jobID := app.Status.JobStatus.JobID
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "one" })
	_, _ = w.reconcile("wc") // asked for, and persisted
	// The operator's next pass, which records the job's newest checkpoint and sends the trigger,
	// comes after a checkpoint completed; the statistics fail from then on.
	w.clock.Step(12 * time.Second)
	_, _ = w.reconcile("wc") // when it is sent, persisted
	_, _ = w.reconcile("wc")
	jm := w.jm(app, app.Status.DeployHash)
	require.Equal(t, 1, jm.SavepointTriggers(), "the trigger is sent")
	jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointCheckpoints: 1}})
	w.runUntil("wc", "the savepoint completed", func(a *v1beta1.FlinkApplication) bool {
		return completedSavepoint(a, v1beta1.SavepointManual) != ""
	})
	savepoint := w.savepointOf(jobID)
	require.NotNil(t, savepoint)
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(app, app.Status.DeployHash), metav1.DeleteOptions{}))
	again := w.runUntil("wc", "running again", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != jobID && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	restored, ok := w.storage.Get(again.Status.JobStatus.RestorePath)
	require.True(t, ok, "restored from %q, which exists", again.Status.JobStatus.RestorePath)
	assert.False(t, restored.CheckpointID < savepoint.CheckpointID, "restored %s (checkpoint %d), older than savepoint %s (checkpoint %d)",
		restored.Path, restored.CheckpointID, savepoint.Path, savepoint.CheckpointID)
}

// A savepoint and a checkpoint of one job taken within the same second (explorer seed 1003) are
// ordered by Flink's times of them: status keeps the savepoint's time to the second, and against
// Flink's millisecond time of the checkpoint triggered just before it, the savepoint counted as
// older. A failed job suspended while Flink still lists both keeps the savepoint.
func TestASavepointAndACheckpointOfOneSecondAreOrderedByFlinksTimes(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jobID := app.Status.JobStatus.JobID
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "one" })
	_, _ = w.reconcile("wc") // asked for, and persisted
	// The pass that sends the trigger runs 50 ms after Flink triggered a periodic checkpoint.
	url := w.env.FlinkURL(ns, flink.VersionedServiceName(app, app.Status.DeployHash), 0)
	cps, err := w.env.Flink.GetCheckpoints(context.Background(), url, jobID)
	require.NoError(t, err)
	require.NotNil(t, cps.Latest.Completed)
	next := time.UnixMilli(cps.Latest.Completed.TriggerTimestamp).Add(10 * time.Second)
	for next.Before(w.clock.Now()) {
		next = next.Add(10 * time.Second)
	}
	require.Greater(t, next.Nanosecond(), 0, "the checkpoint is triggered past a whole second")
	require.Less(t, next.Nanosecond(), int(950*time.Millisecond), "and the savepoint within the same second")
	for target := next.Add(50 * time.Millisecond); w.clock.Now().Before(target); {
		w.clock.Step(min(target.Sub(w.clock.Now()), maxStep))
		w.settle()
	}
	_, _ = w.reconcile("wc") // when it is sent, persisted
	_, _ = w.reconcile("wc")
	jm := w.jm(app, app.Status.DeployHash)
	require.Equal(t, 1, jm.SavepointTriggers(), "the trigger is sent")
	w.runUntil("wc", "the savepoint completed", func(a *v1beta1.FlinkApplication) bool {
		return completedSavepoint(a, v1beta1.SavepointManual) != ""
	})
	savepoint := w.savepointOf(jobID)
	require.NotNil(t, savepoint)
	require.True(t, jm.FailJobNow(jobID))
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
	got := w.runUntilPhase("wc", v1beta1.PhaseSuspended)
	restored, ok := w.storage.Get(got.Status.Deployments.NextRestorePath)
	require.True(t, ok, "resumes from %q, which exists", got.Status.Deployments.NextRestorePath)
	assert.False(t, restored.CheckpointID < savepoint.CheckpointID, "resumes from %s (checkpoint %d), older than savepoint %s (checkpoint %d)",
		restored.Path, restored.CheckpointID, savepoint.Path, savepoint.CheckpointID)
}

// A job restarted after its predecessor was lost that fails before its first checkpoint stays the
// application's job in DeployFailed, and the record it stays in says what it started from
// (explorer seed 1107, FlinkApplication beta): the record kept what the job before it started
// from, and the LastState update that stopped the failed job restored that older state, not the
// checkpoint the failed job started from.
func TestAFailedRestartKeepsWhatItStartedFromForTheNextUpdate(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	app.Spec.UpgradeMode = v1beta1.UpgradeModeLastState
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.clock.Step(25 * time.Second)
	w.passes("wc", 3)
	app = w.get("wc")
	first := app.Status.JobStatus.JobID
	jm := w.jm(app, app.Status.DeployHash)

	// The first job is lost with its JobManager's process; the second starts from its checkpoint
	// and checkpoints on.
	jm.Crash()
	second := w.runUntil("wc", "running again", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != first && a.Status.JobStatus.State == v1beta1.JobRunning
	}).Status.JobStatus.JobID
	w.clock.Step(25 * time.Second)
	w.passes("wc", 3)
	var newest *flinksim.Snapshot
	for _, s := range w.storage.Snapshots() {
		if s.JobID == second && (newest == nil || s.CheckpointID > newest.CheckpointID) {
			s := s
			newest = &s
		}
	}
	require.NotNil(t, newest, "the second job checkpointed")

	// The second is lost too; the third, from its checkpoint, fails before checkpointing.
	jm.SetFaults(flinksim.Faults{FailJobsAfter: 3 * time.Second})
	jm.Crash()
	w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)

	jm.SetFaults(flinksim.Faults{})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	got := w.runUntil("wc", "the update runs", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash != app.Status.DeployHash ||
			a.Status.Phase == v1beta1.PhaseDeployFailed && a.Generation == a.Status.ObservedGeneration && a.Status.FailedDeployHash != app.Status.DeployHash
	})
	require.Equal(t, v1beta1.PhaseRunning, got.Status.Phase, "reason %q", got.Status.Reason)
	restored, ok := w.storage.Get(got.Status.JobStatus.RestorePath)
	require.True(t, ok, "started from %q, which exists", got.Status.JobStatus.RestorePath)
	assert.False(t, restored.JobID == first, "started from %s, of the first job, older than %s, which the failed job started from",
		restored.Path, newest.Path)
}
