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

// running deploys a wordcount and returns it Running with its job's first checkpoints taken.
func running(t *testing.T, w *world, name string) *v1beta1.FlinkApplication {
	t.Helper()
	w.create(wordcount(name))
	w.runUntilPhase(name, v1beta1.PhaseRunning)
	w.clock.Step(25 * time.Second) // two periodic checkpoints
	for i := 0; i < 3; i++ {
		_, _ = w.reconcile(name)
	}
	return w.get(name)
}

func upgradedFrom(old *v1beta1.FlinkApplication) func(*v1beta1.FlinkApplication) bool {
	return func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash != old.Status.DeployHash
	}
}

func TestDualUpdateRestoresFromTheSavepointItTook(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	oldJM := w.jm(old, old.Status.DeployHash)

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))

	assert.Equal(t, 1, oldJM.SavepointTriggers(), "one savepoint of the old job")
	oldJobs := oldJM.Jobs()
	require.Len(t, oldJobs, 1)
	assert.Equal(t, "CANCELED", oldJobs[0].State)
	newJobs := w.jm(app, app.Status.DeployHash).Jobs()
	require.Len(t, newJobs, 1)
	snap, ok := w.storage.Get(newJobs[0].RestoredFrom)
	require.True(t, ok, "restored from a path that exists")
	assert.True(t, snap.Savepoint)
	assert.Equal(t, oldJobs[0].ID, snap.JobID, "the savepoint of the old job")
	assert.Equal(t, newJobs[0].RestoredFrom, app.Status.JobStatus.RestorePath)
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"), "never two live jobs")

	// The old cluster goes once the new job runs; the generic Service follows the new one.
	w.runUntil("wc", "old cluster deleted", func(*v1beta1.FlinkApplication) bool {
		_, err := w.kube.AppsV1().Deployments(ns).Get(context.Background(), flink.JobManagerName(old, old.Status.DeployHash), metav1.GetOptions{})
		return err != nil
	})
	svc, err := w.kube.CoreV1().Services(ns).Get(context.Background(), "wc", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, app.Status.DeployHash, svc.Spec.Selector["flink-app-hash"])
}

func TestIgnoredChangesDoNotRestartTheJob(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}
		a.Spec.DeleteMode = v1beta1.DeleteModeForceCancel
		a.Spec.ForceRollback = true
	})
	for i := 0; i < 30; i++ {
		_, _ = w.reconcile("wc")
	}
	app := w.get("wc")
	assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID)
}

func TestRestartNonceRedeploysFromASavepoint(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.RestartNonce = "please" })
	app := w.runUntil("wc", "redeployed", upgradedFrom(old))
	assert.NotEqual(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID)
	assert.Contains(t, app.Status.JobStatus.RestorePath, "savepoint-")
}

func TestSavepointFailureRecoversFromTheNewestCheckpoint(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	oldJM := w.jm(old, old.Status.DeployHash)
	oldJM.SetFaults(flinksim.Faults{FailSavepoints: true})

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))

	assert.Contains(t, phasesVisited(app), v1beta1.PhaseRecovering)
	restored := w.jm(app, app.Status.DeployHash).Jobs()[0].RestoredFrom
	snap, ok := w.storage.Get(restored)
	require.True(t, ok)
	assert.False(t, snap.Savepoint, "a checkpoint, not a savepoint")
	assert.Contains(t, restored, "/chk-")
	// It is the newest checkpoint of the old job.
	var newest flinksim.Snapshot
	for _, s := range w.storage.Snapshots() {
		if s.JobID == old.Status.JobStatus.JobID && !s.Savepoint && s.CheckpointID > newest.CheckpointID {
			newest = s
		}
	}
	assert.Equal(t, newest.Path, restored)
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

func TestTooOldCheckpointFailsTheUpdateAndKeepsTheOldJob(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	age := int32(5)
	app.Spec.MaxCheckpointRestoreAgeSeconds = &age
	app.Spec.FlinkConfig["execution.checkpointing.interval"] = "1h"
	w.create(app)
	old := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.jm(old, old.Status.DeployHash).SetFaults(flinksim.Faults{FailSavepoints: true})

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	got := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Contains(t, got.Status.Reason, "no savepoint or retained checkpoint was found")
	assert.Equal(t, old.Status.DeployHash, got.Status.DeployHash)
	assert.Equal(t, old.Status.JobStatus.JobID, got.Status.JobStatus.JobID)
	jobs := w.jm(old, old.Status.DeployHash).Jobs()
	require.Len(t, jobs, 1)
	assert.Equal(t, "RUNNING", jobs[0].State, "the old job is left running")

	// With fallbackWithoutState the user accepts starting empty.
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.FallbackWithoutState = true // not part of the cluster hash, so also ask for a redeploy
		a.Spec.RestartNonce = "retry"
	})
	now := w.runUntil("wc", "upgraded without state", upgradedFrom(old))
	assert.Empty(t, w.jm(now, now.Status.DeployHash).Jobs()[0].RestoredFrom)
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

