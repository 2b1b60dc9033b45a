package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// sessionJobThatNeverRunsStable starts a session job whose tasks fail every few seconds, so that it
// never runs for the stabilization period (nor takes a checkpoint), and returns when its job was
// first submitted.
func sessionJobThatNeverRunsStable(t *testing.T, mode v1beta1.UpgradeMode) (*world, time.Time) {
	w := newWorld(t)
	jar := w.withSessions()
	w.faults = flinksim.Faults{RestartJobsEvery: 5 * time.Second} // never stable for 10 s
	w.createSessionCluster(sessionCluster("session"))
	w.createSessionJob(sessionJob("a", "session", jar, mode))
	w.runSessionsUntil("the job submitted", func() bool { return len(w.jobsOf("session", "a")) > 0 })
	return w, w.clock.Now()
}

// givenUpOnAJobThatNeverRunsStable runs a session job that never runs stable until its Submitting
// gave up, and returns the job it had submitted then.
func givenUpOnAJobThatNeverRunsStable(t *testing.T, mode v1beta1.UpgradeMode) (*world, flinksim.JobRecord) {
	w, _ := sessionJobThatNeverRunsStable(t, mode)
	w.runSessionsUntil("given up", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) })
	jobs := w.jobsOf("session", "a")
	require.Len(t, jobs, 1)
	_, ended := jobs[0].AliveUntil()
	require.False(t, ended, "the job that never ran stable runs on: restarting is running")
	return w, jobs[0]
}

// A session job gives its Submitting up with the job it submitted still its own: the next change
// stops that job before it submits the new spec's, and does not take it for the new spec's job
// (the fence adopts a live job of the object as the one it was about to submit). Stateless: the job
// took no checkpoint, and LastState would rightly refuse to go on without one.
func TestASessionJobThatGaveUpOnItsJobStopsItBeforeTheNextSpec(t *testing.T) {
	w, failed := givenUpOnAJobThatNeverRunsStable(t, v1beta1.UpgradeModeStateless)
	assert.Equal(t, failed.JobID, w.sessionJob("a").Status.JobStatus.JobID, "status still shows the job")
	w.faults = flinksim.Faults{}
	for _, jm := range w.jms {
		jm.SetFaults(w.faults)
	}
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "c d"} })
	w.runSessionsUntil("the new spec runs", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.JobID != failed.JobID
	})
	jobs := w.jobsOf("session", "a")
	require.Len(t, jobs, 2, "the new spec's job is a job of its own")
	_, ended := jobs[0].AliveUntil()
	assert.True(t, ended, "the job given up on is stopped")
	assert.NotContains(t, eventReasons(w.events()), "JobAdopted")
	w.assertOneJobEach("a")
}

// A session job that gave up on its job and is deleted stops that job: forgotten, it ran on in the
// shared cluster after its object was gone.
func TestASessionJobThatGaveUpOnItsJobStopsItWhenDeleted(t *testing.T) {
	w, failed := givenUpOnAJobThatNeverRunsStable(t, v1beta1.UpgradeModeLastState)
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.DeleteMode = v1beta1.DeleteModeForceCancel })
	w.deleteSessionJob("a")
	w.runSessionsUntil("the session job gone", func() bool { return w.sessionGone("a") })
	jobs := w.jobsOf("session", "a")
	require.Len(t, jobs, 1)
	_, ended := jobs[0].AliveUntil()
	assert.True(t, ended, "job %s stopped with its object", failed.JobID)
}

// A session job whose job keeps restarting gives up its Submitting readinessTimeout after the job's
// tasks first ran, with a Warning: every restart deploys the tasks again, and counting the deadline
// from the newest deployment moved it on with each restart, for good (found by explorer seeds 1049,
// 1052, 1060, 1067 and 1072: a FlinkSessionJob in Submitting long past its deadline, without a
// Warning).
func TestASessionJobWhoseJobKeepsRestartingGivesUpInTime(t *testing.T) {
	w, submitted := sessionJobThatNeverRunsStable(t, v1beta1.UpgradeModeLastState)
	timeout := w.env.Config.ReadinessTimeout.Duration
	end := submitted.Add(timeout + 2*time.Minute)
	for w.clock.Now().Before(end) && !w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) {
		w.reconcileSessions()
	}
	j := w.sessionJob("a")
	require.Equal(t, v1beta1.SessionJobDeployFailed, j.Status.Phase, "gave up within %s of the submission: %s", timeout+2*time.Minute, j.Status.Reason)
	assert.Contains(t, j.Status.Reason, "Submitting did not complete within")
	warned := false
	for _, e := range w.events() {
		warned = warned || strings.HasPrefix(e, "Warning DeployFailed ")
	}
	assert.True(t, warned, "a Warning names the reason")
}

