package flinkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// Defects the randomized explorer (explorer_test.go) found in issue 55, each reduced to a world
// test of its own; the comment names the seeds that found it.

// A JobManager that answers GET /jobs/:id with errors for minutes while its job checkpoints on
// (explorer seeds 1 and 18) leaves the operator's record of the job's newest checkpoint as old as
// the errors: the checkpoints are read from their own endpoint, which still answers, and recorded
// as due. Lost with its JobManager without HA, the job starts again from a checkpoint that still
// exists, not from one Flink subsumed minutes before.
func TestAJobWhoseStatusIsUnreadableStillHasItsCheckpointsRecorded(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jobID := app.Status.JobStatus.JobID
	w.jm(app, app.Status.DeployHash).SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointJob: 1}})
	end := w.clock.Now().Add(5 * time.Minute)
	for w.clock.Now().Before(end) {
		_, _ = w.reconcile("wc")
	}
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(app, app.Status.DeployHash), metav1.DeleteOptions{}))
	again := w.runUntil("wc", "running again", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != jobID && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	restored, ok := w.storage.Get(again.Status.JobStatus.RestorePath)
	require.True(t, ok, "restored from %q, which exists", again.Status.JobStatus.RestorePath)
	assert.Equal(t, jobID, restored.JobID)
}

// A LastState update whose savepoint fails while the JobManager fails to tell the job's
// checkpoints (explorer seed 13, object beta) stops the job and restores from the newest state
// Flink holds for it, not from the checkpoint the operator recorded before the errors began, which
// Flink subsumed while the job ran on: a restore that Flink could be asked about waits for Flink's
// answer.
func TestARecoveryAfterAFailedSavepointWaitsForFlinksCheckpoints(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	app.Spec.DeploymentMode = v1beta1.DeploymentModeSingle
	app.Spec.UpgradeMode = v1beta1.UpgradeModeLastState
	app.Spec.FlinkConfig["state.checkpoints.num-retained"] = "3"
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.passes("wc", 30)
	app = w.get("wc")
	jobID := app.Status.JobStatus.JobID
	jm := w.jm(app, app.Status.DeployHash)
	jm.SetFaults(flinksim.Faults{FailSavepoints: true, ErrorRate: map[string]float64{flinksim.EndpointCheckpoints: 1}})
	end := w.clock.Now().Add(2 * time.Minute)
	for w.clock.Now().Before(end) {
		_, _ = w.reconcile("wc")
	}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	w.runUntilPhase("wc", v1beta1.PhaseRecovering)
	w.passes("wc", 2)
	jm.SetFaults(flinksim.Faults{})
	again := w.runUntil("wc", "running the new spec", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != jobID && a.Status.JobStatus.State == v1beta1.JobRunning ||
			a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	require.Equal(t, v1beta1.PhaseRunning, again.Status.Phase, "reason %q", again.Status.Reason)
	restored, ok := w.storage.Get(again.Status.JobStatus.RestorePath)
	require.True(t, ok, "restored from %q, which exists", again.Status.JobStatus.RestorePath)
	assert.Equal(t, jobID, restored.JobID)
}

// A savepoint is as new as when Flink took it (explorer seeds 22 and 33, object beta): its trigger
// is asked for and persisted first and sent a pass later, and a checkpoint Flink completes in
// between is older than the savepoint, though triggered after the ask. A job lost with its
// JobManager without HA starts again from the savepoint, or from a checkpoint taken after it.
func TestASavepointCountsAsTakenWhenFlinkTookIt(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jobID := app.Status.JobStatus.JobID
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "one" })
	_, _ = w.reconcile("wc")
	require.NotNil(t, w.get("wc").Status.Ledger, "the savepoint is asked for")
	// The operator's next pass, which sends the trigger, comes after a checkpoint completed.
	w.clock.Step(12 * time.Second)
	w.runUntil("wc", "the savepoint completed", func(a *v1beta1.FlinkApplication) bool {
		for _, e := range a.Status.Ledger {
			if e.Purpose == v1beta1.SavepointManual && e.Result == v1beta1.StateCompleted {
				return true
			}
		}
		return false
	})
	var savepoint *flinksim.Snapshot
	for _, s := range w.storage.Snapshots() {
		if s.Savepoint && s.JobID == jobID {
			savepoint = &s
		}
	}
	require.NotNil(t, savepoint)
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(app, app.Status.DeployHash), metav1.DeleteOptions{}))
	again := w.runUntil("wc", "running again", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != jobID && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	restored, ok := w.storage.Get(again.Status.JobStatus.RestorePath)
	require.True(t, ok, "restored from %q, which exists", again.Status.JobStatus.RestorePath)
	assert.False(t, restored.CreatedAt.Before(savepoint.CreatedAt), "restored %s (taken %s), older than savepoint %s (taken %s)",
		restored.Path, restored.CreatedAt, savepoint.Path, savepoint.CreatedAt)
}

