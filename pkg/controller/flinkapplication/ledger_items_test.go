package flinkapplication

import (
	"context"
	"fmt"
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

// Scenarios of issue 24 (FlinkApplication items). Each reproduces one reported bug through the
// world harness and asserts the correct behaviour on what users and Flink see: status fields,
// Events, what the simulated JobManagers ran and restored, and the snapshots in storage.

// ledgerSavepoints are the savepoints (not checkpoints) that exist in the world's storage, oldest
// first.
func ledgerSavepoints(w *world) []flinksim.Snapshot {
	var out []flinksim.Snapshot
	for _, s := range w.storage.Snapshots() {
		if s.Savepoint {
			out = append(out, s)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].CreatedAt.Before(out[j-1].CreatedAt); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// ledgerRecords are the entries of status.savepoints with this trigger.
func ledgerRecords(app *v1beta1.FlinkApplication, purpose v1beta1.SavepointPurpose) []v1beta1.SavepointRecord {
	var out []v1beta1.SavepointRecord
	for _, r := range app.Status.Savepoints {
		if r.Trigger == purpose {
			out = append(out, r)
		}
	}
	return out
}

// ledgerLastPeriodic is the newest completed Periodic entry of status.savepoints, or nil.
func ledgerLastPeriodic(app *v1beta1.FlinkApplication) *v1beta1.SavepointRecord {
	var last *v1beta1.SavepointRecord
	for i := range app.Status.Savepoints {
		r := &app.Status.Savepoints[i]
		if r.Trigger == v1beta1.SavepointPeriodic && r.Result == "Completed" && r.Path != "" {
			last = r
		}
	}
	return last
}

// ledgerEventsMentioning are the Events whose text contains s, ignoring case.
func ledgerEventsMentioning(events []string, s string) []string {
	var out []string
	for _, e := range events {
		if strings.Contains(strings.ToLower(e), strings.ToLower(s)) {
			out = append(out, e)
		}
	}
	return out
}

// ledgerJob is the simulator's record of a job by id, on any JobManager of the application.
func ledgerJob(w *world, jobID string) (flinksim.JobRecord, bool) {
	for _, r := range w.timeline.Jobs(ns + "/wc") {
		if r.JobID == jobID {
			return r, true
		}
	}
	return flinksim.JobRecord{}, false
}

// ledgerRunFor reconciles for a simulated duration.
func ledgerRunFor(w *world, name string, d time.Duration) {
	for end := w.clock.Now().Add(d); w.clock.Now().Before(end); {
		_, _ = w.reconcile(name)
	}
}

// ledgerRestarted is true once the application runs a job other than lost, or rests in DeployFailed.
func ledgerRestarted(lost string) func(*v1beta1.FlinkApplication) bool {
	return func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseDeployFailed ||
			a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != "" && a.Status.JobStatus.JobID != lost &&
				a.Status.JobStatus.State == v1beta1.JobRunning
	}
}

// issue 24 item 1: a delete (deleteMode Savepoint) whose savepoint status polls fail a few times
// gives up while Flink's savepoint with cancel still runs; that savepoint completes and stops the
// job. The final savepoint must be the one Flink completed: finalSavepointPath names it, also after
// the user switches to ForceCancel as the reason tells them, never an older checkpoint.
func TestADeleteWhoseSavepointPollsFailKeepsItsTrigger(t *testing.T) {
	w := newWorld(t)
	live := running(t, w, "wc")
	jm := w.jm(live, live.Status.DeployHash)
	w.deleteApp("wc")
	for i := 0; i < 200 && jm.SavepointTriggers() == 0; i++ {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, 1, jm.SavepointTriggers(), "the delete triggered its savepoint with cancel")

	// Every poll of the savepoint's status the retry budget allows fails; Flink completes the
	// savepoint meanwhile and cancels the job.
	jm.SetFaults(flinksim.Faults{FailFirst: map[string]int{flinksim.EndpointSavepointStatus: 1 + w.env.Config.MaxRetries}})
	app := w.runUntil("wc", "the delete finished, or stopped and said which deleteMode to choose", func(a *v1beta1.FlinkApplication) bool {
		return finalized(a) || a.Status.Phase == v1beta1.PhaseDeleting && strings.Contains(a.Status.Reason, string(v1beta1.DeleteModeForceCancel))
	})
	if !finalized(app) {
		require.Equal(t, "CANCELED", jm.Jobs()[0].State, "the savepoint with cancel completed in Flink and stopped the job")
		t.Logf("delete stopped: %s", app.Status.Reason)
		// The user follows the reason's advice.
		w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.DeleteMode = v1beta1.DeleteModeForceCancel })
		app = w.runUntil("wc", "finalizer removed", finalized)
	}
	sps := ledgerSavepoints(w)
	require.Len(t, sps, 1, "Flink completed the delete's one savepoint")
	assert.Equal(t, sps[0].Path, app.Status.FinalSavepointPath,
		"finalSavepointPath must name the savepoint Flink completed for the delete (its trigger kept after the polls failed), not an older checkpoint")
}

