package flinkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// A state Flink could not find when a job was started from it is never offered again, and no older
// state is taken in its stead: the job may have completed newer state, which only Flink's storage
// holds. Explorer seed 11000118: a session job's recorded checkpoint was subsumed before the next
// record and its JobManager lost without HA; the job, submitted again from it, was refused, and the
// next spec change submitted from it again.
func TestAStateFlinkCouldNotFindIsNeverOfferedAgain(t *testing.T) {
	w, first, hash := sessionJobSubmitting(t, false)
	recorded := ledger.Of(&w.sessionJob("a").Status.Ledger).Checkpoint(first)
	require.NotNil(t, recorded)
	snap, ok := w.storage.Get(recorded.Path)
	require.True(t, ok)
	w.mu.Lock()
	jm := w.jms["session-"+hash]
	w.mu.Unlock()
	require.NotNil(t, jm)
	// Flink subsumed the recorded checkpoint, and lost the job with its JobManager process.
	w.storage.Delete(recorded.Path)
	jm.Restart()
	w.runSessionsUntil("a failed to deploy", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) })

	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = append(j.Spec.Job.Args, "--changed") })
	w.runSessionsUntil("a's changed spec handled", func() bool {
		j := w.sessionJob("a")
		return j.Status.ObservedGeneration == j.Generation && j.Status.Phase == v1beta1.SessionJobDeployFailed &&
			strings.Contains(j.Status.Reason, "gone from storage") || len(w.jobsOf("session", "a")) > 2
	})
	for i := 0; i < 20; i++ {
		w.reconcileSessions()
	}
	starts := 0
	for _, r := range w.jobsOf("session", "a") {
		if r.RestoredFrom == recorded.Path {
			starts++
		}
	}
	assert.Equal(t, 1, starts, "the state Flink could not find was offered again")
	j := w.sessionJob("a")
	assert.Equal(t, v1beta1.SessionJobDeployFailed, j.Status.Phase)
	assert.Contains(t, j.Status.Reason, "gone from storage")
	assert.True(t, ledger.Of(&j.Status.Ledger).IsGone(recorded.Path))

	// The user copies the checkpoint back and names it: the job starts from it.
	w.storage.PutBack(snap)
	w.env.Config.JobStabilizationPeriod.Duration = 10 * time.Second
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) {
		j.Spec.Job.InitialSavepointPath, j.Spec.Job.SavepointRedeployNonce = recorded.Path, "back"
	})
	w.runSessionsUntil("a runs from the state named", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.RestorePath == recorded.Path
	})
}

// A session job's job on a Flink cluster whose JobManager is gone comes back with Flink HA while the
// HA data of that cluster is left, whatever the FlinkSessionCluster deploys meanwhile: its spec
// turned HA off (a new Flink cluster) as the old cluster's JobManager went, and back on, which
// creates the old cluster again. Explorer seed 11000067: the session job took its job for gone once
// the new cluster ran, submitted another there, and HA recovered the first beside it.
func TestASessionJobWaitsForItsJobWhileFlinkHADataOfItsClusterIsLeft(t *testing.T) {
	w, first, hash := haSessionJobSubmitting(t)
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerNameOf("session", hash), metav1.DeleteOptions{}))
	haOff := func(c *v1beta1.FlinkSessionCluster) {
		delete(c.Spec.FlinkConfig, "high-availability.type")
		delete(c.Spec.FlinkConfig, "high-availability.storageDir")
	}
	w.updateSessionCluster("session", haOff)
	w.runSessionsUntil("the session cluster runs its new Flink cluster", func() bool {
		d := w.sessionCluster("session").Status.DeployHash
		return d != "" && d != hash
	})
	for i := 0; i < 200; i++ {
		w.reconcileSessions()
	}
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) {
		c.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
		c.Spec.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/ha"
	})
	for i := 0; i < 300; i++ {
		w.reconcileSessions()
	}
	for _, r := range w.jobsOf("session", "a") {
		t.Logf("job %s on %s from %q alive from %s", r.JobID, r.JobManager, r.RestoredFrom, r.AliveFrom())
	}
	t.Logf("first job %s; %s", first, w.describeSessions())
	w.assertOneJobEach("a")
}
