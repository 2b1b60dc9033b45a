package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// Attack review s6b (66cb105, b3dea60, 3c647a7). Every test below fails on 86832d0. Checked
// against one build with redeploy.go back to Record (b3dea60^), attemptCheckpoint without its two
// "gone" checks (66cb105^) and goOnFromFailedJob a no-op (3c647a7^):
//   - TestS6BRedeployingTheSameSavepointTwice...: passes there (b3dea60 regression).
//   - TestS6BRetentionChangedWhileTheAttemptRuns...: passes there (66cb105 regression).
//   - TestS6BSessionJobGivenUpOnWhileFailing...: its first assertion passes there (3c647a7
//     regression); its second fails there too, by the root of TestS6BRestartOfAFailedJob...
//     (Recovering restores the checkpoint the operator recorded and Flink discarded).
//   - TestS6BCancellingAFailingAttempt...: fails there too (older; there the rollback even
//     restores the discarded checkpoint).
//   - TestS6BSessionClusterRetentionEdited...: failed there too (goOnFromFailedJob's fix does not
//     cover it: same stop savepoint as before 3c647a7); Flink's word that a checkpoint is discarded
//     (0909e9a) settles it, and the cluster's rendered retention when Flink cannot say
//     (TestASessionJobsStopFollowsTheRetentionItsFlinkClusterRunsWith).
//   - TestS6BRestartOfAFailedJob...: older (chooseRestore / jobs.AskFlinkState), same class.

// newestCheckpointInStorage is the newest checkpoint (not savepoint) of the job still in storage;
// "" when none is.
func newestCheckpointInStorage(w *world, jobID string) string {
	best, path := int64(-1), ""
	for _, s := range w.storage.Snapshots() {
		if s.JobID == jobID && !s.Savepoint && s.CheckpointID > best {
			best, path = s.CheckpointID, s.Path
		}
	}
	return path
}

// logJobs logs the simulator's jobs of an application.
func logJobs(t *testing.T, w *world, app string) {
	for _, j := range w.timeline.Jobs(ns + "/" + app) {
		t.Logf("job %s on %s from %q", j.JobID, j.JobManager, j.RestoredFrom)
	}
}

// b3dea60: RecordRedeploy, given a path a Redeploy entry already names, moves that entry's time to
// the new redeploy's (before, Record refused a known path and the entry kept the time of the first
// redeploy). The ledger's time of a Redeploy entry is what TimeOf says of the path, and so the time
// stableFloor and jobstate.Job.StartedFrom give the state a job started from. The user redeploys wc from a
// savepoint P (r1): the job runs from P and goes on. Later they redeploy from the same P again (r2)
// with a new image whose restores fail. The update stopped the running job with a savepoint; the
// rollback goes back to "the newest state the stable job left" (stableJobsState): the stable job's
// start, P, is now dated at the r2 redeploy, newer than its stop savepoint, and wins. The rollback
// restores P: everything the job did between r1 and r2 is rewound (docs: a failed redeploy goes
// back to the state the previous job left).
func TestS6BRedeployingTheSameSavepointTwiceRollsBackToTheStopsSavepoint(t *testing.T) {
	w := newWorld(t)
	running(t, w, "other")
	named := manualSavepoint(t, w, "other", "theirs")
	old := running(t, w, "wc")

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = named, "r1"
	})
	first := w.runUntil("wc", "redeployed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != old.Status.JobStatus.JobID &&
			a.Status.JobStatus.State == v1beta1.JobRunning
	})
	require.Equal(t, named, first.Status.JobStatus.RestorePath)
	// The job runs on from the named savepoint for a while, checkpointing.
	w.passes("wc", 240)

	w.imageFaults["flink-wordcount:2"] = flinksim.Faults{UnmappableRestores: true}
	got := w.updateUntilRolledBack("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.Image = "flink-wordcount:2"
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = named, "r2"
	})
	stop := stopSavepointOf(got, first.Status.JobStatus.JobID)
	logJobs(t, w, "wc")
	for _, e := range got.Status.Ledger {
		t.Logf("ledger %s %s job %s path %s at %v", e.Purpose, e.Result, e.JobID, e.Path, e.Time)
	}
	t.Logf("named %s, stop %s; phase %s reason %q; job %s (%s) from %s", named, stop, got.Status.Phase, got.Status.Reason,
		got.Status.JobStatus.JobID, got.Status.JobStatus.State, got.Status.JobStatus.RestorePath)
	require.NotEmpty(t, stop, "the update stopped the running job with a savepoint")
	assert.Equal(t, v1beta1.JobRunning, got.Status.JobStatus.State, "the previous spec's job runs again")
	assert.Equal(t, stop, got.Status.JobStatus.RestorePath,
		"the rollback goes back to the state the previous job left, not to the savepoint it was redeployed from long before")
}