// issue 24 item 2: a delete during an update of an application with periodicSavepoint, while a
// periodic savepoint is in flight (the update started while it was in flight, and its new cluster
// takes a minute to come up). The delete must take its own savepoint with cancel; the periodic
// savepoint is settled into status.savepoints and never used as the stop's savepoint.
func TestADeleteDuringAnUpdateTakesItsOwnFinalSavepointNotThePeriodicOneInFlight(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.PeriodicSavepoint = &v1beta1.PeriodicSchedule{IntervalSeconds: 60}
	})
	jm := w.jm(old, old.Status.DeployHash)
	for i := 0; i < 400 && jm.SavepointTriggers() == 0; i++ {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, 1, jm.SavepointTriggers(), "the periodic savepoint was triggered")
	require.NotEmpty(t, w.get("wc").Status.SavepointTriggerID, "the periodic savepoint is in flight")

	// The update starts while the periodic savepoint is in flight; its cluster does not come up.
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	next := w.get("wc")
	w.broken[flink.JobManagerName(next, flink.ClusterHash(next))] = true
	w.runUntilPhase("wc", v1beta1.PhaseClusterStarting)
	ledgerRunFor(w, "wc", time.Minute)
	require.Equal(t, v1beta1.PhaseClusterStarting, w.get("wc").Status.Phase, "the update waits for its cluster")
	periodic := ledgerSavepoints(w)
	require.Len(t, periodic, 1, "Flink completed the periodic savepoint a minute ago")

	deletedAt := w.clock.Now()
	w.deleteApp("wc")
	got := w.runUntil("wc", "finalizer removed", finalized)

	require.NotEmpty(t, got.Status.FinalSavepointPath, "a final savepoint is recorded")
	final, ok := w.storage.Get(got.Status.FinalSavepointPath)
	require.True(t, ok, "finalSavepointPath %s exists", got.Status.FinalSavepointPath)
	assert.NotEqual(t, periodic[0].Path, got.Status.FinalSavepointPath,
		"the periodic savepoint taken a minute before the delete must not be recorded as the final savepoint")
	assert.False(t, final.CreatedAt.Before(deletedAt),
		"the final savepoint must be the delete's own savepoint with cancel, taken after the delete (%s), not one from %s",
		deletedAt.Format(time.TimeOnly), final.CreatedAt.Format(time.TimeOnly))
	assert.Equal(t, 2, jm.SavepointTriggers(), "Flink saw the periodic savepoint and the delete's own savepoint with cancel")
	var settled []string
	for _, r := range ledgerRecords(got, v1beta1.SavepointPeriodic) {
		settled = append(settled, r.Path)
	}
	assert.Contains(t, settled, periodic[0].Path, "the periodic savepoint in flight is settled into status.savepoints as Periodic; status.savepoints: %+v", got.Status.Savepoints)
}

