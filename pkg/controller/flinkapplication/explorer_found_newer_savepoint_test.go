package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Defects the randomized explorer found where a job lost with its JobManager started again from a
// checkpoint older than a savepoint its predecessor had completed; the comment names the seed.

// A job that restored its newest checkpoint on its own (its tasks failed, Flink restarted it) after
// a savepoint had that checkpoint dated by Flink's time of the restore (explorer seed 1090055), which
// made it newer than the savepoint. When the job was then lost with its JobManager, it started
// again from the checkpoint: the checkpoint is as old as Flink took it, which the operator recorded.
func TestAJobLostAfterRestoringItsCheckpointOnItsOwnStartsFromItsNewerSavepoint(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jobID := app.Status.JobStatus.JobID
	// Another checkpoint after the first one recorded, which the checkpoint book takes.
	w.clock.Step(10 * time.Second)
	w.passes("wc", 3)

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "one" })
	w.runUntil("wc", "the savepoint completed", func(a *v1beta1.FlinkApplication) bool {
		return completedSavepoint(a, v1beta1.SavepointManual) != ""
	})
	savepoint := w.savepointOf(jobID)
	require.NotNil(t, savepoint)

	// Its TaskManagers go before its next checkpoint: Flink restores the checkpoint before the
	// savepoint, and the job waits for slots, checkpointing nothing, as the operator reads that
	// restore.
	w.broken[flink.TaskManagerName(app, app.Status.DeployHash)] = true
	restored := w.runUntil("wc", "Flink's restore read", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.RestorePath != ""
	}).Status.JobStatus.RestorePath
	cp, ok := w.storage.Get(restored)
	require.True(t, ok, "Flink restored %q, which exists", restored)
	require.Less(t, cp.CheckpointID, savepoint.CheckpointID, "Flink restored %s, older than savepoint %s", cp.Path, savepoint.Path)

	// Then its JobManager goes too, and the TaskManagers come back.
	delete(w.broken, flink.TaskManagerName(app, app.Status.DeployHash))
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(app, app.Status.DeployHash), metav1.DeleteOptions{}))
	again := w.runUntil("wc", "running again", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != jobID && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	got, ok := w.storage.Get(again.Status.JobStatus.RestorePath)
	require.True(t, ok, "restored from %q, which exists", again.Status.JobStatus.RestorePath)
	assert.False(t, got.CheckpointID < savepoint.CheckpointID, "restored %s (checkpoint %d), older than savepoint %s (checkpoint %d)",
		got.Path, got.CheckpointID, savepoint.Path, savepoint.CheckpointID)
}

// A savepointRedeployNonce the user sets as the JobManager Deployment goes names the state of the
// update it asks for, not of the job the operator restarts in place under the stable spec (explorer
// seed 90042: a manual savepoint completed unread, and the restart in place went back to an older
// checkpoint). The lost job is not started again from older state than the savepoint in doubt: the
// application fails, saying which savepoint is in doubt, until the user names the state again.
func TestAJobLostWithASavepointInDoubtIsNotRestartedInPlaceForAPendingRedeploy(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jobID := app.Status.JobStatus.JobID
	first, inDoubt := w.savepointInDoubt(app)

	// The JobManager Deployment goes as the user asks for a redeploy from the first savepoint.
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(app, app.Status.DeployHash), metav1.DeleteOptions{}))
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = first, "redeploy"
	})
	got := w.runUntil("wc", "the job started again, or the application failed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseDeployFailed ||
			a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != jobID && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		if j.JobID == jobID {
			continue
		}
		s, ok := w.storage.Get(j.RestoredFrom)
		assert.False(t, !ok || s.CheckpointID < inDoubt.CheckpointID, "job %s started from %q, older than savepoint %s in doubt",
			j.JobID, j.RestoredFrom, inDoubt.Path)
	}
	require.Equal(t, v1beta1.PhaseDeployFailed, got.Status.Phase, "not started again from %s", got.Status.JobStatus.RestorePath)
	assert.Contains(t, got.Status.Reason, "savepoint", "it says which savepoint is in doubt")

	// The user names the state again, and the job starts from it.
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointRedeployNonce = "again" })
	again := w.runUntil("wc", "running from the named savepoint", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != jobID && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	assert.Equal(t, first, again.Status.JobStatus.RestorePath)
}

// savepointInDoubt has the running application "wc" take a first manual savepoint, checkpoint on
// for a while, and take a second savepoint that Flink completes while every answer about its end
// fails: the operator holds the first savepoint as completed and the second in doubt.
func (w *world) savepointInDoubt(app *v1beta1.FlinkApplication) (first string, inDoubt *flinksim.Snapshot) {
	t := w.t
	t.Helper()
	jobID := app.Status.JobStatus.JobID
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "first" })
	named := w.runUntil("wc", "a first savepoint completed", func(a *v1beta1.FlinkApplication) bool {
		return completedSavepoint(a, v1beta1.SavepointManual) != ""
	})
	first = completedSavepoint(named, v1beta1.SavepointManual)
	// The job checkpoints on, and the operator records a checkpoint newer than the first savepoint.
	w.passes("wc", 240)

	// A second savepoint completes in Flink, and the operator never reads its end.
	jm := w.jm(app, app.Status.DeployHash)
	triggers := jm.SavepointTriggers()
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "second" })
	for i := 0; i < 10 && jm.SavepointTriggers() == triggers; i++ {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, triggers+1, jm.SavepointTriggers(), "the trigger is sent")
	jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointSavepointStatus: 1}})
	for i := 0; i < 20 && (inDoubt == nil || inDoubt.Path == first); i++ {
		_, _ = w.reconcile("wc")
		inDoubt = w.savepointOf(jobID)
	}
	require.NotEqual(t, first, inDoubt.Path, "Flink completed the second savepoint")
	return first, inDoubt
}
