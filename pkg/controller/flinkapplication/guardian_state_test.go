package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// retainOne makes wc keep one savepoint FlinkSnapshot and dispose of the storage of those it retires.
func retainOne(a *v1beta1.FlinkApplication) {
	a.Spec.SavepointRetention = &v1beta1.SavepointRetention{Keep: 1, DisposeOlder: true}
}

// takeSavepoint asks wc's job for a manual savepoint by nonce and waits until it is recorded; it
// returns the savepoint's path and the name of the FlinkSnapshot that shows it.
func takeSavepoint(t *testing.T, w *world, name, nonce string) (path, snapshot string) {
	w.update(name, func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = v1beta1.Nonce(nonce) })
	app := w.runUntil(name, "savepoint "+nonce, func(a *v1beta1.FlinkApplication) bool {
		return a.Status.SavepointTriggerNonce == v1beta1.Nonce(nonce) && a.Status.SavepointTriggerID == ""
	})
	for i := len(app.Status.Ledger) - 1; i >= 0; i-- {
		if e := app.Status.Ledger[i]; e.Purpose == v1beta1.SavepointManual && e.Result == v1beta1.StateCompleted {
			path = e.Path
			break
		}
	}
	require.NotEmpty(t, path)
	for i := 0; i < 3 && snapshot == ""; i++ {
		_, _ = w.reconcile(name)
		for _, s := range w.snapshots() {
			if s.Status.Path == path {
				snapshot = s.Name
			}
		}
	}
	require.NotEmpty(t, snapshot, "the savepoint got its FlinkSnapshot")
	w.clock.Step(time.Minute)
	return path, snapshot
}

// Retention never retires, nor disposes of, the savepoint another application's spec.savepointPath
// names for a first deploy that has not happened yet: the spec is read, not only status.
func TestRetentionKeepsWhatAnotherApplicationsSpecNamesForItsFirstDeploy(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", retainOne)
	handover, _ := takeSavepoint(t, w, "wc", "handover")
	next := wordcount("next")
	next.Spec.SavepointPath = handover
	w.create(next) // not deployed yet
	takeSavepoint(t, w, "wc", "later")
	w.passes("wc", 5)
	assert.True(t, w.storage.Exists(handover), "another application's first job will start from it")
	kept := false
	for _, s := range w.snapshots() {
		kept = kept || s.Status.Path == handover && s.DeletionTimestamp == nil
	}
	assert.True(t, kept, "its FlinkSnapshot is not retired")
}

// Retention never retires the savepoint the owner's own restoreSnapshot names.
func TestRetentionKeepsWhatTheOwnersOwnRestoreSnapshotNames(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", retainOne)
	path, snap := takeSavepoint(t, w, "wc", "good")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.RestoreSnapshot = snap })
	takeSavepoint(t, w, "wc", "later")
	w.passes("wc", 5)
	assert.True(t, w.storage.Exists(path), "the spec names it for the next redeploy")
	require.NotNil(t, w.snapshot(snap))
	assert.Nil(t, w.snapshot(snap).DeletionTimestamp, "not retired")
}

// A FlinkSnapshot being deleted no longer resolves for anyone's restoreSnapshot, and its storage is
// not disposed of while another application's job started from it.
func TestASnapshotBeingDeletedResolvesForNobodyAndIsNotDisposedOfUnderAnotherJob(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", retainOne)
	path, snap := takeSavepoint(t, w, "wc", "handover")
	require.Contains(t, w.snapshot(snap).Finalizers, snapshots.DisposeFinalizer)
	// Retired (deleted, held by its finalizer until wc's pass disposes of it); another application
	// names it before that pass.
	w.deleteSnapshot(snap)
	require.NotNil(t, w.snapshot(snap).DeletionTimestamp)
	other := wordcount("other")
	other.Spec.RestoreSnapshot = snap
	w.create(other)
	w.passes("other", 20)
	got := w.get("other")
	assert.NotEqual(t, path, got.Status.JobStatus.RestorePath, "a snapshot being deleted is no state to start from")
	assert.NotEqual(t, path, got.Status.Deployments.NextRestorePath, "a snapshot being deleted is no state to start from")
	assert.Contains(t, got.Status.Reason, snap, "it says what it waits for")
	w.passes("wc", 5)
	if w.get("other").Status.JobStatus.RestorePath == path {
		assert.True(t, w.storage.Exists(path), "never disposed of under a job that started from it")
	}
}

