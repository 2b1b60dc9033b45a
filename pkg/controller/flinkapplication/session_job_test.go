package flinkapplication

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
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
	assert.True(t, jobstate.OwnerOf(sessionJobKindName, &a.ObjectMeta).Started(a.Status.JobStatus.JobID), "job id carries the session job's prefix")
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

func TestSessionClusterChangeCarriesEveryJobAcrossWithItsState(t *testing.T) {
	w, _ := runningJobs(t)
	w.clock.Step(30 * 1e9)
	w.reconcileSessions()
	oldHash := w.sessionCluster("session").Status.DeployHash
	oldA, oldB := w.sessionJob("a").Status.JobStatus.JobID, w.sessionJob("b").Status.JobStatus.JobID
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.Image = "flink:1.20.1" })
	w.runSessionsUntil("both jobs on the new cluster, the old one gone", func() bool {
		c := w.sessionCluster("session")
		a, b := w.sessionJob("a"), w.sessionJob("b")
		return c.Status.Phase == v1beta1.SessionClusterRunning && c.Status.DeployHash != oldHash && w.jms["session-"+oldHash] == nil &&
			a.Status.Phase == v1beta1.SessionJobRunning && a.Status.JobStatus.ClusterHash == c.Status.DeployHash &&
			b.Status.Phase == v1beta1.SessionJobRunning && b.Status.JobStatus.ClusterHash == c.Status.DeployHash
	})
	a, b := w.sessionJob("a"), w.sessionJob("b")
	assert.NotEqual(t, oldA, a.Status.JobStatus.JobID)
	assert.NotEqual(t, oldB, b.Status.JobStatus.JobID)
	assert.Contains(t, a.Status.JobStatus.RestorePath, "savepoint", "a moved with its savepoint")
	assert.Contains(t, b.Status.JobStatus.RestorePath, "/chk-", "b moved with its newest checkpoint")
	w.assertOneJobEach("a", "b")
}

func TestSessionJobSuspendResumeAndDeleteRecordTheirState(t *testing.T) {
	w, _ := runningJobs(t)
	old := w.sessionJob("a").Status.JobStatus.JobID
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.State = v1beta1.JobStateSuspended })
	w.runSessionsUntil("a suspended", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobSuspended) })
	suspendedWith := w.sessionJob("a").Status.SavepointPath
	require.Contains(t, suspendedWith, "savepoint")
	assert.Equal(t, v1beta1.SessionJobRunning, w.sessionJob("b").Status.Phase)

	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.State = v1beta1.JobStateRunning })
	w.runSessionsUntil("a resumed", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.JobID != old
	})
	assert.Equal(t, suspendedWith, w.sessionJob("a").Status.JobStatus.RestorePath)

	// The cluster's deletion is held while jobs name it, saying which.
	w.deleteSessionCluster("session")
	w.runSessionsUntil("cluster deletion held", func() bool {
		c := w.sessionCluster("session")
		return c.Status.Phase == v1beta1.SessionClusterDeleting && strings.Contains(c.Status.Reason, "a, b")
	})
	assert.Equal(t, v1beta1.SessionJobRunning, w.sessionJob("a").Status.Phase, "jobs keep running while the cluster's deletion waits")

	w.deleteSessionJob("a")
	w.deleteSessionJob("b")
	w.runSessionsUntil("jobs and cluster gone", func() bool {
		_, err := w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Get(context.Background(), "session", metav1.GetOptions{})
		return w.sessionGone("a") && w.sessionGone("b") && apierrors.IsNotFound(err)
	})
	var finals []string
	for _, e := range w.events() {
		if strings.Contains(e, "FinalSavepoint ") {
			finals = append(finals, e)
		}
	}
	assert.Len(t, finals, 2, "each deleted job recorded its final savepoint: %v", finals)
	w.assertOneJobEach("a", "b")
}