// issue 24 item 3: the restore policy must read status.savepoints. A lost job (its JobManager
// process restarts, no HA) that takes a periodic savepoint every minute restores the newest
// completed state, the recorded savepoint: without checkpoints instead of ending DeployFailed "no
// savepoint or retained checkpoint was found", and with checkpoints instead of an older checkpoint.
func TestALostJobRestoresTheNewestSavepointStatusRecorded(t *testing.T) {
	t.Run("without checkpoints", func(t *testing.T) {
		w := newWorld(t)
		live := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
			delete(s.FlinkConfig, "execution.checkpointing.interval")
			s.PeriodicSavepoint = &v1beta1.PeriodicSchedule{IntervalSeconds: 60}
		})
		rec := w.runUntil("wc", "a periodic savepoint recorded", func(a *v1beta1.FlinkApplication) bool { return ledgerLastPeriodic(a) != nil })
		sp := ledgerLastPeriodic(rec).Path
		ledgerRunFor(w, "wc", 31*time.Second)
		require.Equal(t, sp, ledgerLastPeriodic(w.get("wc")).Path, "no newer savepoint was taken in 31 s")

		lost := live.Status.JobStatus.JobID
		w.jm(live, live.Status.DeployHash).Restart()
		got := w.runUntil("wc", "the lost job restarted, or the recovery failed", ledgerRestarted(lost))
		require.Equal(t, v1beta1.PhaseRunning, got.Status.Phase,
			"the lost job restarts from savepoint %s that status.savepoints recorded 31 s before; instead: %s", sp, got.Status.Reason)
		assert.Equal(t, sp, got.Status.JobStatus.RestorePath)
		j, ok := ledgerJob(w, got.Status.JobStatus.JobID)
		require.True(t, ok)
		assert.Equal(t, sp, j.RestoredFrom, "Flink restored the recorded savepoint")
	})

	t.Run("with an older checkpoint", func(t *testing.T) {
		w := newWorld(t)
		live := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
			s.FlinkConfig["execution.checkpointing.interval"] = "45s"
			s.PeriodicSavepoint = &v1beta1.PeriodicSchedule{IntervalSeconds: 60}
		})
		// A periodic savepoint recorded after the newest checkpoint status recorded.
		rec := w.runUntil("wc", "a periodic savepoint newer than the recorded checkpoint", func(a *v1beta1.FlinkApplication) bool {
			p, js := ledgerLastPeriodic(a), a.Status.JobStatus
			return p != nil && js.LastCheckpointTime != nil && js.LastCheckpointPath != "" && p.Time.After(js.LastCheckpointTime.Time)
		})
		sp := ledgerLastPeriodic(rec).Path
		spSnap, ok := w.storage.Get(sp)
		require.True(t, ok)
		for _, s := range w.storage.Snapshots() {
			if !s.Savepoint && s.JobID == live.Status.JobStatus.JobID {
				require.True(t, s.CreatedAt.Before(spSnap.CreatedAt), "harness: checkpoint %s is older than savepoint %s", s.Path, sp)
			}
		}

		lost := live.Status.JobStatus.JobID
		w.jm(live, live.Status.DeployHash).Restart()
		got := w.runUntil("wc", "the lost job restarted, or the recovery failed", ledgerRestarted(lost))
		require.Equal(t, v1beta1.PhaseRunning, got.Status.Phase, got.Status.Reason)
		j, ok := ledgerJob(w, got.Status.JobStatus.JobID)
		require.True(t, ok)
		assert.Equal(t, sp, j.RestoredFrom,
			"the lost job restores the newest completed state, savepoint %s recorded in status.savepoints, not the older checkpoint %s",
			sp, rec.Status.JobStatus.LastCheckpointPath)
	})
}

// issue 24 item 5 (first part): a manual savepoint (spec.savepointTriggerNonce) in flight when an
// update starts must be settled into status.savepoints as Manual, Completed or Failed, not dropped.
func TestAManualSavepointInFlightWhenAnUpdateStartsIsRecorded(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	jm := w.jm(old, old.Status.DeployHash)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "before-the-update" })
	for i := 0; i < 100 && jm.SavepointTriggers() == 0; i++ {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, 1, jm.SavepointTriggers(), "the manual savepoint was triggered")
	require.Empty(t, w.get("wc").Status.Savepoints, "it is in flight")

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	got := w.runUntil("wc", "updated", upgradedFrom(old))
	w.passes("wc", 5)
	got = w.get("wc")
	var inStorage []string
	for _, sp := range ledgerSavepoints(w) {
		inStorage = append(inStorage, sp.Path)
	}
	t.Logf("Flink saw %d savepoint triggers of the old job; savepoints in storage: %v; status.savepoints: %+v",
		jm.SavepointTriggers(), inStorage, got.Status.Savepoints)
	manual := ledgerRecords(got, v1beta1.SavepointManual)
	require.NotEmpty(t, manual, "the manual savepoint in flight when the update started is recorded in status.savepoints as Manual (Completed or Failed); status.savepoints: %+v",
		got.Status.Savepoints)
	assert.Contains(t, []string{"Completed", "Failed"}, manual[0].Result)
}

