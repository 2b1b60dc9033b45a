package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// A FlinkSessionCluster's restartNonce starts a new Flink cluster, and every job moves to it with its
// state, as any other spec change does.
func TestASessionClustersRestartNonceStartsANewClusterAndMovesItsJobs(t *testing.T) {
	w, _ := runningJobs(t)
	w.clock.Step(30 * time.Second)
	w.reconcileSessions()
	oldHash := w.sessionCluster("session").Status.DeployHash
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.RestartNonce = "1" })
	w.runSessionsUntil("both jobs on the new cluster", func() bool {
		c := w.sessionCluster("session")
		return c.Status.DeployHash != oldHash && c.Status.Phase == v1beta1.SessionClusterRunning && w.jms["session-"+oldHash] == nil &&
			w.sessionJob("a").Status.JobStatus.ClusterHash == c.Status.DeployHash && w.sessionJob("a").Status.Phase == v1beta1.SessionJobRunning &&
			w.sessionJob("b").Status.JobStatus.ClusterHash == c.Status.DeployHash && w.sessionJob("b").Status.Phase == v1beta1.SessionJobRunning
	})
	assert.Contains(t, w.sessionJob("a").Status.JobStatus.RestorePath, "savepoint", "a moved with its savepoint")
	assert.Contains(t, w.sessionJob("b").Status.JobStatus.RestorePath, "/chk-", "b moved with its newest checkpoint")
	w.assertOneJobEach("a", "b")
}

// A session job with restartFailedJob whose job FAILED starts again from its newest state.
func TestASessionJobWithRestartFailedJobRestartsFromItsNewestState(t *testing.T) {
	w, _ := runningJobs(t)
	w.updateSessionJob("b", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.RestartFailedJob = true })
	w.clock.Step(30 * time.Second)
	w.reconcileSessions()
	failed := w.sessionJob("b").Status.JobStatus.JobID
	jm := w.jms["session-"+w.sessionCluster("session").Status.DeployHash]
	require.True(t, jm.FailJobNow(failed))
	w.runSessionsUntil("b runs a new job", func() bool {
		b := w.sessionJob("b")
		return b.Status.Phase == v1beta1.SessionJobRunning && b.Status.JobStatus.JobID != failed && b.Status.JobStatus.State == v1beta1.JobRunning
	})
	b := w.sessionJob("b")
	assert.Contains(t, b.Status.JobStatus.RestorePath, "/chk-", "from the failed job's newest checkpoint")
	assert.Contains(t, eventReasons(w.events()), "RestartingFailedJob")
	w.assertOneJobEach("a", "b")
}

// A FlinkSessionCluster whose new cluster never starts rests in DeployFailed with the running cluster
// and its jobs kept, and the cluster that failed is removed.
func TestASessionClusterThatFailsToStartRemovesItsFailedCluster(t *testing.T) {
	w, _ := runningJobs(t)
	oldHash := w.sessionCluster("session").Status.DeployHash
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.Image = "flink:broken" })
	failedHash := flink.SessionClusterHash(w.sessionCluster("session"))
	w.broken[flink.JobManagerNameOf("session", failedHash)] = true
	w.runSessionsUntil("DeployFailed", func() bool {
		return w.sessionCluster("session").Status.Phase == v1beta1.SessionClusterDeployFailed
	})
	w.runSessionsUntil("the failed cluster removed", func() bool { return !w.clusterOfOwnerExists("session", failedHash) })
	for i := 0; i < 20; i++ {
		w.reconcileSessions()
	}
	c := w.sessionCluster("session")
	assert.Equal(t, v1beta1.SessionClusterDeployFailed, c.Status.Phase, "it rests until the spec changes")
	assert.Equal(t, oldHash, c.Status.DeployHash, "the running cluster is kept")
	assert.Equal(t, failedHash, c.Status.FailedDeployHash)
	assert.True(t, w.sessionJobIn("a", v1beta1.SessionJobRunning) && w.sessionJobIn("b", v1beta1.SessionJobRunning), "its jobs run on")
	w.assertOneJobEach("a", "b")
}