// collectOwnedBy deletes what the garbage collector deletes once the object of this uid is gone:
// the Kubernetes objects whose owner reference names it.
func (w *world) collectOwnedBy(uid types.UID) {
	ctx := context.Background()
	owned := func(m metav1.Object) bool {
		for _, r := range m.GetOwnerReferences() {
			if r.UID == uid {
				return true
			}
		}
		return false
	}
	deps, _ := w.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	for _, d := range deps.Items {
		if owned(&d) {
			require.NoError(w.t, w.kube.AppsV1().Deployments(ns).Delete(ctx, d.Name, metav1.DeleteOptions{}))
		}
	}
	svcs, _ := w.kube.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	for _, s := range svcs.Items {
		if owned(&s) {
			require.NoError(w.t, w.kube.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}))
		}
	}
	cms, _ := w.kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	for _, c := range cms.Items {
		if owned(&c) {
			require.NoError(w.t, w.kube.CoreV1().ConfigMaps(ns).Delete(ctx, c.Name, metav1.DeleteOptions{}))
		}
	}
}

// An application created again under a deleted one's name owns nothing its namesake left: the
// final savepoint of the deleted one is not retired, nor disposed of, by the new one's retention.
func TestAnApplicationCreatedAgainUnderADeletedOnesNameDoesNotRetireItsFinalSavepoint(t *testing.T) {
	w := newWorld(t)
	first := wordcount("wc")
	first.UID = types.UID("first-uid")
	retainOne(first)
	w.create(first)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.deleteApp("wc")
	gone := w.runUntil("wc", "finalized", finalized)
	final := gone.Status.FinalSavepointPath
	require.NotEmpty(t, final)
	w.passes("wc", 3)
	require.NoError(t, w.apps.FlinkV1beta1().FlinkApplications(ns).Delete(context.Background(), "wc", metav1.DeleteOptions{}))
	w.collectOwnedBy(first.UID)

	again := wordcount("wc")
	again.UID = types.UID("second-uid")
	retainOne(again)
	w.create(again)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	takeSavepoint(t, w, "wc", "a")
	takeSavepoint(t, w, "wc", "b")
	w.passes("wc", 5)
	assert.True(t, w.storage.Exists(final), "the deleted application's final savepoint is not the new one's to dispose of")
}

// Retention by age never disposes of the running job's newest savepoint, though a checkpoint the job
// took since is newer: under NO_EXTERNALIZED_CHECKPOINTS the checkpoints go with the job when it
// ends, and the savepoint is then the newest state it leaves. Explorer seed 10000122: the guardian
// protected only the newest state (a checkpoint), retention disposed of the newest savepoint, and
// the job that FAILED was replaced from an older one.
func TestRetentionByAgeKeepsTheRunningJobsNewestSavepoint(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.FlinkConfig["execution.checkpointing.externalized-checkpoint-retention"] = "NO_EXTERNALIZED_CHECKPOINTS"
		a.Spec.SavepointRetention = &v1beta1.SavepointRetention{Keep: 5, MaxAge: &metav1.Duration{Duration: 2 * time.Minute}, DisposeOlder: true}
	})
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	newest, _ := takeSavepoint(t, w, "wc", "s1")
	for i := 0; i < 60; i++ { // five minutes: checkpoints recorded since, the savepoint past maxAge
		w.clock.Step(5 * time.Second)
		_, _ = w.reconcile("wc")
		w.events()
	}
	app := w.get("wc")
	require.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)
	assert.True(t, w.storage.Exists(newest), "the running job's newest savepoint was disposed of")
}