// issue 24 item 5 (second part): a manual savepoint that Flink refuses at once (no savepoint
// directory is configured) must be told by a Warning Event and a Failed Manual entry in
// status.savepoints, not only by status.lastSeenError. The job keeps running.
func TestAManualSavepointFlinkRefusesGivesAWarningAndAFailedRecord(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		delete(s.FlinkConfig, "state.savepoints.dir")
		s.UpgradeMode = v1beta1.UpgradeModeLastState
	})
	w.events()
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "now" })
	w.passes("wc", 40)
	app := w.get("wc")
	events := w.events()
	var warnings []string
	for _, e := range ledgerEventsMentioning(events, "savepoint") {
		if strings.HasPrefix(e, "Warning") {
			warnings = append(warnings, e)
		}
	}
	assert.NotEmpty(t, warnings, "a manual savepoint Flink refused is announced by a Warning Event; instead only lastSeenError %+v; events: %v",
		app.Status.LastSeenError, events)
	var failed []v1beta1.SavepointRecord
	for _, r := range ledgerRecords(app, v1beta1.SavepointManual) {
		if r.Result == "Failed" {
			failed = append(failed, r)
		}
	}
	assert.NotEmpty(t, failed, "the refused manual savepoint is recorded in status.savepoints as Failed; status.savepoints: %+v", app.Status.Savepoints)
	assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID, "the job keeps running")
}

// issue 24 item 10: upgradeMode Stateless holds for restarts and recoveries too: the job starts
// again without state. A failed job with restartFailedJob does not come back from its newest
// checkpoint; without a checkpoint it is restarted (not DeployFailed "set fallbackWithoutState");
// and it is redeployed when its JobManager Deployment is deleted.
func TestAStatelessJobRestartsWithoutState(t *testing.T) {
	stateless := func(checkpoints bool) func(*v1beta1.FlinkApplicationSpec) {
		return func(s *v1beta1.FlinkApplicationSpec) {
			s.UpgradeMode = v1beta1.UpgradeModeStateless
			s.RestartFailedJob = true
			if !checkpoints {
				delete(s.FlinkConfig, "execution.checkpointing.interval")
			}
		}
	}
	assertRestartedEmpty := func(t *testing.T, w *world, lost string) {
		t.Helper()
		got := w.runUntil("wc", "the job restarted, or the application failed", ledgerRestarted(lost))
		require.Equal(t, v1beta1.PhaseRunning, got.Status.Phase,
			"a Stateless job is started again without state; instead: %s", got.Status.Reason)
		j, ok := ledgerJob(w, got.Status.JobStatus.JobID)
		require.True(t, ok)
		assert.Empty(t, j.RestoredFrom, "a Stateless job starts again without state")
		assert.Empty(t, got.Status.JobStatus.RestorePath, "status.jobStatus.restorePath: the job started without state")
	}

	t.Run("failed job with a checkpoint", func(t *testing.T) {
		w := newWorld(t)
		live := runningWith(t, w, "wc", stateless(true))
		require.NotEmpty(t, live.Status.JobStatus.LastCheckpointPath, "harness: the job has a checkpoint")
		require.True(t, w.jm(live, live.Status.DeployHash).FailJobNow(live.Status.JobStatus.JobID))
		assertRestartedEmpty(t, w, live.Status.JobStatus.JobID)
	})

	t.Run("failed job without a checkpoint", func(t *testing.T) {
		w := newWorld(t)
		live := runningWith(t, w, "wc", stateless(false))
		require.True(t, w.jm(live, live.Status.DeployHash).FailJobNow(live.Status.JobStatus.JobID))
		assertRestartedEmpty(t, w, live.Status.JobStatus.JobID)
	})

	t.Run("JobManager Deployment deleted", func(t *testing.T) {
		w := newWorld(t)
		live := runningWith(t, w, "wc", stateless(false))
		require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(),
			flink.JobManagerName(live, live.Status.DeployHash), metav1.DeleteOptions{}))
		assertRestartedEmpty(t, w, live.Status.JobStatus.JobID)
	})
}

// issue 24 item 12: status.savepointPath only ever names a savepoint. After a ForceCancel delete of
// a job that took checkpoints, and no savepoint, it is empty: not the path of a checkpoint.
func TestAForceCancelDeleteLeavesSavepointPathEmpty(t *testing.T) {
	w := newWorld(t)
	live := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.DeleteMode = v1beta1.DeleteModeForceCancel })
	require.NotEmpty(t, live.Status.JobStatus.LastCheckpointPath, "harness: the job took checkpoints")
	w.deleteApp("wc")
	got := w.runUntil("wc", "finalizer removed", finalized)
	require.Empty(t, ledgerSavepoints(w), "harness: no savepoint was taken")
	assert.NotContains(t, got.Status.SavepointPath, "/chk-", "status.savepointPath must never name a checkpoint")
	assert.Empty(t, got.Status.SavepointPath, "no savepoint was taken, so status.savepointPath is empty")
}

