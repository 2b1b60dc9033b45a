package flinkapplication

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

func (w *world) snapshots() []v1beta1.FlinkSnapshot {
	list, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(w.t, err)
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

func (w *world) snapshot(name string) *v1beta1.FlinkSnapshot {
	s, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(w.t, err)
	return s
}

func (w *world) createSnapshot(name string, edit func(*v1beta1.FlinkSnapshotSpec)) {
	s := &v1beta1.FlinkSnapshot{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, CreationTimestamp: metav1.NewTime(w.clock.Now())},
		Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: applicationKindName, Name: "wc"}, Type: v1beta1.SnapshotSavepoint}}
	if edit != nil {
		edit(&s.Spec)
	}
	_, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Create(context.Background(), s, metav1.CreateOptions{})
	require.NoError(w.t, err)
}

func (w *world) deleteSnapshot(name string) {
	require.NoError(w.t, w.apps.FlinkV1beta1().FlinkSnapshots(ns).Delete(context.Background(), name, metav1.DeleteOptions{}))
}

// ledgerEntryNaming is the ledger entry that names the FlinkSnapshot.
func ledgerEntryNaming(app *v1beta1.FlinkApplication, name string) *v1beta1.StateEntry {
	for i := range app.Status.Ledger {
		if app.Status.Ledger[i].Snapshot == name {
			return &app.Status.Ledger[i]
		}
	}
	return nil
}

func TestEverySavepointTheOperatorTakesBecomesOneFlinkSnapshot(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "one" })
	w.runUntil("wc", "manual savepoint", func(a *v1beta1.FlinkApplication) bool { return len(a.Status.Savepoints) == 1 })
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))
	for i := 0; i < 5; i++ {
		_, _ = w.reconcile("wc")
	}
	app = w.get("wc")

	snaps := w.snapshots()
	require.Len(t, snaps, 2, "one for the manual savepoint, one for the upgrade's")
	purposes := map[v1beta1.SavepointPurpose]bool{}
	for _, s := range snaps {
		purposes[s.Status.Purpose] = true
		e := ledgerEntryNaming(app, s.Name)
		require.NotNil(t, e, "the ledger entry names %s", s.Name)
		assert.Equal(t, v1beta1.StateCompleted, s.Status.State)
		assert.Equal(t, e.Path, s.Status.Path)
		assert.Equal(t, e.Path, s.Spec.Path)
		assert.Equal(t, e.TriggerID, s.Status.TriggerID)
		assert.Equal(t, e.JobID, s.Status.JobID)
		assert.True(t, w.storage.Exists(s.Status.Path))
		assert.Equal(t, map[string]string{v1beta1.SnapshotOwnerKindLabel: applicationKindName, v1beta1.SnapshotOwnerLabel: "wc",
			v1beta1.SnapshotPurposeLabel: string(e.Purpose), v1beta1.SnapshotStateLabel: "Completed"}, s.Labels)
		assert.Equal(t, v1beta1.SnapshotOwner{Kind: applicationKindName, Name: "wc"}, s.Spec.Owner)
	}
	assert.Equal(t, map[v1beta1.SavepointPurpose]bool{v1beta1.SavepointManual: true, v1beta1.SavepointUpgrade: true}, purposes)

	// Deleting one by hand never brings it back, and the ledger keeps the state it showed.
	gone := snaps[0]
	w.deleteSnapshot(gone.Name)
	for i := 0; i < 10; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Nil(t, w.snapshot(gone.Name))
	assert.NotNil(t, ledgerEntryNaming(w.get("wc"), gone.Name), "the ledger entry stays")
	assert.Len(t, w.snapshots(), 1)
}

