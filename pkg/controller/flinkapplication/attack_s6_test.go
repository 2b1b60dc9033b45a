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
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// Attack review s6 (0e37d15, 2f136bc, add4670). Each test below fails on c199cc8. Checked against
// a build with rolling_back.go at 0e37d15^ and job_run.go at add4670^:
//   - TestS6AFailedRedeployFromASavepointTheOperatorTook...: fails there too (older defect).
//   - TestS6AFailedAttemptsDiscardedCheckpoint.../redeploy: passes there (0e37d15 regression);
//     .../no_redeploy fails there too (same root: attemptCheckpoint ignores "discarded").
//   - TestS6ASessionJobThatFailsInSubmitting...: passes there (add4670 regression).
//   - TestS6AForcedRollbackOfAnAttemptCancelled...: both subtests fail there too: before 0e37d15
//     the redeploy flag was recomputed each pass, and lost once the first pass had replaced the
//     next restore path, so a redeploy whose cancel took two passes went on from the attempt's
//     checkpoint as well.
//   - TestS6ADeletionBlockedWhileAnHAJobManagerWasGone...: passes with context.go and sessionjob/handlers.go
//     at 2f136bc^ (the deletion ends at once there; the job HA recovers later runs ownerless).

// updateUntilRolledBack applies the change to the application and runs it until it rests in
// DeployFailed, and ten passes more: the application as its rollback left it.
func (w *world) updateUntilRolledBack(name string, change func(*v1beta1.FlinkApplication)) *v1beta1.FlinkApplication {
	w.update(name, change)
	w.runUntil(name, "rolled back", func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == v1beta1.PhaseDeployFailed })
	w.passes(name, 10)
	return w.get(name)
}

// runSessionJobThenFailItsJobs creates session job "a" (upgradeMode Savepoint) on session cluster
// "session", runs it for a while, and makes the cluster's jobs fail 45 s after they run from then on:
// the cluster's JobManager.
func (w *world) runSessionJobThenFailItsJobs(jar string) *flinksim.JobManager {
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeSavepoint))
	w.runSessionsUntil("a running", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	for i := 0; i < 60; i++ {
		w.reconcileSessions()
	}
	w.mu.Lock()
	jm := w.jms["session-"+w.sessionCluster("session").Status.DeployHash]
	w.mu.Unlock()
	require.NotNil(w.t, jm)
	jm.SetFaults(flinksim.Faults{FailJobsAfter: 45 * time.Second})
	return jm
}

// stopSavepointOf is the savepoint the update took of the job as it stopped it.
func stopSavepointOf(app *v1beta1.FlinkApplication, jobID string) string {
	for _, e := range app.Status.Ledger {
		if e.JobID == jobID && e.Result == v1beta1.StateCompleted && e.Purpose == v1beta1.SavepointUpgrade {
			return e.Path
		}
	}
	return ""
}

// A savepointRedeployNonce names a savepoint the operator itself took of the running job (a manual
// one, through savepointTriggerNonce): the ledger knows its path, so redeployFromNamedSavepoint's
// Record of the Redeploy entry is refused (a path the ledger knows is not recorded twice), and
// startedFromRedeploy, which looks for a Redeploy entry naming the next restore path, says the
// attempt did not start from a redeploy. The attempt (a new image whose restores are refused)
// completes nothing; endFailedAttempt then leaves the next restore path as it was: the named
// savepoint. The rollback starts the previous spec from it, older than the savepoint the update
// stopped the previous job with (docs/job-lifecycle.md: a failed redeploy goes back to the state
// the previous job left, not to the named savepoint). Not new in 0e37d15, but its guard
// (path == named) never sees this case: named is "".
func TestS6AFailedRedeployFromASavepointTheOperatorTookRollsBackToTheStopsSavepoint(t *testing.T) {
	w := newWorld(t)
	before := running(t, w, "wc")
	named := manualSavepoint(t, w, "wc", "before")
	// The job runs on for a while past the named savepoint.
	w.passes("wc", 120)

	w.imageFaults["flink-wordcount:2"] = flinksim.Faults{UnmappableRestores: true}
	got := w.updateUntilRolledBack("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.Image = "flink-wordcount:2"
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = named, "r1"
	})
	stop := stopSavepointOf(got, before.Status.JobStatus.JobID)
	t.Logf("named %s, stop %s; phase %s reason %q; job %s from %s", named, stop, got.Status.Phase, got.Status.Reason,
		got.Status.JobStatus.JobID, got.Status.JobStatus.RestorePath)
	require.NotEmpty(t, stop, "the update stopped the running job with a savepoint: %+v", got.Status.Ledger)
	assert.Equal(t, v1beta1.JobRunning, got.Status.JobStatus.State, "the previous spec's job runs again")
	assert.NotEqual(t, named, got.Status.JobStatus.RestorePath, "the rollback restored the named savepoint the failed redeploy started from")
	assert.Equal(t, stop, got.Status.JobStatus.RestorePath, "the rollback goes back to the state the previous job left")
}