func TestSessionJobJarGuardsRefuseBeforeAnyJobRuns(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	private := sessionJob("private", "session", "http://10.0.0.1/wordcount.jar", v1beta1.UpgradeModeSavepoint)
	wrongSum := sessionJob("wrongsum", "session", jar, v1beta1.UpgradeModeSavepoint)
	wrongSum.Spec.Job.JarSHA256 = strings.Repeat("0", 64)
	rightSum := sessionJob("rightsum", "session", jar, v1beta1.UpgradeModeSavepoint)
	rightSum.Spec.Job.JarSHA256 = testJarSHA256()
	w.createSessionJob(private)
	w.createSessionJob(wrongSum)
	w.createSessionJob(rightSum)
	w.runSessionsUntil("guards decided", func() bool {
		return w.sessionJobIn("private", v1beta1.SessionJobDeployFailed) && w.sessionJobIn("wrongsum", v1beta1.SessionJobDeployFailed) &&
			w.sessionJobIn("rightsum", v1beta1.SessionJobRunning)
	})
	assert.Contains(t, w.sessionJob("private").Status.Reason, "10.0.0.1")
	assert.Contains(t, w.sessionJob("wrongsum").Status.Reason, "SHA-256")
	assert.Empty(t, w.jobsOf("session", "private"), "no job for a refused jar")
	assert.Empty(t, w.jobsOf("session", "wrongsum"), "no job for a jar whose checksum differs")
}

func TestSessionJobsWaitForTheirClusterWithTheirStateAndResume(t *testing.T) {
	w, _ := runningJobs(t)
	w.clock.Step(30 * 1e9)
	w.reconcileSessions()
	cluster := w.sessionCluster("session")
	// The cluster goes away under its jobs (its finalizer removed by hand, its objects collected).
	cluster.Finalizers = nil
	_, err := w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Update(context.Background(), cluster, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Delete(context.Background(), "session", metav1.DeleteOptions{}))
	deploys, err := w.kube.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	for _, d := range deploys.Items {
		require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), d.Name, metav1.DeleteOptions{}))
	}
	w.runSessionsUntil("jobs wait for their cluster", func() bool {
		return w.sessionJobIn("a", v1beta1.SessionJobWaitingForCluster) && w.sessionJobIn("b", v1beta1.SessionJobWaitingForCluster)
	})
	a := w.sessionJob("a")
	assert.Contains(t, a.Status.Deployments.NextRestorePath, "/chk-", "the state to resume from is recorded")
	assert.Empty(t, a.Status.SavepointPath, "savepointPath never names a checkpoint")
	assert.Contains(t, a.Status.Reason, "does not exist")

	w.createSessionCluster(sessionCluster("session"))
	w.runSessionsUntil("jobs resumed", func() bool {
		return w.sessionJobIn("a", v1beta1.SessionJobRunning) && w.sessionJobIn("b", v1beta1.SessionJobRunning)
	})
	assert.Equal(t, a.Status.Deployments.NextRestorePath, w.sessionJob("a").Status.JobStatus.RestorePath)
	w.assertOneJobEach("a", "b")
}

func TestSessionJobWithoutFreeSlotsWaitsInsteadOfFailing(t *testing.T) {
	w, jar := runningJobs(t)
	big := sessionJob("big", "session", jar, v1beta1.UpgradeModeSavepoint)
	three := int32(3)
	big.Spec.Job.Parallelism = &three
	w.createSessionJob(big)
	end := w.clock.Now().Add(2 * w.env.Config.ReadinessTimeout.Duration)
	for w.clock.Now().Before(end) {
		w.reconcileSessions()
	}
	j := w.sessionJob("big")
	assert.Equal(t, v1beta1.SessionJobSubmitting, j.Status.Phase, "waits, past the readiness timeout: %s", j.Status.Reason)
	assert.Contains(t, j.Status.Reason, "task slots")
	ready := meta.FindStatusCondition(j.Status.Conditions, v1beta1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, "WaitingForSlots", ready.Reason)

	// Slots come free when a job goes: the waiting job runs.
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.State = v1beta1.JobStateSuspended })
	w.runSessionsUntil("big runs", func() bool { return w.sessionJobIn("big", v1beta1.SessionJobRunning) })
}

