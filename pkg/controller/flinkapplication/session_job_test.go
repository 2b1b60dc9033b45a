package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// runningJobs starts a session cluster with two session jobs, a (Savepoint) and b (LastState), and
// waits until both run.
func runningJobs(t *testing.T) (*world, string) {
	w := newWorld(t)
	jar := w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeSavepoint))
	w.createSessionJob(sessionJob("b", "session", jar, v1beta1.UpgradeModeLastState))
	w.runSessionsUntil("both jobs running", func() bool {
		return w.sessionJobIn("a", v1beta1.SessionJobRunning) && w.sessionJobIn("b", v1beta1.SessionJobRunning)
	})
	return w, jar
}

// assertOneJobEach checks that no session job ever had two jobs alive at once and that no
// transition was refused.
func (w *world) assertOneJobEach(jobs ...string) {
	w.t.Helper()
	for _, j := range jobs {
		assert.Empty(w.t, flinksim.Overlapping(w.jobsOf("session", j)), "never two live jobs of %s", j)
	}
	assert.NotContains(w.t, eventReasons(w.events()), "InvalidTransition")
}

func TestSessionJobsRunOnOneClusterFromUploadedJars(t *testing.T) {
	w, _ := runningJobs(t)
	a, b := w.sessionJob("a"), w.sessionJob("b")
	c := w.sessionCluster("session")
	require.NotEmpty(t, c.Status.DeployHash)
	assert.Len(t, c.Status.Jobs, 2)
	jm := w.jms["session-"+c.Status.DeployHash]
	require.NotNil(t, jm)
	assert.Len(t, jm.Jobs(), 2, "both jobs on the one JobManager")
	assert.Empty(t, jm.UploadedJars(), "jars are deleted once their job runs")
	assert.NotEqual(t, a.Status.JobStatus.JobID, b.Status.JobStatus.JobID)
	assert.True(t, startedByApp(sessionJobView(a, nil), a.Status.JobStatus.JobID), "job id carries the session job's prefix")
	assert.Equal(t, v1beta1.JobRunning, a.Status.JobStatus.State)
	w.assertOneJobEach("a", "b")
}

func TestSessionJobUpgradesTouchOnlyTheirJob(t *testing.T) {
	w, _ := runningJobs(t)
	w.reconcileSessions()
	before := w.sessionJob("b").Status.JobStatus

	// Savepoint: the new job of a starts from the savepoint its old job was stopped with.
	oldA := w.sessionJob("a").Status.JobStatus.JobID
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "c d"} })
	w.runSessionsUntil("a updated", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.JobID != oldA
	})
	a := w.sessionJob("a")
	assert.Contains(t, a.Status.JobStatus.RestorePath, "savepoint", "a restored from its savepoint")
	assert.NotContains(t, a.Status.JobStatus.RestorePath, "/chk-")
	after := w.sessionJob("b").Status.JobStatus
	assert.Equal(t, before.JobID, after.JobID, "b untouched by a's update")
	assert.Equal(t, before.JobRestartCount, after.JobRestartCount)

	// LastState: b cancels and restores its newest retained checkpoint; a is untouched.
	w.clock.Step(30 * 1e9)
	w.reconcileSessions()
	aJob := w.sessionJob("a").Status.JobStatus.JobID
	oldB := w.sessionJob("b").Status.JobStatus.JobID
	w.updateSessionJob("b", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "e f"} })
	w.runSessionsUntil("b updated", func() bool {
		j := w.sessionJob("b")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.JobID != oldB
	})
	b := w.sessionJob("b")
	assert.Contains(t, b.Status.JobStatus.RestorePath, "/chk-", "b restored from a retained checkpoint")
	assert.Equal(t, aJob, w.sessionJob("a").Status.JobStatus.JobID, "a untouched by b's update")
	assert.True(t, historyHasSessionPhase(b, v1beta1.SessionJobCancelling), "LastState stops by cancelling")

	// Stateless: a's next job starts empty.
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) {
		j.Spec.Job.UpgradeMode = v1beta1.UpgradeModeStateless
		j.Spec.Job.Args = []string{"--input", "g"}
	})
	w.runSessionsUntil("a updated statelessly", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.JobID != aJob
	})
	assert.Empty(t, w.sessionJob("a").Status.JobStatus.RestorePath)
	w.assertOneJobEach("a", "b")
}

func historyHasSessionPhase(j *v1beta1.FlinkSessionJob, phase v1beta1.FlinkSessionJobPhase) bool {
	for _, h := range j.Status.History {
		if h.To == phase {
			return true
		}
	}
	return false
}