// 0e37d15: ending a failed attempt takes Flink's latest.completed of the attempt's job
// (attemptCheckpoint) as the state to go back to, without asking whether Flink discarded it
// (discarded: true). A job whose configuration does not retain checkpoints when it ends
// (execution.checkpointing.externalized-checkpoint-retention NO_EXTERNALIZED_CHECKPOINTS, Flink's
// own default, set by the user) loses them when it FAILS; DELETE_ON_CANCELLATION loses them when
// the operator cancels it. The rollback then restores a checkpoint that is gone, and fails with it;
// before 0e37d15 a failed redeploy went back to the previous job's state (its stop savepoint) and
// the previous spec ran again. The ordinary update ("no redeploy") has the same hole before
// 0e37d15.
func TestS6AFailedAttemptsDiscardedCheckpointIsNotWhatTheRollbackRestores(t *testing.T) {
	for name, redeploy := range map[string]bool{"redeploy": true, "no redeploy": false} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			running(t, w, "other")
			named := manualSavepoint(t, w, "other", "theirs")
			before := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
				s.FlinkConfig[flink.CheckpointRetentionKey] = "NO_EXTERNALIZED_CHECKPOINTS"
			})
			w.passes("wc", 60)

			w.env.Config.JobStabilizationPeriod.Duration = 2 * time.Minute
			w.imageFaults["flink-wordcount:2"] = flinksim.Faults{FailJobsAfter: 45 * time.Second}
			got := w.updateUntilRolledBack("wc", func(a *v1beta1.FlinkApplication) {
				a.Spec.Image = "flink-wordcount:2"
				if redeploy {
					a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = named, "r1"
				}
			})
			stop := stopSavepointOf(got, before.Status.JobStatus.JobID)
			for _, j := range w.timeline.Jobs(ns + "/wc") {
				t.Logf("job %s on %s from %q", j.JobID, j.JobManager, j.RestoredFrom)
			}
			t.Logf("stop %s; phase %s reason %q; job %s (%s) from %s; next restore %q", stop, got.Status.Phase, got.Status.Reason,
				got.Status.JobStatus.JobID, got.Status.JobStatus.State, got.Status.JobStatus.RestorePath, got.Status.Deployments.NextRestorePath)
			assert.False(t, strings.HasPrefix(got.Status.Reason, "rollback failed"), "reason %q", got.Status.Reason)
			assert.Equal(t, v1beta1.JobRunning, got.Status.JobStatus.State, "the previous spec's job runs again")
			for _, p := range []string{got.Status.JobStatus.RestorePath, got.Status.Deployments.NextRestorePath} {
				if p != "" {
					assert.True(t, w.storage.Exists(p), "the state the rollback goes back to, %s, is gone: Flink discarded it", p)
				}
			}
		})
	}
}