// A phase that cannot complete gives up with a Warning by its deadline and the allowance for the
// operator's outages (fsm.OutageAllowance), from when it began, also when the operator restarts
// meanwhile (explorer seeds 2, 7, 15, 27, 55: an update's job in Submitting after its new
// cluster's JobManager Deployment was deleted, while the operator was killed at its writes every
// minute or two). Each new process counted the phase's time only from its own first pass, so a
// phase outlived its deadline for as long as the restarts came.
func TestAPhaseGivesUpAtItsDeadlineThoughTheOperatorRestarts(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app = w.runUntilPhase("wc", v1beta1.PhaseSubmitting)
	// The new cluster's JobManager goes away before the job is submitted, and stays away.
	hash := app.Status.Deployments.Candidate.ClusterHash
	name := flink.JobManagerName(app, hash)
	w.broken[name] = true
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), name, metav1.DeleteOptions{}))
	started := w.get("wc").Status.PhaseStartedAt.Time
	most := w.env.Config.ReadinessTimeout.Duration + fsm.OutageAllowance
	w.events()
	warned := false
	for end := started.Add(most + time.Minute); w.clock.Now().Before(end) && !warned; {
		restartAt := w.clock.Now().Add(time.Minute)
		for w.clock.Now().Before(restartAt) && !warned {
			_, _ = w.reconcile("wc")
			for _, e := range w.events() {
				warned = warned || strings.HasPrefix(e, "Warning ")
			}
		}
		w.restartOperator()
	}
	a := w.get("wc")
	assert.True(t, warned && a.Status.Phase != v1beta1.PhaseSubmitting,
		"in %s since %s (at most %s), now %s; reason %q", a.Status.Phase, started, most, w.clock.Now(), a.Status.Reason)
	t.Logf("gave up after %s: %s -> %s: %s", w.clock.Now().Sub(started).Round(time.Second), v1beta1.PhaseSubmitting, a.Status.Phase, a.Status.Reason)
}

// A job that runs on while an update takes minutes to replace it has its checkpoints recorded in
// every phase, not only in Running (explorer seed 33, object gamma: its update's savepoint took
// minutes, then the deployed job was lost with its JobManager). Here the new cluster is slow to
// start beside the job. The job lost meanwhile without HA starts again from a checkpoint Flink
// still has.
func TestAJobRunningThroughASlowUpdateHasItsCheckpointsRecorded(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jobID := app.Status.JobStatus.JobID
	jm := w.jm(app, app.Status.DeployHash)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app = w.runUntilPhase("wc", v1beta1.PhaseClusterStarting)
	tms := flink.TaskManagerName(app, app.Status.Deployments.Candidate.ClusterHash)
	w.broken[tms] = true
	for end := w.clock.Now().Add(3 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, v1beta1.PhaseClusterStarting, w.get("wc").Status.Phase)
	jm.Restart()
	delete(w.broken, tms)
	var restored *flinksim.Snapshot
	w.runUntil("wc", "a job started again", func(a *v1beta1.FlinkApplication) bool {
		for _, j := range w.timeline.Jobs(ns + "/wc") {
			if j.JobID != jobID && j.RestoredFrom != "" {
				s, ok := w.storage.Get(j.RestoredFrom)
				require.True(t, ok, "job %s started from %s, which exists", j.JobID, j.RestoredFrom)
				restored = &s
				return true
			}
		}
		return false
	})
	assert.Equal(t, jobID, restored.JobID)
}

// A job started again after its JobManager lost it that never runs stable ends its Submitting in
// DeployFailed while it may still run: it stays the application's job, so that the next update stops
// it before it starts another (found by explorer seed 60: two live jobs of one application).
func TestAJobRestartedAfterJobLostThatNeverRunsStableIsStoppedByTheNextUpdate(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jm := w.jm(app, app.Status.DeployHash)
	jm.SetFaults(flinksim.Faults{RestartJobsEvery: 5 * time.Second}) // never stable for 10 s
	jm.Restart()                                                     // without HA: the job is lost
	w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	w.runUntil("wc", "the update done", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash != app.Status.DeployHash ||
			a.Status.Phase == v1beta1.PhaseDeployFailed && a.Status.FailedDeployHash != app.Status.DeployHash
	})
	w.passes("wc", 10)
	w.assertOneJobAtATime(w.events())
}

// A FlinkSnapshot a user creates to register a savepoint keeps it from the moment it exists, before
// any pass wrote its status (found by explorer seed 1002: a disposal in the same second as the
// registration).
func TestASavepointRegisteredByAnotherFlinkSnapshotIsKeptBeforeItsStatusIsWritten(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	path, taken := takeSavepoint(t, w, "wc", "one")
	patched := w.snapshot(taken).DeepCopy()
	patched.Spec.DisposeOnDelete = true
	_, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Update(context.Background(), patched, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.passes("wc", 2)
	require.Contains(t, w.snapshot(taken).Finalizers, snapshots.DisposeFinalizer)
	// Registered for another application, whose pass has not run: its status is empty.
	w.createSnapshot("registered", func(s *v1beta1.FlinkSnapshotSpec) {
		s.Owner.Name, s.Path, s.Keep = "other", path, true
	})
	w.deleteSnapshot(taken)
	w.passes("wc", 5)
	assert.True(t, w.storage.Exists(path), "FlinkSnapshot registered shows it")
}