// 66cb105: attemptCheckpoint judges whether the failed attempt's checkpoints survived its end by
// rc.Settings.FlinkConfig, the spec as it is now, not the configuration the attempt's job ran with
// (its cluster's). The attempt (a new image that fails after 45 s) runs with the operator's default
// RETAIN_ON_CANCELLATION and checkpoints; while it runs, the user applies another spec: back to the
// old image, and execution.checkpointing.externalized-checkpoint-retention
// NO_EXTERNALIZED_CHECKPOINTS. The attempt FAILS on its cluster, which keeps its checkpoints, but
// endFailedAttempt reads the new spec's policy, calls them gone, and leaves the next restore path at
// the savepoint the update stopped the previous job with. The new spec's job starts from it: what
// the attempt completed (newer, still on storage) is rewound. Before 66cb105 the attempt's
// checkpoint was used.
func TestS6BRetentionChangedWhileTheAttemptRunsDoesNotDropItsKeptCheckpoint(t *testing.T) {
	w := newWorld(t)
	before := running(t, w, "wc")
	w.passes("wc", 60)

	w.env.Config.JobStabilizationPeriod.Duration = 2 * time.Minute
	w.imageFaults["flink-wordcount:2"] = flinksim.Faults{FailJobsAfter: 45 * time.Second}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	attempt := ""
	w.runUntil("wc", "the attempt runs", func(a *v1beta1.FlinkApplication) bool {
		c := jobstate.Candidate(&a.Status.JobOwnerStatus)
		if a.Status.Phase == v1beta1.PhaseSubmitting && c != nil && c.JobID != "" && a.Status.JobStatus.State == v1beta1.JobRunning {
			attempt = c.JobID
			return true
		}
		return false
	})
	w.passes("wc", 50) // 25 s: two checkpoints of the attempt
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.Image = "flink-wordcount:1"
		a.Spec.FlinkConfig[flink.CheckpointRetentionKey] = "NO_EXTERNALIZED_CHECKPOINTS"
	})
	got := w.runUntil("wc", "the new spec runs or failed", func(a *v1beta1.FlinkApplication) bool {
		return (a.Status.Phase == v1beta1.PhaseRunning || a.Status.Phase == v1beta1.PhaseDeployFailed) &&
			a.Status.JobStatus.JobID != attempt && a.Status.JobStatus.JobID != before.Status.JobStatus.JobID &&
			a.Status.JobStatus.State == v1beta1.JobRunning
	})
	logJobs(t, w, "wc")
	kept := newestCheckpointInStorage(w, attempt)
	stop := stopSavepointOf(got, before.Status.JobStatus.JobID)
	t.Logf("attempt %s, its newest checkpoint on storage %q; stop %s; phase %s reason %q; job %s from %s", attempt, kept, stop,
		got.Status.Phase, got.Status.Reason, got.Status.JobStatus.JobID, got.Status.JobStatus.RestorePath)
	require.NotEmpty(t, kept, "the attempt's cluster kept its checkpoints as it FAILED (RETAIN_ON_CANCELLATION)")
	assert.Equal(t, kept, got.Status.JobStatus.RestorePath,
		"the next job goes on from the failed attempt's newest checkpoint, which Flink kept; not from the older stop savepoint")
}