// add4670: runJob, for a session job whose recorded job is Stopped, sets the next restore path to
// the newest state recorded of that job before submitting again. Stopped is not only "its
// JobManager lost it": a job that FAILED is Stopped too, and a job whose configuration does not
// retain checkpoints when it ends (NO_EXTERNALIZED_CHECKPOINTS) has had them discarded by Flink.
// The update's job fails in Submitting; the pass before the failure is reported persists the
// discarded checkpoint as the next restore path, over the savepoint the update stopped the
// previous job with. DeployFailed then names a state that is gone, and the next spec the user
// applies fails to restore it: the session job no longer knows where its state is.
func TestS6ASessionJobThatFailsInSubmittingKeepsARestorableNextRestorePath(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	c := sessionCluster("session")
	c.Spec.FlinkConfig[flink.CheckpointRetentionKey] = "NO_EXTERNALIZED_CHECKPOINTS"
	w.createSessionCluster(c)
	w.env.Config.JobStabilizationPeriod.Duration = 2 * time.Minute
	jm := w.runSessionJobThenFailItsJobs(jar)
	first := w.sessionJob("a").Status.JobStatus.JobID

	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "a b c"} })
	w.runSessionsUntil("a failed", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) })
	failedJob := w.sessionJob("a")
	next := failedJob.Status.Deployments.NextRestorePath
	stop := ""
	for _, e := range failedJob.Status.Ledger {
		if e.JobID == first && e.Purpose == v1beta1.SavepointUpgrade && e.Result == v1beta1.StateCompleted {
			stop = e.Path
		}
	}
	t.Logf("%s", w.describeSessions())
	t.Logf("stop savepoint %s; next restore %q (exists %v); reason %q", stop, next, w.storage.Exists(next), failedJob.Status.Reason)
	require.NotEmpty(t, stop)
	assert.True(t, next != "" && w.storage.Exists(next), "DeployFailed keeps a next restore path that exists: %q", next)

	// The user fixes the job (the fault is gone) with another spec.
	jm.SetFaults(flinksim.Faults{})
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "a b c d"} })
	w.runSessionsUntil("a running again or failed", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning ||
			j.Status.Phase == v1beta1.SessionJobDeployFailed && j.Status.FailedDeployHash != failedJob.Status.FailedDeployHash
	})
	j := w.sessionJob("a")
	t.Logf("%s", w.describeSessions())
	for _, r := range w.jobsOf("session", "a") {
		t.Logf("job %s from %q alive from %s", r.JobID, r.RestoredFrom, r.AliveFrom())
	}
	assert.Equal(t, v1beta1.SessionJobRunning, j.Status.Phase, "reason %q", j.Status.Reason)
}

// The same hole with the setting most users pick to keep checkpoints only on failure
// (DELETE_ON_CANCELLATION): the attempt's job runs and checkpoints, and the user gives up on it with
// forceRollback before it ran stable. endFailedAttempt cancels it (Flink discards its checkpoints),
// then asks Flink for its latest.completed and names it the state to go back to. The rollback
// restores a checkpoint that is gone: the application rests without a running job, its status
// naming that checkpoint as the previous job's state. Both subtests fail before 0e37d15 as well
// (there, the first pass of endFailedAttempt replaced the next restore path and returned while the
// cancel went on, and the next pass no longer saw a redeploy).
func TestS6AForcedRollbackOfAnAttemptCancelledWithDeleteOnCancellationRestoresState(t *testing.T) {
	for name, redeploy := range map[string]bool{"redeploy": true, "no redeploy": false} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			running(t, w, "other")
			named := manualSavepoint(t, w, "other", "theirs")
			before := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
				s.FlinkConfig[flink.CheckpointRetentionKey] = "DELETE_ON_CANCELLATION"
			})
			w.passes("wc", 60)

			w.env.Config.JobStabilizationPeriod.Duration = 10 * time.Minute
			w.update("wc", func(a *v1beta1.FlinkApplication) {
				a.Spec.Image = "flink-wordcount:2"
				if redeploy {
					a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = named, "r1"
				}
			})
			w.runUntil("wc", "the new job runs", func(a *v1beta1.FlinkApplication) bool {
				c := jobstate.Candidate(&a.Status.JobOwnerStatus)
				return a.Status.Phase == v1beta1.PhaseSubmitting && c != nil && c.JobID != "" && a.Status.JobStatus.State == v1beta1.JobRunning
			})
			for i := 0; i < 120; i++ {
				_, _ = w.reconcile("wc")
			}
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.ForceRollback = true })
			got := w.runUntil("wc", "rolled back", func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseDeployFailed
			})
			w.passes("wc", 10)
			got = w.get("wc")
			stop := stopSavepointOf(got, before.Status.JobStatus.JobID)
			for _, j := range w.timeline.Jobs(ns + "/wc") {
				t.Logf("job %s on %s from %q", j.JobID, j.JobManager, j.RestoredFrom)
			}
			t.Logf("stop %s; phase %s reason %q; job %s (%s) from %s; next restore %q", stop, got.Status.Phase, got.Status.Reason,
				got.Status.JobStatus.JobID, got.Status.JobStatus.State, got.Status.JobStatus.RestorePath, got.Status.Deployments.NextRestorePath)
			assert.False(t, strings.HasPrefix(got.Status.Reason, "rollback failed"), "reason %q", got.Status.Reason)
			assert.Equal(t, v1beta1.JobRunning, got.Status.JobStatus.State, "the previous spec's job runs again")
			for _, p := range []string{got.Status.JobStatus.RestorePath, got.Status.Deployments.NextRestorePath} {
				if p != "" {
					assert.True(t, w.storage.Exists(p), "the state the rollback goes back to, %s, is gone: Flink discarded it", p)
				}
			}
		})
	}
}