func TestASnapshotCreatedAfterACrashBeforeItsStatusIsFinished(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "one" })
	w.runUntil("wc", "manual savepoint", func(a *v1beta1.FlinkApplication) bool { return len(a.Status.Savepoints) == 1 })
	app := w.get("wc")
	s := w.snapshots()[0]
	// As if the operator had stopped after the create: no status, and the entry not yet naming it.
	s.Status = v1beta1.FlinkSnapshotStatus{}
	_, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).UpdateStatus(context.Background(), &s, metav1.UpdateOptions{})
	require.NoError(t, err)
	for i := range app.Status.Ledger {
		app.Status.Ledger[i].Snapshot = ""
	}
	_, err = w.apps.FlinkV1beta1().FlinkApplications(ns).UpdateStatus(context.Background(), app, metav1.UpdateOptions{})
	require.NoError(t, err)

	_, _ = w.reconcile("wc")
	require.Len(t, w.snapshots(), 1, "the same object is found, not a second made")
	assert.Equal(t, v1beta1.StateCompleted, w.snapshots()[0].Status.State)
	assert.NotNil(t, ledgerEntryNaming(w.get("wc"), s.Name))
}

func TestAFlinkSnapshotAsksForASavepointWrittenAheadOfItsTrigger(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jm := w.jm(app, app.Status.DeployHash)
	w.createSnapshot("before-release", nil)

	_, _ = w.reconcile("wc")
	s := w.snapshot("before-release")
	require.Equal(t, v1beta1.StatePending, s.Status.State, "shown Pending with its trigger")
	assert.NotEmpty(t, s.Status.TriggerID)
	assert.NotNil(t, s.Status.TriggerTime)
	assert.Equal(t, 0, jm.SavepointTriggers(), "before the trigger is sent")
	e := ledgerEntryNaming(w.get("wc"), "before-release")
	require.NotNil(t, e, "the ledger entry is persisted first")
	assert.Equal(t, s.Status.TriggerID, e.TriggerID)

	for i := 0; i < 20 && w.snapshot("before-release").Status.State == v1beta1.StatePending; i++ {
		_, _ = w.reconcile("wc")
	}
	s = w.snapshot("before-release")
	assert.Equal(t, v1beta1.StateCompleted, s.Status.State)
	assert.Equal(t, v1beta1.SavepointManual, s.Status.Purpose)
	assert.True(t, w.storage.Exists(s.Status.Path))
	assert.Equal(t, 1, jm.SavepointTriggers())
	assert.Len(t, w.snapshots(), 1, "the operator makes no second object for the entry")
	assert.Equal(t, app.Status.JobStatus.JobID, w.get("wc").Status.JobStatus.JobID, "the job keeps running")
}

func TestAFlinkSnapshotOfACheckpointAndOneOfARegisteredPath(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.createSnapshot("chk", func(s *v1beta1.FlinkSnapshotSpec) { s.Type = v1beta1.SnapshotCheckpoint })
	w.createSnapshot("moved-in", func(s *v1beta1.FlinkSnapshotSpec) { s.Path = "s3://elsewhere/savepoint-1" })
	for i := 0; i < 30 && w.snapshot("chk").Status.State != v1beta1.StateCompleted; i++ {
		_, _ = w.reconcile("wc")
	}
	chk := w.snapshot("chk")
	assert.Equal(t, v1beta1.StateCompleted, chk.Status.State)
	assert.Equal(t, v1beta1.ManualCheckpoint, chk.Status.Purpose)
	assert.Contains(t, chk.Status.Path, "chk-")

	moved := w.snapshot("moved-in")
	assert.Equal(t, v1beta1.StateCompleted, moved.Status.State)
	assert.Equal(t, v1beta1.SnapshotRegistered, moved.Status.Purpose)
	assert.Equal(t, "s3://elsewhere/savepoint-1", moved.Status.Path)
	assert.Nil(t, ledgerEntryNaming(w.get("wc"), "moved-in"), "the ledger follows the owner's own jobs")
}

func TestAFlinkSnapshotWaitsForTheJobToRun(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
	w.runUntilPhase("wc", v1beta1.PhaseSuspended)
	w.createSnapshot("wanted", nil)
	for i := 0; i < 5; i++ {
		_, _ = w.reconcile("wc")
	}
	s := w.snapshot("wanted")
	assert.Empty(t, s.Status.State)
	assert.Contains(t, s.Status.Error, "waiting for the job of FlinkApplication wc to run")

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateRunning })
	w.runUntil("wc", "snapshot taken after the resume", func(*v1beta1.FlinkApplication) bool {
		return w.snapshot("wanted").Status.State == v1beta1.StateCompleted
	})
	assert.Empty(t, w.snapshot("wanted").Status.Error)
}