// 3c647a7 (goOnFromFailedJob) and 66cb105: a session job's job is given up on as soon as Flink
// reports it FAILING (jobs.follow), before it is FAILED. goOnFromFailedJob then asks attemptCheckpoint,
// which applies the retention policy only to a globally terminal state: FAILING is not one, and
// Flink has not discarded anything yet, so latest.completed is taken as the state to go on from and
// persisted as the next restore path. A moment later the job is FAILED and Flink, whose policy is
// NO_EXTERNALIZED_CHECKPOINTS, discards that checkpoint. DeployFailed rests naming a state that is
// gone, and the next spec's job fails to restore it. FAILING lasts as long as cancelling the tasks
// takes (Timings.Fail, here 8 s; Flink's task cancellation may take minutes).
func TestS6BSessionJobGivenUpOnWhileFailingKeepsARestorableNextRestorePath(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	w.timings.Fail = 8 * time.Second
	c := sessionCluster("session")
	c.Spec.FlinkConfig[flink.CheckpointRetentionKey] = "NO_EXTERNALIZED_CHECKPOINTS"
	w.createSessionCluster(c)
	w.env.Config.JobStabilizationPeriod.Duration = 2 * time.Minute
	jm := w.runSessionJobThenFailItsJobs(jar)

	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "a b c"} })
	w.runSessionsUntil("a failed", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) })
	atFailure := w.sessionJob("a").Status.Deployments.NextRestorePath
	for i := 0; i < 60; i++ { // 30 s: the job is FAILED by now
		w.reconcileSessions()
	}
	failedJob := w.sessionJob("a")
	next := failedJob.Status.Deployments.NextRestorePath
	for _, r := range w.jobsOf("session", "a") {
		t.Logf("job %s from %q: %v", r.JobID, r.RestoredFrom, r.States)
	}
	t.Logf("next restore at the failure %q, now %q (exists %v); reason %q", atFailure, next, w.storage.Exists(next), failedJob.Status.Reason)
	assert.True(t, next != "" && w.storage.Exists(next), "DeployFailed keeps a next restore path that exists: %q", next)

	jm.SetFaults(flinksim.Faults{})
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "a b c d"} })
	w.runSessionsUntil("a running again or failed", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning ||
			j.Status.Phase == v1beta1.SessionJobDeployFailed && j.Status.FailedDeployHash != failedJob.Status.FailedDeployHash
	})
	j := w.sessionJob("a")
	t.Logf("%s", w.describeSessions())
	assert.Equal(t, v1beta1.SessionJobRunning, j.Status.Phase, "reason %q", j.Status.Reason)
}

// 66cb105 and the explorer's discardedAsItFailed: an application whose policy is
// DELETE_ON_CANCELLATION (Flink keeps checkpoints when a job FAILS, not when it is cancelled). The
// update's job fails on its own; Flink reports it FAILING while its tasks are cancelled. The
// operator gives up on it at FAILING and endFailedAttempt cancels it: FAILING -> CANCELLING ->
// CANCELED, so Flink discards the checkpoints that FAILED would have kept. attemptCheckpoint then
// (rightly, by now) calls them gone and the rollback goes back to the older stop savepoint: the
// operator's own cancel threw away the newest state of a job that was ending by itself.
func TestS6BCancellingAFailingAttemptDoesNotDiscardWhatFailedWouldKeep(t *testing.T) {
	w := newWorld(t)
	w.timings.Fail = 8 * time.Second
	before := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig[flink.CheckpointRetentionKey] = "DELETE_ON_CANCELLATION"
	})
	w.passes("wc", 60)

	w.env.Config.JobStabilizationPeriod.Duration = 2 * time.Minute
	w.imageFaults["flink-wordcount:2"] = flinksim.Faults{FailJobsAfter: 45 * time.Second}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	attempt := ""
	w.runUntil("wc", "the attempt runs", func(a *v1beta1.FlinkApplication) bool {
		c := jobstate.Candidate(&a.Status.JobOwnerStatus)
		if a.Status.Phase == v1beta1.PhaseSubmitting && c != nil && c.JobID != "" && a.Status.JobStatus.State == v1beta1.JobRunning {
			attempt = c.JobID
			return true
		}
		return false
	})
	got := w.runUntil("wc", "rolled back", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	w.passes("wc", 10)
	got = w.get("wc")
	logJobs(t, w, "wc")
	var attemptStates []string
	for _, r := range w.timeline.Jobs(ns + "/wc") {
		if r.JobID == attempt {
			for _, s := range r.States {
				attemptStates = append(attemptStates, s.State)
			}
		}
	}
	stop := stopSavepointOf(got, before.Status.JobStatus.JobID)
	t.Logf("attempt %s went %s; its checkpoints on storage: %q; stop %s; phase %s reason %q; job %s from %s", attempt,
		strings.Join(attemptStates, ">"), newestCheckpointInStorage(w, attempt), stop, got.Status.Phase, got.Status.Reason,
		got.Status.JobStatus.JobID, got.Status.JobStatus.RestorePath)
	assert.NotEmpty(t, newestCheckpointInStorage(w, attempt),
		"the attempt failed on its own: under DELETE_ON_CANCELLATION its checkpoints survive a failure, unless the operator cancels it")
	if snap, ok := w.storage.Get(got.Status.JobStatus.RestorePath); assert.True(t, ok, "the rolled-back job's state exists") {
		assert.Equal(t, attempt, snap.JobID, "the rollback goes on from the failed attempt's newest checkpoint")
	}
}