// 2f136bc: every handler of a session job now takes the HA session cluster's JobManager that is
// gone for Unknown, not for evidence that the job stopped. Deleting (deleteMode Savepoint) asks
// for the job's state, fails, spends its retries and gives up (lifecycle.DeleteBlocked: After UntilChanged).
// Here the JobManager is gone while the session cluster starts a new Flink cluster that does not
// come up (ClusterStartTimeout, 5 min): the cluster then recreates the running cluster's
// JobManager and HA brings the job back, running. The session job never looks again: it rests in
// Deleting, DeleteBlocked, with its job running, until the user gives up the final savepoint
// (ForceCancel) or leaves the job to run ownerless (None). No deadline ends the wait for the
// JobManager with anything but a blocked deletion, and nothing retries once it is back. Before
// 2f136bc the deletion ended at once (and the job HA recovered later ran on ownerless); the fix
// traded that for a deletion that never finishes by itself.
func TestS6ADeletionBlockedWhileAnHAJobManagerWasGoneFinishesOnceItIsBack(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	c := sessionCluster("session")
	c.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
	c.Spec.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/ha"
	w.createSessionCluster(c)
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState))
	w.runSessionsUntil("a running", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	for i := 0; i < 120; i++ {
		w.reconcileSessions()
	}
	w.env.Config.MaxRetries = 10 // the operator's default
	hash := w.sessionCluster("session").Status.DeployHash

	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.Image = "flink:1.20-broken" })
	w.runSessionsUntil("new cluster starting", func() bool { return w.sessionCluster("session").Status.UpdatingHash != "" })
	w.broken[flink.JobManagerNameOf("session", w.sessionCluster("session").Status.UpdatingHash)] = true
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerNameOf("session", hash), metav1.DeleteOptions{}))
	w.deleteSessionJob("a")
	deadline := w.clock.Now().Add(2 * time.Hour)
	for w.clock.Now().Before(deadline) && !w.sessionGone("a") {
		w.reconcileSessions()
	}
	t.Logf("%s", w.describeSessions())
	alive := 0
	for _, r := range w.jobsOf("session", "a") {
		_, ended := r.AliveUntil()
		t.Logf("job %s on %s from %q: %v", r.JobID, r.JobManager, r.RestoredFrom, r.States)
		if !ended {
			alive++
		}
	}
	w.mu.Lock()
	_, back := w.jms["session-"+hash]
	w.mu.Unlock()
	t.Logf("JobManager session-%s back: %v; jobs of a alive: %d", hash, back, alive)
	assert.True(t, w.sessionGone("a"), "the deletion finishes once the JobManager is back (two simulated hours)")
}
