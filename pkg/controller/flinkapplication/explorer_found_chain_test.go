package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Defects the explorer found in chains of jobs, each job replacing the one before: the state a job
// started from must be carried to the job that replaces it, whatever became of the job in between.

// A job started again after its JobManager lost it, from the newest checkpoint of the lost job,
// that fails before it takes a checkpoint of its own leaves the state it started from as the
// newest there is (explorer seeds 1005 and 1026). Giving up on it keeps it the application's job,
// and the next job starts from that state, not from the older state the lost job had started from.
func TestAJobThatFailedAfterARestartLeavesTheStateItStartedFromToTheNextJob(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntil("wc", "the update running", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.RestorePath != "" && a.Status.Deployments.Candidate == nil
	})
	older := app.Status.JobStatus.RestorePath
	lost := app.Status.JobStatus.JobID
	w.clock.Step(25 * time.Second) // two periodic checkpoints of the job the JobManager loses
	w.passes("wc", 3)

	jm := w.jm(app, app.Status.DeployHash)
	jm.SetFaults(flinksim.Faults{RestartJobsEvery: 5 * time.Second}) // fails before its first checkpoint
	jm.Restart()                                                     // without HA: the job is lost
	w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	var restarted flinksim.JobRecord
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		if j.JobManager == jm.Name() && j.JobID != lost && j.RestoredFrom != "" {
			restarted = j
		}
	}
	require.NotEmpty(t, restarted.JobID, "a job started again after %s was lost", lost)
	newest, ok := w.storage.Get(restarted.RestoredFrom)
	require.True(t, ok)
	require.Equal(t, lost, newest.JobID, "started again from a checkpoint of the lost job")

	jm.SetFaults(flinksim.Faults{})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:3" })
	again := w.runUntil("wc", "the next update running", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != restarted.JobID && a.Status.JobStatus.State == v1beta1.JobRunning ||
			a.Status.Phase == v1beta1.PhaseDeployFailed && a.Status.FailedDeployHash != app.Status.DeployHash
	})
	require.Equal(t, v1beta1.PhaseRunning, again.Status.Phase, "reason %q", again.Status.Reason)
	assert.NotEqual(t, older, again.Status.JobStatus.RestorePath, "the state the lost job started from is older than what it completed")
	restored, ok := w.storage.Get(again.Status.JobStatus.RestorePath)
	require.True(t, ok, "restored from %q, which exists", again.Status.JobStatus.RestorePath)
	assert.False(t, restored.CreatedAt.Before(newest.CreatedAt), "restored from %s, taken %s, older than %s, taken %s",
		restored.Path, restored.CreatedAt, newest.Path, newest.CreatedAt)
}

// The same for a FlinkSessionJob (explorer seed 1005, upgradeMode Savepoint): the job restarted
// after the session cluster's JobManager lost its job fails before its first checkpoint, and the
// job of the next change starts from what the restarted job started from.
func TestASessionJobThatFailedAfterARestartLeavesTheStateItStartedFromToTheNextJob(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeSavepoint))
	w.runSessionsUntil("the job running", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	first := w.sessionJob("a").Status.JobStatus.JobID
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "c d"} })
	w.runSessionsUntil("the update running", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.JobID != first
	})
	a := w.sessionJob("a")
	older, lost := a.Status.JobStatus.RestorePath, a.Status.JobStatus.JobID
	require.NotEmpty(t, older)
	for end := w.clock.Now().Add(25 * time.Second); w.clock.Now().Before(end); {
		w.reconcileSessions() // two periodic checkpoints of the job the JobManager loses, recorded
	}

	jm := w.jms["session-"+w.sessionCluster("session").Status.DeployHash]
	require.NotNil(t, jm)
	jm.SetFaults(flinksim.Faults{FailJobsAfter: 2 * time.Second}) // fails before its first checkpoint
	jm.Restart()                                                  // without HA: the job is lost
	w.runSessionsUntil("the restarted job given up on", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) })
	var restarted flinksim.JobRecord
	for _, j := range w.jobsOf("session", "a") {
		if j.JobID != lost && j.JobID != first && j.RestoredFrom != "" {
			restarted = j
		}
	}
	require.NotEmpty(t, restarted.JobID, "a job started again after %s was lost", lost)
	newest, ok := w.storage.Get(restarted.RestoredFrom)
	require.True(t, ok)
	require.Equal(t, lost, newest.JobID, "started again from a checkpoint of the lost job")

	jm.SetFaults(flinksim.Faults{})
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "e f"} })
	w.runSessionsUntil("the next change done", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.JobID != restarted.JobID && j.Status.JobStatus.State == v1beta1.JobRunning ||
			j.Status.Phase == v1beta1.SessionJobDeployFailed && j.Generation != a.Generation+1
	})
	again := w.sessionJob("a")
	require.Equal(t, v1beta1.SessionJobRunning, again.Status.Phase, "reason %q", again.Status.Reason)
	assert.NotEqual(t, older, again.Status.JobStatus.RestorePath, "the state the lost job started from is older than what it completed")
	restored, ok := w.storage.Get(again.Status.JobStatus.RestorePath)
	require.True(t, ok, "restored from %q, which exists", again.Status.JobStatus.RestorePath)
	assert.False(t, restored.CreatedAt.Before(newest.CreatedAt), "restored from %s, taken %s, older than %s, taken %s",
		restored.Path, restored.CreatedAt, newest.Path, newest.CreatedAt)
	w.assertOneJobEach("a")
}