func TestDisposeOnDeleteRemovesTheStorageButNeverWhatTheRestoreNeeds(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.createSnapshot("throwaway", func(s *v1beta1.FlinkSnapshotSpec) { s.DisposeOnDelete = true })
	for i := 0; i < 20 && w.snapshot("throwaway").Status.State != v1beta1.StateCompleted; i++ {
		_, _ = w.reconcile("wc")
	}
	s := w.snapshot("throwaway")
	require.Contains(t, s.Finalizers, snapshots.DisposeFinalizer)
	path := s.Status.Path
	require.True(t, w.storage.Exists(path))
	// A checkpoint recorded since is the newest restorable state; the savepoint is not needed.
	for end := w.clock.Now().Add(2 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}

	w.deleteSnapshot("throwaway")
	for i := 0; i < 5 && w.snapshot("throwaway") != nil; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Nil(t, w.snapshot("throwaway"), "the finalizer goes once the storage is disposed of")
	assert.False(t, w.storage.Exists(path))
	for _, e := range w.get("wc").Status.Ledger {
		assert.NotEqual(t, path, e.Path, "the ledger forgets a state whose storage is gone")
	}

	// The upgrade's savepoint is what the running job restored from: deleting its FlinkSnapshot
	// keeps the storage.
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))
	for i := 0; i < 3; i++ {
		_, _ = w.reconcile("wc")
	}
	var upgrade *v1beta1.FlinkSnapshot
	for i, sn := range w.snapshots() {
		if sn.Status.Purpose == v1beta1.SavepointUpgrade {
			upgrade = &w.snapshots()[i]
		}
	}
	require.NotNil(t, upgrade)
	require.Equal(t, app.Status.JobStatus.RestorePath, upgrade.Status.Path)
	patched := upgrade.DeepCopy()
	patched.Spec.DisposeOnDelete = true
	_, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Update(context.Background(), patched, metav1.UpdateOptions{})
	require.NoError(t, err)
	_, _ = w.reconcile("wc")
	w.deleteSnapshot(upgrade.Name)
	for i := 0; i < 5 && w.snapshot(upgrade.Name) != nil; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Nil(t, w.snapshot(upgrade.Name))
	assert.True(t, w.storage.Exists(upgrade.Status.Path), "the running job's restore point stays")
	assert.Contains(t, eventReasons(w.events()), "SnapshotKept")
}

func TestRetentionDeletesTheOperatorsOldSnapshotsByCountAndAge(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointRetention = &v1beta1.SavepointRetention{Keep: 3, MaxAge: &metav1.Duration{Duration: time.Hour}}
	})
	w.createSnapshot("mine", nil) // a user's own is theirs to delete
	for i, nonce := range []string{"a", "b", "c", "d", "e"} {
		w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = v1beta1.Nonce(nonce) })
		w.runUntil("wc", "savepoint "+nonce, func(a *v1beta1.FlinkApplication) bool {
			return a.Status.SavepointTriggerNonce == v1beta1.Nonce(nonce) && a.Status.SavepointTriggerID == "" && len(a.Status.Savepoints) >= min(i+1, 3)
		})
		if i == 0 {
			// Kept on purpose: never retired.
			first := w.snapshots()
			for _, s := range first {
				if s.Name != "mine" && s.Status.Purpose == v1beta1.SavepointManual {
					s.Spec.Keep = true
					_, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Update(context.Background(), &s, metav1.UpdateOptions{})
					require.NoError(t, err)
				}
			}
		}
		w.clock.Step(time.Minute)
	}
	for i := 0; i < 5; i++ {
		_, _ = w.reconcile("wc")
	}
	var operators, kept int
	for _, s := range w.snapshots() {
		switch {
		case s.Name == "mine":
		case s.Spec.Keep:
			kept++
		default:
			operators++
		}
	}
	assert.Equal(t, 1, kept)
	assert.Equal(t, 3, operators, "keep counts the snapshots retention manages; the one kept on purpose is besides")
	assert.NotNil(t, w.snapshot("mine"))
	assert.Contains(t, eventReasons(w.events()), "SnapshotRetired")

	w.clock.Step(2 * time.Hour)
	for i := 0; i < 5; i++ {
		_, _ = w.reconcile("wc")
	}
	operators = 0
	for _, s := range w.snapshots() {
		if s.Name != "mine" && !s.Spec.Keep {
			operators++
		}
	}
	assert.LessOrEqual(t, operators, 1, "past maxAge only the newest restorable state may stay")
	assert.NotNil(t, w.snapshot("mine"))
}