// 66cb105 and 3c647a7, session jobs: a session job's rc.Settings.FlinkConfig is its
// FlinkSessionCluster's spec (with its own over it) as it is now, not the configuration of the
// Flink cluster its job runs on. The session job's update runs its new job on the running Flink
// cluster (the operator's default RETAIN_ON_CANCELLATION); while it runs, someone sets the session
// cluster's execution.checkpointing.externalized-checkpoint-retention to NO_EXTERNALIZED_CHECKPOINTS,
// which only a new Flink cluster will run with. The job FAILS on the old one, which keeps its
// checkpoints; goOnFromFailedJob reads the new spec's policy, calls them gone, and DeployFailed
// keeps the savepoint the update stopped the previous job with: the failed job's newer checkpoint,
// still on storage, is passed over (the very loss goOnFromFailedJob was written for, seed 9000160).
func TestS6BSessionClusterRetentionEditedWhileTheJobRunsDoesNotDropItsKeptCheckpoint(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	w.env.Config.JobStabilizationPeriod.Duration = 2 * time.Minute
	w.runSessionJobThenFailItsJobs(jar)

	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "a b c"} })
	attempt := ""
	w.runSessionsUntil("a's new job runs", func() bool {
		j := w.sessionJob("a")
		c := jobstate.Candidate(&j.Status.JobOwnerStatus)
		if j.Status.Phase == v1beta1.SessionJobSubmitting && c != nil && c.JobID != "" && j.Status.JobStatus.State == v1beta1.JobRunning {
			attempt = c.JobID
			return true
		}
		return false
	})
	for i := 0; i < 50; i++ { // 25 s: two checkpoints
		w.reconcileSessions()
	}
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) {
		c.Spec.FlinkConfig[flink.CheckpointRetentionKey] = "NO_EXTERNALIZED_CHECKPOINTS"
	})
	w.runSessionsUntil("a failed", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) })
	for i := 0; i < 10; i++ {
		w.reconcileSessions()
	}
	failedJob := w.sessionJob("a")
	next := failedJob.Status.Deployments.NextRestorePath
	kept := newestCheckpointInStorage(w, attempt)
	for _, r := range w.jobsOf("session", "a") {
		t.Logf("job %s on %s from %q: %v", r.JobID, r.JobManager, r.RestoredFrom, r.States)
	}
	t.Logf("%s", w.describeSessions())
	t.Logf("failed job %s, its newest checkpoint on storage %q; next restore %q; reason %q", attempt, kept, next, failedJob.Status.Reason)
	require.NotEmpty(t, kept, "the job's Flink cluster kept its checkpoints as it FAILED (RETAIN_ON_CANCELLATION)")
	assert.Equal(t, kept, next, "what is submitted next goes on from the failed job's newest checkpoint, which Flink kept")
}