// A session job whose tasks wait for slots says so with a Warning as the wait begins, and waits past
// its readiness deadline; once its tasks got their slots, its deadline counts from then: a job that
// then keeps restarting gives up readinessTimeout later, neither at once nor never.
func TestASessionJobThatWaitedForSlotsHasItsDeadlineFromWhenItGotThem(t *testing.T) {
	w, jar := runningJobs(t)
	w.faults = flinksim.Faults{RestartJobsEvery: 5 * time.Second}
	for _, jm := range w.jms {
		jm.SetFaults(w.faults) // for jobs submitted from now on: the big one
	}
	w.events()
	big := sessionJob("big", "session", jar, v1beta1.UpgradeModeLastState)
	three := int32(3)
	big.Spec.Job.Parallelism = &three
	w.createSessionJob(big)
	timeout := w.env.Config.ReadinessTimeout.Duration
	end := w.clock.Now().Add(2 * timeout)
	for w.clock.Now().Before(end) {
		w.reconcileSessions()
	}
	require.Equal(t, v1beta1.SessionJobSubmitting, w.sessionJob("big").Status.Phase)
	warnings := 0
	for _, e := range w.events() {
		if strings.HasPrefix(e, "Warning WaitingForSlots ") {
			warnings++
		}
	}
	assert.Equal(t, 1, warnings, "the wait is said once, as it begins")

	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.State = v1beta1.JobStateSuspended })
	w.runSessionsUntil("a suspended, its slot free", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobSuspended) })
	granted := w.clock.Now()
	w.runSessionsUntil("given up", func() bool { return !w.sessionJobIn("big", v1beta1.SessionJobSubmitting) })
	j := w.sessionJob("big")
	assert.Equal(t, v1beta1.SessionJobDeployFailed, j.Status.Phase, j.Status.Reason)
	took := w.clock.Since(granted)
	assert.GreaterOrEqual(t, took, timeout-time.Minute, "the wait for slots does not count")
	assert.LessOrEqual(t, took, timeout+time.Minute, "restarts do not move the deadline")
}

// Only a wait for slots is left out of a session job's Submitting deadline: the time its submission
// takes to show up counts, as an application's does, and a job that then keeps restarting gives up
// readinessTimeout after its Submitting began (found by explorer seed 1104: the deadline counted
// from the tasks' first start, minutes after the phase began, outlasted the phase's bound).
func TestASessionJobsSlowSubmissionCountsAgainstItsDeadline(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	w.faults = flinksim.Faults{SubmitRegistersAfter: 2 * time.Minute, RestartJobsEvery: 5 * time.Second}
	w.createSessionCluster(sessionCluster("session"))
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState))
	w.runSessionsUntil("submitting", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobSubmitting) })
	began := w.sessionJob("a").Status.PhaseStartedAt.Time
	w.runSessionsUntil("given up", func() bool { return !w.sessionJobIn("a", v1beta1.SessionJobSubmitting) })
	j := w.sessionJob("a")
	require.Equal(t, v1beta1.SessionJobDeployFailed, j.Status.Phase, j.Status.Reason)
	require.NotEmpty(t, w.jobsOf("session", "a"), "the job did show up")
	timeout := w.env.Config.ReadinessTimeout.Duration
	assert.LessOrEqual(t, w.clock.Since(began), timeout+time.Minute, "the deadline counts from when Submitting began")
}

// A session job waiting for its session cluster waits as long as it takes, but not silently: past a
// cluster start's deadline, a Warning Event and its Ready condition say what it waits for, once.
func TestASessionJobWaitingLongForItsClusterSaysSo(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState))
	end := w.clock.Now().Add(3 * w.env.Config.ClusterStartTimeout.Duration)
	for w.clock.Now().Before(end) {
		w.reconcileSessions()
	}
	j := w.sessionJob("a")
	require.Equal(t, v1beta1.SessionJobWaitingForCluster, j.Status.Phase)
	ready := meta.FindStatusCondition(j.Status.Conditions, v1beta1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, "SessionClusterNotReady", ready.Reason)
	assert.Contains(t, ready.Message, "FlinkSessionCluster session does not exist")
	warnings := 0
	for _, e := range w.events() {
		if strings.HasPrefix(e, "Warning SessionClusterNotReady ") {
			warnings++
		}
	}
	assert.Equal(t, 1, warnings, "said once")

	w.createSessionCluster(sessionCluster("session"))
	w.runSessionsUntil("the job runs", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
}

// A session job that gives its Submitting up before its job was ever submitted keeps no job: the
// JobManager said it has none by that id, and nothing was sent that could still bring one up. The
// next change submits at once, instead of stopping a job that is not there.
func TestASessionJobThatGaveUpBeforeSubmittingKeepsNoJob(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	w.runSessionsUntil("the cluster runs", func() bool { return w.sessionCluster("session").Status.Phase == v1beta1.SessionClusterRunning })
	for _, jm := range w.jms {
		// The fence cannot list the cluster's jobs: nothing is submitted.
		jm.SetFaults(flinksim.Faults{FailFirst: map[string]int{flinksim.EndpointJobs: 1000}})
	}
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState))
	w.runSessionsUntil("given up", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) })
	require.Empty(t, w.jobsOf("session", "a"), "nothing was submitted")
	assert.Empty(t, w.sessionJob("a").Status.JobStatus.JobID, "no job is shown")
	for _, jm := range w.jms {
		jm.SetFaults(flinksim.Faults{})
	}
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "c d"} })
	w.runSessionsUntil("the job runs", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	for _, h := range w.sessionJob("a").Status.History {
		assert.NotEqual(t, v1beta1.SessionJobCancelling, h.To, "nothing to stop")
	}
}