// A FlinkSnapshot's formatType is the format of the savepoint it asks for, whatever the job's.
func TestAFlinkSnapshotTakesItsSavepointInTheFormatItNames(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.createSnapshot("native", func(s *v1beta1.FlinkSnapshotSpec) { s.FormatType = v1beta1.SavepointFormatNative })
	for i := 0; i < 20 && w.snapshot("native").Status.State != v1beta1.StateCompleted; i++ {
		_, _ = w.reconcile("wc")
	}
	snap, ok := w.storage.Get(w.snapshot("native").Status.Path)
	require.True(t, ok)
	assert.Equal(t, "NATIVE", snap.Format)
}

// snapshotWrites counts the writes the operator sent to FlinkSnapshots.
func (w *world) snapshotWrites() int {
	n := 0
	for _, a := range w.apps.Actions() {
		if a.GetResource().Resource == "flinksnapshots" && a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			n++
		}
	}
	return n
}

// Once a FlinkSnapshot shows how its snapshot ended, passes write nothing more to it: an idle
// application costs the API server nothing for its snapshots.
func TestAFinishedFlinkSnapshotIsNotWrittenAgain(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.createSnapshot("once", nil)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "one" })
	w.runUntil("wc", "both taken", func(a *v1beta1.FlinkApplication) bool {
		return len(w.snapshots()) == 2 && w.snapshot("once").Status.State == v1beta1.StateCompleted &&
			len(a.Status.Savepoints) == 2
	})
	for i := 0; i < 3; i++ {
		_, _ = w.reconcile("wc")
	}
	before := w.snapshotWrites()
	for i := 0; i < 20; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Equal(t, before, w.snapshotWrites())
}

// A snapshot a FlinkSnapshot asked for that fails is tried again after a backoff, up to its
// backoffLimit; the attempts show in its status.
func TestAFailedSnapshotIsTriedAgainWithBackoff(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jm := w.jm(app, app.Status.DeployHash)
	jm.SetFaults(flinksim.Faults{FailSavepoints: true})
	one := int32(1)
	w.createSnapshot("flaky", func(s *v1beta1.FlinkSnapshotSpec) { s.BackoffLimit = &one })
	w.runUntil("wc", "first attempt failed", func(*v1beta1.FlinkApplication) bool {
		return w.snapshot("flaky").Status.NextAttemptTime != nil
	})
	s := w.snapshot("flaky")
	assert.Equal(t, v1beta1.StatePending, s.Status.State)
	assert.Equal(t, int32(1), s.Status.Attempts)
	assert.Contains(t, s.Status.Error, "attempt 1 of 2 failed")
	assert.Equal(t, 1, jm.SavepointTriggers())
	retryAt := s.Status.NextAttemptTime.Time
	for w.clock.Now().Before(retryAt.Add(-time.Second)) {
		_, _ = w.reconcile("wc")
	}
	assert.Equal(t, 1, jm.SavepointTriggers(), "not before the backoff")

	w.runUntil("wc", "given up", func(*v1beta1.FlinkApplication) bool {
		return w.snapshot("flaky").Status.State == v1beta1.StateFailed
	})
	s = w.snapshot("flaky")
	assert.Equal(t, int32(2), s.Status.Attempts)
	assert.Nil(t, s.Status.NextAttemptTime)
	assert.Equal(t, 2, jm.SavepointTriggers(), "backoffLimit 1: one more attempt, then no more")
	for i := 0; i < 10; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Equal(t, 2, jm.SavepointTriggers())

	// Flink recovers before the next attempt: the second one completes.
	jm.SetFaults(flinksim.Faults{FailSavepoints: true})
	w.createSnapshot("recovers", nil)
	w.runUntil("wc", "first attempt failed", func(*v1beta1.FlinkApplication) bool {
		return w.snapshot("recovers").Status.NextAttemptTime != nil
	})
	jm.SetFaults(flinksim.Faults{})
	w.runUntil("wc", "completed on the second attempt", func(*v1beta1.FlinkApplication) bool {
		return w.snapshot("recovers").Status.State == v1beta1.StateCompleted
	})
	assert.Equal(t, int32(2), w.snapshot("recovers").Status.Attempts)
	assert.Empty(t, w.snapshot("recovers").Status.Error)
}