func TestFailedUpdateRollsBackToTheOldJobFromTheSavepoint(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.imageJars["flink-wordcount:bad"] = []string{"something-else.jar"}

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:bad" })
	app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)

	assert.Contains(t, phasesVisited(app), v1beta1.PhaseRollingBack)
	assert.Contains(t, app.Status.Reason, "wordcount.jar")
	assert.Contains(t, app.Status.Reason, "previous job restarted", "the old job was stopped for the savepoint, so it is restarted")
	assert.Equal(t, old.Status.DeployHash, app.Status.DeployHash)
	assert.Equal(t, old.Status.DeployHash, app.Status.RollbackHash)
	assert.Equal(t, flink.ClusterHash(app), app.Status.FailedDeployHash)
	jobs := w.jm(old, old.Status.DeployHash).Jobs()
	require.Len(t, jobs, 2, "the old job, and its restart")
	assert.Equal(t, "RUNNING", jobs[1].State)
	assert.Equal(t, app.Status.JobStatus.RestorePath, jobs[1].RestoredFrom)
	assert.Empty(t, app.Status.SavepointPath, "cleared once the restarted job runs, as the Lyft operator does")
	assert.Contains(t, jobs[1].RestoredFrom, "savepoint-")
	assert.Equal(t, "wordcount.jar", app.Status.JobStatus.JarName)
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))

	// The failed spec is not retried; a new one is deployed.
	for i := 0; i < 20; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Equal(t, v1beta1.PhaseDeployFailed, w.get("wc").Status.Phase)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:3" })
	w.runUntil("wc", "rolled forward", upgradedFrom(old))
}

func TestNewJobFailingAfterSubmitRollsBack(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.faults = flinksim.Faults{FailJobsAfter: time.Second}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 4 })
	app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Contains(t, phasesVisited(app), v1beta1.PhaseRollingBack)
	assert.Contains(t, app.Status.Reason, "FAILED")
	assert.Contains(t, app.Status.Reason, "previous job restarted")
	assert.Equal(t, old.Status.DeployHash, app.Status.DeployHash)
	assert.Equal(t, int32(3), app.Status.JobStatus.Parallelism, "the old job's parameters")
	jobs := w.jm(old, old.Status.DeployHash).Jobs()
	require.Len(t, jobs, 2)
	assert.Equal(t, "RUNNING", jobs[1].State)
	assert.Equal(t, 3, jobs[1].Parallelism)
	assert.Contains(t, jobs[1].RestoredFrom, "savepoint-")
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

func TestForceRollbackAbandonsAnUpdateThatCannotStart(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:stuck" })
	w.runUntilPhase("wc", v1beta1.PhaseClusterStarting)
	next := w.get("wc")
	w.broken[flink.JobManagerName(next, next.Status.UpdatingHash)] = true
	for i := 0; i < 5; i++ {
		_, _ = w.reconcile("wc")
	}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.ForceRollback = true })
	app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID, "the old job was never touched")
	assert.Contains(t, app.Status.Reason, "kept running")
	assert.Equal(t, 0, w.jm(old, old.Status.DeployHash).SavepointTriggers())
	_, err := w.kube.AppsV1().Deployments(ns).Get(context.Background(), flink.JobManagerName(next, next.Status.UpdatingHash), metav1.GetOptions{})
	assert.Error(t, err, "the abandoned cluster is deleted")
}

func phasesVisited(app *v1beta1.FlinkApplication) []v1beta1.FlinkApplicationPhase {
	var out []v1beta1.FlinkApplicationPhase
	for _, h := range app.Status.History {
		out = append(out, h.To)
	}
	return out
}

// A job that keeps failing for a reason outside the new spec (a sink down for everyone) fails the
// update, and the stable job it rolls back to keeps failing too. The rollback still ends with that
// job kept, shown Red: DeployFailed/RolledBack, not a failed rollback. (jobStabilizationPeriod 0 is
// the Lyft operator's behaviour: an update counts as done once all tasks run.)
func TestRollbackKeepsARestoredJobThatKeepsRestarting(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	crashLoop := flinksim.Faults{RestartJobsEvery: 3 * time.Second}
	w.imageFaults["flink-wordcount:2"] = crashLoop
	w.jm(old, old.Status.DeployHash).SetFaults(crashLoop)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Contains(t, phasesVisited(app), v1beta1.PhaseRollingBack)
	assert.NotContains(t, app.Status.Reason, "rollback failed")
	assert.Equal(t, "RolledBack", lastTransitionReason(app))
	for i := 0; i < 10; i++ {
		_, _ = w.reconcile("wc")
	}
	app = w.get("wc")
	assert.Contains(t, []v1beta1.JobState{v1beta1.JobRunning, v1beta1.JobRestarting}, app.Status.JobStatus.State, "the restored job is kept")
	assert.Equal(t, v1beta1.Red, app.Status.JobStatus.Health)
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

func lastTransitionReason(app *v1beta1.FlinkApplication) string {
	if n := len(app.Status.History); n > 0 {
		return app.Status.History[n-1].Reason
	}
	return ""
}