func TestSessionClusterChangeIsHeldByAJobThatCannotBeStoppedSafely(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	w.faults = flinksim.Faults{FailSavepoints: true}
	c := sessionCluster("session")
	// No checkpoints, and savepoints fail: b (LastState) has no state to carry across.
	delete(c.Spec.FlinkConfig, "execution.checkpointing.interval")
	w.createSessionCluster(c)
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeStateless))
	w.createSessionJob(sessionJob("b", "session", jar, v1beta1.UpgradeModeLastState))
	w.runSessionsUntil("both jobs running", func() bool {
		return w.sessionJobIn("a", v1beta1.SessionJobRunning) && w.sessionJobIn("b", v1beta1.SessionJobRunning)
	})
	oldHash := w.sessionCluster("session").Status.DeployHash
	oldB := w.sessionJob("b").Status.JobStatus.JobID
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.Image = "flink:1.20.1" })
	w.runSessionsUntil("a moved, b blocked", func() bool {
		a := w.sessionJob("a")
		return a.Status.Phase == v1beta1.SessionJobRunning && a.Status.JobStatus.ClusterHash != oldHash &&
			w.sessionJobIn("b", v1beta1.SessionJobDeployFailed)
	})
	for i := 0; i < 20; i++ {
		w.reconcileSessions()
	}
	b, cluster := w.sessionJob("b"), w.sessionCluster("session")
	assert.Equal(t, oldB, b.Status.JobStatus.JobID, "b keeps its job")
	assert.Equal(t, v1beta1.JobRunning, b.Status.JobStatus.State, "b's job keeps running: %s", b.Status.Reason)
	assert.Contains(t, b.Status.Reason, "spec.job.fallbackWithoutState", "the reason names the session job's own field")
	assert.NotNil(t, w.jms["session-"+oldHash], "the old cluster is kept while b's job runs there")
	assert.Contains(t, cluster.Status.Reason, "b (DeployFailed)", "the cluster names the job that holds it")
	progressing := meta.FindStatusCondition(cluster.Status.Conditions, v1beta1.ConditionProgressing)
	require.NotNil(t, progressing)
	assert.Equal(t, "JobsMoving", progressing.Reason)
	w.assertOneJobEach("a", "b")
}

// spec.job.savepointTriggerNonce takes one savepoint of the session job, which keeps running; the
// other job on the cluster is not touched, and status.savepoints records it.
func TestSessionJobSavepointOnDemand(t *testing.T) {
	w, _ := runningJobs(t)
	w.reconcileSessions()
	a, b := w.sessionJob("a").Status.JobStatus, w.sessionJob("b").Status.JobStatus
	jm := w.jms["session-"+w.sessionCluster("session").Status.DeployHash]
	triggers := jm.SavepointTriggers()

	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.SavepointTriggerNonce = "now" })
	w.runSessionsUntil("a's savepoint recorded", func() bool { return len(w.sessionJob("a").Status.Savepoints) > 0 })
	w.reconcileSessions()
	job := w.sessionJob("a")
	require.Len(t, job.Status.Savepoints, 1)
	r := job.Status.Savepoints[0]
	assert.Equal(t, v1beta1.SavepointManual, r.Trigger)
	assert.Equal(t, "Completed", r.Result)
	assert.Contains(t, r.Path, "savepoint-")
	assert.Equal(t, v1beta1.Nonce("now"), job.Status.SavepointTriggerNonce)
	assert.Equal(t, v1beta1.SessionJobRunning, job.Status.Phase)
	assert.Equal(t, a.JobID, job.Status.JobStatus.JobID, "a keeps running")
	assert.Equal(t, b.JobID, w.sessionJob("b").Status.JobStatus.JobID, "b untouched")
	assert.Empty(t, w.sessionJob("b").Status.Savepoints)
	assert.Equal(t, triggers+1, jm.SavepointTriggers(), "one savepoint for one nonce")
	w.assertOneJobEach("a", "b")
}
