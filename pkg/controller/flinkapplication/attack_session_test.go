package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Attacks on session jobs' state.

// A FlinkSessionJob deleted with deleteMode None leaves its job running on the session cluster
// ("deleteMode None leaves Flink alone"): nothing of the namespace records it any more, but someone
// still needs it. A change of the session cluster's spec moves the jobs of its FlinkSessionJobs to a
// new Flink cluster and deletes the old one "when no job is left on it": that must count the jobs
// Flink runs there, not only those a FlinkSessionJob records, or the job left running is killed
// without a savepoint with the cluster under it.
func TestASessionClusterChangeNeverKillsAJobADeletedSessionJobLeftRunning(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	left := sessionJob("a", "session", jar, v1beta1.UpgradeModeSavepoint)
	left.UID = types.UID("11111111-1111-1111-1111-111111111111")
	left.Spec.DeleteMode = v1beta1.DeleteModeNone
	w.createSessionJob(left)
	w.runSessionsUntil("a running", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	job := w.sessionJob("a").Status.JobStatus.JobID
	w.deleteSessionJob("a")
	w.runSessionsUntil("a gone", func() bool { return w.sessionGone("a") })
	oldHash := w.sessionCluster("session").Status.DeployHash
	jm := w.jms["session-"+oldHash]
	require.NotNil(t, jm)

	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.Image = "flink:1.20.1" })
	w.runSessionsUntil("the new cluster runs", func() bool {
		c := w.sessionCluster("session")
		return c.Status.Phase == v1beta1.SessionClusterRunning && c.Status.DeployHash != oldHash
	})
	for end := w.clock.Now().Add(5 * time.Minute); w.clock.Now().Before(end); {
		w.reconcileSessions()
	}
	state := "gone with its JobManager"
	if jm := w.jms["session-"+oldHash]; jm != nil {
		for _, j := range jm.Jobs() {
			if j.ID == job {
				state = j.State
			}
		}
	}
	assert.Equal(t, "RUNNING", state, "job %s, which FlinkSessionJob a left running with deleteMode None, on the old Flink cluster %s; %s",
		job, oldHash, w.describeSessions())
}