// Same class, the restore policy itself (chooseRestore, older than 66cb105, which closed the class
// only for a failed attempt): jobs.AskFlinkState lists Flink's latest.completed as a state to restore
// without looking at "discarded", and the ledger keeps the checkpoints the operator recorded of the
// job while it ran. An application with NO_EXTERNALIZED_CHECKPOINTS (Flink's own default) and
// restartFailedJob: its job FAILS and Flink discards its checkpoints as it does; Running restarts it
// (recoverStoppedJob) from the newest of them anyway, whose storage is gone, rather than from the
// newest state that is left (the user's savepoint). Flink refuses the restore.
func TestS6BRestartOfAFailedJobDoesNotRestoreACheckpointFlinkDiscarded(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig[flink.CheckpointRetentionKey] = "NO_EXTERNALIZED_CHECKPOINTS"
		s.RestartFailedJob = true
	})
	saved := manualSavepoint(t, w, "wc", "s1")
	w.passes("wc", 120)
	app = w.get("wc")
	failed := app.Status.JobStatus.JobID
	require.True(t, w.jm(app, app.Status.DeployHash).FailJobNow(failed))
	got := w.runUntil("wc", "a job runs again or the restart gave up", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.JobID != failed && a.Status.JobStatus.State == v1beta1.JobRunning ||
			a.Status.Phase == v1beta1.PhaseDeployFailed || strings.Contains(a.Status.Reason, "Cannot find checkpoint")
	})
	w.passes("wc", 20)
	got = w.get("wc")
	logJobs(t, w, "wc")
	t.Logf("saved %s; phase %s reason %q; job %s (%s) from %s; next %q", saved, got.Status.Phase, got.Status.Reason,
		got.Status.JobStatus.JobID, got.Status.JobStatus.State, got.Status.JobStatus.RestorePath, got.Status.Deployments.NextRestorePath)
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		if j.JobID != failed && j.RestoredFrom != "" {
			assert.True(t, w.storage.Exists(j.RestoredFrom) || j.RestoredFrom == saved,
				"job %s was submitted from %s, which Flink discarded as job %s FAILED", j.JobID, j.RestoredFrom, failed)
		}
	}
	assert.Equal(t, v1beta1.JobRunning, got.Status.JobStatus.State, "the job runs again, from the newest state left (the savepoint)")
	assert.Equal(t, saved, got.Status.JobStatus.RestorePath)
}

// sessionJobRunningWithoutExternalizedCheckpoints is session job "a" (LastState) running on session
// cluster "session", whose Flink cluster runs with NO_EXTERNALIZED_CHECKPOINTS.
func sessionJobRunningWithoutExternalizedCheckpoints(t *testing.T) *world {
	w := newWorld(t)
	jar := w.withSessions()
	c := sessionCluster("session")
	c.Spec.FlinkConfig[flink.CheckpointRetentionKey] = "NO_EXTERNALIZED_CHECKPOINTS"
	w.createSessionCluster(c)
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState))
	w.runSessionsUntil("a running", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	return w
}

// A session job's Flink cluster keeps the checkpoint retention it was rendered with: the
// FlinkSessionCluster's spec, edited from NO_EXTERNALIZED_CHECKPOINTS to RETAIN_ON_CANCELLATION,
// says what only its next Flink cluster runs with. The session job moves its LastState job there;
// judged by the edited spec, the old job was cancelled as if its checkpoints survived the cancel,
// and Flink discarded them: the job on the new cluster started from older state. The JobManager
// Deployment says what its cluster was rendered with (flink.CheckpointRetentionAnnotation).
func TestASessionJobsStopFollowsTheRetentionItsFlinkClusterRunsWith(t *testing.T) {
	w := sessionJobRunningWithoutExternalizedCheckpoints(t)
	for i := 0; i < 60; i++ {
		w.reconcileSessions()
	}
	first := w.sessionJob("a").Status.JobStatus.JobID
	require.NotEmpty(t, first)
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) {
		c.Spec.FlinkConfig[flink.CheckpointRetentionKey] = flink.RetainOnCancellation
	})
	w.runSessionsUntil("a runs a new job", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.JobID != first && j.Status.JobStatus.JobID != ""
	})
	var firstEnd time.Time
	for _, r := range w.jobsOf("session", "a") {
		t.Logf("job %s on %s from %q: %v", r.JobID, r.JobManager, r.RestoredFrom, r.States)
		if r.JobID == first {
			firstEnd, _ = r.AliveUntil()
		}
	}
	next := w.sessionJob("a").Status.JobStatus
	snap, ok := w.storage.Get(next.RestorePath)
	require.True(t, ok, "the new job started from %q, which is on storage", next.RestorePath)
	// Its state is the old job's as it stopped: a savepoint taken as it stopped, or a checkpoint of
	// it, not an older state.
	assert.True(t, snap.JobID == first && !snap.CreatedAt.Before(firstEnd.Add(-15*time.Second)),
		"the new job started from %s (job %s, %s), older than job %s's stop at %s", snap.Path, snap.JobID, snap.CreatedAt, first, firstEnd)
}