// issue 24 item 4: BlueGreen with Auto promotion and a teardown delay. A delete right after the
// promotion (the application's Service already serves the new version, the previous one runs on
// for the delay) must stop the serving version's job with the final savepoint with cancel, and
// record that savepoint as finalSavepointPath, not the demoted version's state.
func TestADeleteRightAfterAutoPromotionTakesTheFinalSavepointOfTheServingVersion(t *testing.T) {
	w := newWorld(t)
	runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		blueGreenSpec(s)
		s.BlueGreen = &v1beta1.BlueGreenSpec{Promotion: v1beta1.PromotionAuto, PromoteAfterSeconds: int32p(5), TeardownDelaySeconds: int32p(600)}
	})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	promoted := w.runUntil("wc", "promoted", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Deployments.Candidate != nil && a.Status.Deployments.Candidate.PromotedAt != nil
	})
	serving := *promoted.Status.Deployments.Candidate
	demoted := *promoted.Status.Deployments.Stable
	require.NotEmpty(t, serving.JobID)
	servingJM := w.jm(promoted, serving.ClusterHash)
	before := servingJM.SavepointTriggers()
	deletedAt := w.clock.Now()

	w.deleteApp("wc")
	got := w.runUntil("wc", "finalizer removed", finalized)

	final, ok := w.storage.Get(got.Status.FinalSavepointPath)
	require.True(t, ok, "finalSavepointPath %q names a snapshot that exists", got.Status.FinalSavepointPath)
	assert.True(t, final.Savepoint, "finalSavepointPath names a savepoint")
	assert.Equal(t, serving.JobID, final.JobID,
		"the final savepoint is the serving version's (job %s), not the demoted version's (job %s)", serving.JobID, demoted.JobID)
	assert.False(t, final.CreatedAt.Before(deletedAt), "the final savepoint was taken by the delete")
	assert.Equal(t, before+1, servingJM.SavepointTriggers(), "the serving version's job was stopped with a savepoint with cancel")
}

// issue 24 item 6: forceRollback set while a BlueGreen promotion is in its Teardown phase (the
// deployed version's job being stopped with a savepoint) must not be ignored without a word: it is
// honoured, or a Warning Event says it is ignored and why. Either way an Event mentions it.
func TestForceRollbackDuringABlueGreenPromotionsTeardownIsNotIgnoredSilently(t *testing.T) {
	w := newWorld(t)
	w.timings = flinksim.Timings{Savepoint: 30 * time.Second} // a teardown long enough to act during it
	old, _ := dualRunningAfterUpdate(t, w)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.TearDownVersionHash = old.Status.DeployHash })
	w.runUntilPhase("wc", v1beta1.PhaseTeardown)
	w.events()

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.ForceRollback = true })
	require.Equal(t, v1beta1.PhaseTeardown, w.get("wc").Status.Phase, "forceRollback is set during the promotion's Teardown")
	app := w.runUntil("wc", "teardown over", func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase != v1beta1.PhaseTeardown })
	w.passes("wc", 10)
	app = w.get("wc")
	events := w.events()
	assert.NotEmpty(t, ledgerEventsMentioning(events, "forceRollback"),
		"forceRollback set during the promotion's Teardown is honoured or an Event says it is ignored and why; phase %s (%s), events: %v",
		app.Status.Phase, app.Status.Reason, events)
}

// issue 24 item 11: after a failed recovery (a job lost with its JobManager process, no HA, no
// state to restore) the application rests in DeployFailed; status.jobStatus.state must not say
// RUNNING for a job no JobManager runs.
func TestAFailedRecoveryNeverReportsTheLostJobAsRunning(t *testing.T) {
	w := newWorld(t)
	live := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		delete(s.FlinkConfig, "execution.checkpointing.interval")
	})
	lost := live.Status.JobStatus.JobID
	jm := w.jm(live, live.Status.DeployHash)
	jm.Restart()
	app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	w.passes("wc", 20)
	app = w.get("wc")
	var onFlink []string
	for _, j := range jm.Jobs() {
		onFlink = append(onFlink, fmt.Sprintf("%s %s", j.ID, j.State))
		require.NotEqual(t, lost, j.ID, "harness: the JobManager forgot the lost job")
	}
	assert.NotEqual(t, v1beta1.JobRunning, app.Status.JobStatus.State,
		"status.jobStatus.state must not say RUNNING for job %s, which no JobManager runs (phase %s: %s; JobManager's jobs: %v)",
		app.Status.JobStatus.JobID, app.Status.Phase, app.Status.Reason, onFlink)
}