// A FlinkSnapshot deleted with disposeOnDelete after its owner went says why it waits, and how to
// let it go.
func TestADeletedSnapshotOfAGoneOwnerSaysWhyItWaits(t *testing.T) {
	w := newWorld(t)
	w.createSnapshot("orphan", func(s *v1beta1.FlinkSnapshotSpec) { s.DisposeOnDelete = true })
	s := w.snapshot("orphan")
	s.Finalizers = []string{snapshots.DisposeFinalizer}
	s.Status.Path = "s3://state/savepoint-1"
	_, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Update(context.Background(), s, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.deleteSnapshot("orphan")
	_, err = w.env.ReconcileOrphanedSnapshot(context.Background(), ns, "orphan")
	require.NoError(t, err)
	got := w.snapshot("orphan")
	require.NotNil(t, got, "held by its finalizer")
	assert.Contains(t, got.Status.Error, "FlinkApplication wc does not exist")
	assert.Contains(t, got.Status.Error, "remove finalizer "+snapshots.DisposeFinalizer)

	// With its owner there, the owner's pass answers it instead.
	running(t, w, "wc")
	before := w.snapshotWrites()
	_, err = w.env.ReconcileOrphanedSnapshot(context.Background(), ns, "orphan")
	require.NoError(t, err)
	assert.Equal(t, before, w.snapshotWrites())
}

// A savepoint another application was redeployed from stays while that redeploy is within the
// retention window, even after that application moved on from it; past the window it goes.
func TestRetentionKeepsWhatAnotherApplicationWasRedeployedFromWithinItsWindow(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointRetention = &v1beta1.SavepointRetention{Keep: 1, MaxAge: &metav1.Duration{Duration: time.Hour}}
		a.Spec.SavepointTriggerNonce = "handover"
	})
	w.runUntil("wc", "handover savepoint", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.SavepointTriggerNonce == "handover" && a.Status.SavepointTriggerID == "" && len(a.Status.Savepoints) == 1
	})
	handover := w.get("wc").Status.Savepoints[0].Path

	other := running(t, w, "other")
	w.update("other", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = handover, "1"
	})
	redeployed := w.runUntil("other", "redeployed from the handover", upgradedFrom(other))
	require.Equal(t, handover, redeployed.Status.JobStatus.RestorePath)
	w.update("other", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	moved := w.runUntil("other", "moved on", upgradedFrom(redeployed))
	require.NotEqual(t, handover, moved.Status.JobStatus.RestorePath)

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "later" })
	w.runUntil("wc", "a later savepoint", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.SavepointTriggerNonce == "later" && a.Status.SavepointTriggerID == ""
	})
	for i := 0; i < 5; i++ {
		_, _ = w.reconcile("wc")
	}
	kept := false
	for _, s := range w.snapshots() {
		kept = kept || s.Status.Path == handover
	}
	assert.True(t, kept, "past keep 1, but another application was redeployed from it within the hour")

	w.clock.Step(2 * time.Hour)
	for i := 0; i < 5; i++ {
		_, _ = w.reconcile("wc")
	}
	for _, s := range w.snapshots() {
		assert.NotEqual(t, handover, s.Status.Path, "past the window it goes")
	}
}
