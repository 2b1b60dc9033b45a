package flinkapplication

// Attack review s13 of the guardian's hold on pending savepoints (432516a): each test here failed
// on 432516a.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// Attack review s13: commit 432516a (a savepoint or checkpoint asked for whose result is not known
// yet holds every path Flink would give it: guardian.References.Pending, except the paths of
// References.Recorded and of FlinkSnapshots carrying the ledger-entry annotation). Subtests named as
// guards pass on 432516a; every other test fails on it:
//
//   - new with 432516a (pass on 432516a~1): ANeighboursEndlessSavepointKeepsThisApplicationsStorageForGood,
//     AFlinkSnapshotDeletedWhileAnySavepointIsInFlightLeavesItsStorageForGood;
//   - left open by 432516a (fail on 432516a~1 too): AnAnnotatedUserSnapshotLetsAPendingSavepointBeDisposedOf,
//     TheOperatorsSnapshotOfAResultNotYetPersistedLetsThePendingSavepointGo,
//     ASavepointWhoseEndCanNoLongerBeLearnedIsNotHeld.

// s13SavepointOf is the path of a savepoint of the job that Flink completed and Storage holds; "" when
// none.
func (w *world) s13SavepointOf(job string) string {
	for _, s := range ledgerSavepoints(w) {
		if s.JobID == job {
			return s.Path
		}
	}
	return ""
}

// s13Entry is the stored ledger entry of the job with the purpose, newest first; nil when none.
func s13Entry(app *v1beta1.FlinkApplication, job string, purpose v1beta1.SavepointPurpose) *v1beta1.StateEntry {
	for i := len(app.Status.Ledger) - 1; i >= 0; i-- {
		if e := &app.Status.Ledger[i]; e.JobID == job && e.Purpose == purpose {
			return e
		}
	}
	return nil
}

// s13ManualSavepointCompletedUnread asks for a manual savepoint of wc's running job while its
// JobManager fails every read of a savepoint's status (a JobManager under load, a proxy in the
// way): Flink completes the savepoint, Storage holds it, and the stored ledger entry stays Pending.
// It returns the savepoint's path.
func (w *world) s13ManualSavepointCompletedUnread(app *v1beta1.FlinkApplication) string {
	t := w.t
	jm := w.jm(app, app.Status.DeployHash)
	job := app.Status.JobStatus.JobID
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "s13" })
	for i := 0; i < 30 && jm.SavepointTriggers() == 0; i++ {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, 1, jm.SavepointTriggers())
	jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointSavepointStatus: 1}})
	path := ""
	for i := 0; i < 120 && path == ""; i++ {
		_, _ = w.reconcile("wc")
		path = w.s13SavepointOf(job)
	}
	if path == "" {
		a := w.get("wc")
		t.Logf("triggers %d phase %s reason %q ledger %+v snapshots %+v", jm.SavepointTriggers(), a.Status.Phase, a.Status.Reason, a.Status.Ledger, w.storage.Snapshots())
	}
	require.NotEmpty(t, path, "Flink completed the savepoint")
	w.passes("wc", 3)
	e := s13Entry(w.get("wc"), job, v1beta1.SavepointManual)
	require.NotNil(t, e)
	require.Equal(t, v1beta1.StatePending, e.Result, "the operator has not read the result: %+v", e)
	return path
}

// A tenant's FlinkSnapshot that carries the annotation flink.k8s.io/ledger-entry turns off the hold of
// a pending savepoint on its path. The guardian takes any FlinkSnapshot of the namespace with that
// annotation for "a result the operator read and recorded" (snapshots.Namespace.Guardian sets
// guardian.Snapshot.Recorded from the annotation alone), but an annotation is the tenant's to write:
// a FlinkSnapshot of type Checkpoint (which shows no savepoint to the guardian, so holds nothing)
// registering the path with the annotation is enough. A second FlinkSnapshot registering the same
// path with disposeOnDelete is then deleted, and the savepoint the job completed, which the operator
// has not read yet, is disposed of: once the result comes in, the ledger records as the job's newest
// savepoint a path whose storage is gone. What the user loses: the job's newest state (the very loss
// of explorer seed 67000854, which 432516a set out to stop) by a FlinkSnapshot manifest copied from
// one the operator made, or written by a hostile tenant of the namespace.
//
// The subtest "registered" is the guard: without the annotated decoy the savepoint is kept (432516a).
func TestS13AnAnnotatedUserSnapshotLetsAPendingSavepointBeDisposedOf(t *testing.T) {
	for _, decoy := range []bool{false, true} {
		name := "registered"
		if decoy {
			name = "registered beside an annotated decoy"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			app := runningWith(t, w, "wc", s13RareCheckpoints)
			job := app.Status.JobStatus.JobID
			path := w.s13ManualSavepointCompletedUnread(app)

			if decoy {
				s := &v1beta1.FlinkSnapshot{
					ObjectMeta: metav1.ObjectMeta{Name: "decoy", Namespace: ns, CreationTimestamp: metav1.NewTime(w.clock.Now()),
						Annotations: map[string]string{snapshots.LedgerEntryAnnotation: "copied/from-another-snapshot"}},
					Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: applicationKindName, Name: "wc"},
						Type: v1beta1.SnapshotCheckpoint, Path: path},
				}
				_, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Create(context.Background(), s, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			w.createSnapshot("throwaway", func(s *v1beta1.FlinkSnapshotSpec) { s.Path, s.DisposeOnDelete = path, true })
			for i := 0; i < 10 && w.snapshot("throwaway").Status.State != v1beta1.StateCompleted; i++ {
				_, _ = w.reconcile("wc")
			}
			require.Contains(t, w.snapshot("throwaway").Finalizers, snapshots.DisposeFinalizer)
			w.deleteSnapshot("throwaway")
			for i := 0; i < 10 && w.snapshot("throwaway") != nil; i++ {
				_, _ = w.reconcile("wc")
			}
			events := strings.Join(w.events(), "\n")
			require.Equal(t, v1beta1.StatePending, s13Entry(w.get("wc"), job, v1beta1.SavepointManual).Result)
			assert.True(t, w.storage.Exists(path),
				"the savepoint the job completed, whose result the operator has not read yet, was disposed of; events:\n%s", events)

			// Flink answers again: the result comes in.
			w.jm(app, app.Status.DeployHash).SetFaults(flinksim.Faults{})
			for i := 0; i < 20 && s13Entry(w.get("wc"), job, v1beta1.SavepointManual).Result == v1beta1.StatePending; i++ {
				_, _ = w.reconcile("wc")
			}
			e := s13Entry(w.get("wc"), job, v1beta1.SavepointManual)
			require.Equal(t, v1beta1.StateCompleted, e.Result)
			require.Equal(t, path, e.Path)
			// The job's JobManager goes (Flink HA off): the next job starts from its newest state.
			app = w.s13JobManagerLost(w.get("wc"), 300)
			t.Logf("after the JobManager was lost: phase %s, job %s, restore path %q, reason %q", app.Status.Phase, app.Status.JobStatus.JobID,
				app.Status.JobStatus.RestorePath, app.Status.Reason)
			assert.True(t, app.Status.Phase == v1beta1.PhaseRunning && app.Status.JobStatus.RestorePath == path && w.storage.Exists(path),
				"the next job runs from the newest savepoint %s: phase %s, reason %q", path, app.Status.Phase, app.Status.Reason)
		})
	}
}

// s13Neighbour is a FlinkApplication name whose job ids begin with the same 6 hex characters as wc's
// in namespace jobs (sha256("jobs/wc") and sha256("jobs/neighbour-2954702") both begin 082fbf): Flink
// names both objects' savepoints savepoint-082fbf-…. Found by trying names neighbour-0, -1, …: 3
// million sha256 sums, under a second; any tenant can aim at any name of its namespace so.
const s13Neighbour = "neighbour-2954702"

func s13NamePrefix(name string) string {
	sum := sha256.Sum256([]byte(ns + "/" + name))
	return hex.EncodeToString(sum[:])[:6]
}

// s13Dispose makes a FlinkSnapshot of wc that asks for a savepoint, to be disposed of on delete, lets
// the job's checkpoints move past it, deletes it and reconciles until it is gone. It returns the path
// of its savepoint.
func (w *world) s13Dispose(name string, between func(), whilePending bool) string {
	t := w.t
	w.createSnapshot(name, func(s *v1beta1.FlinkSnapshotSpec) { s.DisposeOnDelete = true })
	for i := 0; i < 20 && w.snapshot(name).Status.State != v1beta1.StateCompleted; i++ {
		_, _ = w.reconcile("wc")
	}
	s := w.snapshot(name)
	require.Equal(t, v1beta1.StateCompleted, s.Status.State)
	require.Contains(t, s.Finalizers, snapshots.DisposeFinalizer)
	path := s.Status.Path
	require.True(t, w.storage.Exists(path))
	for end := w.clock.Now().Add(2 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	if between != nil {
		between()
	}
	w.deleteSnapshot(name)
	for i := 0; i < 10 && w.snapshot(name) != nil; i++ {
		_, _ = w.reconcile("wc")
	}
	if !whilePending {
		require.Nil(t, w.snapshot(name), "the FlinkSnapshot is gone")
	}
	return path
}

// Another tenant's pending savepoint holds this application's storage for good. The pending hold
// covers every path named savepoint-<first 6 characters of the pending job's id>-…, of any owner of
// the namespace, and those 6 characters are the start of sha256("<namespace>/<name>"): a tenant
// that names its FlinkApplication so that they match wc's (3 million names tried, under a second)
// and whose JobManager (its own image) keeps a savepoint IN_PROGRESS for ever holds every savepoint
// of wc that wc's records do not name and no annotated FlinkSnapshot shows. wc's user deletes a
// FlinkSnapshot it asked a savepoint with, disposeOnDelete, long after the job moved on: the storage
// is kept ("SnapshotKept": the neighbour needs it), the finalizer goes, and nothing ever asks
// again: the savepoint stays on storage for ever, though nothing needs it. What the user loses:
// storage, without bound (every such disposal while the neighbour's savepoint hangs), by another
// tenant's doing; and the Event tells wc's user the name and job id of another tenant's object.
//
// The subtest "another name" is the guard: a neighbour whose name does not collide holds nothing.
func TestS13ANeighboursEndlessSavepointKeepsThisApplicationsStorageForGood(t *testing.T) {
	require.Equal(t, s13NamePrefix("wc"), s13NamePrefix(s13Neighbour))
	for _, neighbour := range []string{"neighbour-1", s13Neighbour} {
		name := "another name"
		if neighbour == s13Neighbour {
			name = "a colliding name"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.imageFaults["flink-wordcount:hostile"] = flinksim.Faults{HangSavepoints: true}
			other := runningWith(t, w, neighbour, func(s *v1beta1.FlinkApplicationSpec) { s.Image = "flink-wordcount:hostile" })
			otherJM := w.jm(other, other.Status.DeployHash)
			w.update(neighbour, func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "forever" })
			for i := 0; i < 30 && otherJM.SavepointTriggers() == 0; i++ {
				_, _ = w.reconcile(neighbour)
			}
			w.passes(neighbour, 3)
			otherJob := other.Status.JobStatus.JobID
			require.Equal(t, v1beta1.StatePending, s13Entry(w.get(neighbour), otherJob, v1beta1.SavepointManual).Result)

			running(t, w, "wc")
			path := w.s13Dispose("throwaway", nil, false)
			events := strings.Join(w.events(), "\n")
			assert.False(t, w.storage.Exists(path), "wc's savepoint %s, which nothing needs, stays after its FlinkSnapshot went with "+
				"disposeOnDelete (neighbour %s, job %s); events:\n%s", path, neighbour, otherJob, events)

			// An hour on, the neighbour's savepoint still hangs, and nothing disposes of wc's.
			for end := w.clock.Now().Add(time.Hour); w.clock.Now().Before(end); w.clock.Step(time.Minute) {
				_, _ = w.reconcile("wc")
				_, _ = w.reconcile(neighbour)
			}
			require.Equal(t, v1beta1.StatePending, s13Entry(w.get(neighbour), otherJob, v1beta1.SavepointManual).Result)
			assert.False(t, w.storage.Exists(path), "an hour later %s is still on storage, shown by no FlinkSnapshot", path)
		})
	}
}

// The pending hold is for a while (until the result is known), but what it decides is for good: a
// deleted FlinkSnapshot whose storage a pending savepoint holds loses its finalizer at once, and the
// storage is never disposed of, even once the result is in. OnlyUntilThisWrite keeps the finalizer
// for the hold of a status as stored, which ends with the pass's write; the pending hold has no such
// care. Here wc's own manual savepoint's result is not read for a minute (the JobManager fails the
// reads of its status) while its user deletes a FlinkSnapshot of an older savepoint with
// disposeOnDelete, which wc's ledger no longer lists (savepointRetention.keep 1): the older savepoint
// is no pending savepoint's result (it completed two minutes before the trigger), yet is kept, and
// when the result comes in a moment later nothing disposes of it. What the user loses: the
// disposeOnDelete it asked for; storage leaks at every such delete that meets any savepoint or
// checkpoint of the owner in flight (a periodic one every minute, say).
func TestS13AFlinkSnapshotDeletedWhileAnySavepointIsInFlightLeavesItsStorageForGood(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.SavepointRetention = &v1beta1.SavepointRetention{Keep: 1}
	})
	jm := w.jm(app, app.Status.DeployHash)
	job := app.Status.JobStatus.JobID
	// The fix keeps the finalizer while the hold lasts: the deletion waits for the answer.
	path := w.s13Dispose("throwaway", func() {
		w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "later" })
		w.runUntil("wc", "a later savepoint", func(a *v1beta1.FlinkApplication) bool {
			e := s13Entry(a, job, v1beta1.SavepointManual)
			return a.Status.SavepointTriggerNonce == "later" && e != nil && e.Result == v1beta1.StateCompleted && e.Snapshot != "throwaway"
		})
		w.passes("wc", 3)
		for _, e := range w.get("wc").Status.Ledger {
			require.NotEqual(t, w.snapshot("throwaway").Status.Path, e.Path, "retention keeps one savepoint; the ledger no longer lists it")
		}
		w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "in-flight" })
		for i := 0; i < 30 && jm.SavepointTriggers() < 3; i++ {
			_, _ = w.reconcile("wc")
		}
		require.Equal(t, 3, jm.SavepointTriggers())
		jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointSavepointStatus: 1}})
		w.passes("wc", 2)
		require.Equal(t, v1beta1.StatePending, s13Entry(w.get("wc"), job, v1beta1.SavepointManual).Result)
	}, true)
	jm.SetFaults(flinksim.Faults{})
	for i := 0; i < 20 && s13Entry(w.get("wc"), job, v1beta1.SavepointManual).Result == v1beta1.StatePending; i++ {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, v1beta1.StateCompleted, s13Entry(w.get("wc"), job, v1beta1.SavepointManual).Result)
	w.passes("wc", 10)
	assert.Nil(t, w.snapshot("throwaway"), "the deleted FlinkSnapshot goes once the answer is read")
	events := strings.Join(w.events(), "\n")
	assert.False(t, w.storage.Exists(path), "%s, which nothing needs, stays on storage shown by no FlinkSnapshot; events:\n%s", path, events)
}

// s13FailStatusWrites makes FlinkApplication status writes fail while *on holds: the operator killed
// after a pass's side effects (Flink calls, FlinkSnapshot writes) and before its one status write.
func (w *world) s13FailStatusWrites(on *bool) {
	w.apps.PrependReactor("patch", "flinkapplications", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && *on {
			return true, nil, errors.New("operator killed before the status write")
		}
		return false, nil, nil
	})
}

// s13JobManagerLost deletes the JobManager of wc's running job (Flink HA off: the job goes with it),
// and reconciles at most n passes until a job of wc runs again or the application rests failed. The
// next job starts from the newest state the lost one completed.
func (w *world) s13JobManagerLost(old *v1beta1.FlinkApplication, n int) *v1beta1.FlinkApplication {
	w.s10DeleteJobManager(old, old.Status.DeployHash)
	for i := 0; i < n; i++ {
		_, _ = w.reconcile("wc")
		a := w.get("wc")
		if a.Status.JobStatus.JobID != old.Status.JobStatus.JobID && a.Status.JobStatus.State == v1beta1.JobRunning && a.Status.Phase == v1beta1.PhaseRunning ||
			a.Status.Phase == v1beta1.PhaseDeployFailed {
			break
		}
	}
	return w.get("wc")
}

// s13RareCheckpoints checkpoints once an hour: a savepoint is then the job's newest state.
func s13RareCheckpoints(s *v1beta1.FlinkApplicationSpec) {
	s.FlinkConfig["execution.checkpointing.interval"] = "1h"
}

// The operator reads a manual savepoint's result and makes its FlinkSnapshot (annotated
// flink.k8s.io/ledger-entry, status.path set, disposeOnDelete since savepointRetention.disposeOlder),
// and is killed before the status write that records the result: the stored ledger entry is still
// Pending, which docs/snapshots.md allows for ("a name derived from the entry makes a create
// repeated after a crash find its object"). The JobManager then fails the reads of the savepoint's
// status for a while. The FlinkSnapshot shows the pending entry's very result, but the guardian
// takes every annotated FlinkSnapshot's path for a known state (guardian.Snapshot.Recorded), so the
// pending entry no longer holds it; nothing else names it, and the user deleting that FlinkSnapshot
// (or retention, past maxAge) disposes of the job's newest savepoint. When Flink answers again the
// ledger records the savepoint as completed, and a LastState upgrade starts the next job from it:
// it is gone. What the user loses: the job's newest state, after one operator crash.
func TestS13TheOperatorsSnapshotOfAResultNotYetPersistedLetsThePendingSavepointGo(t *testing.T) {
	for _, byRetention := range []bool{false, true} {
		name := "deleted by the user"
		if byRetention {
			name = "retired past maxAge"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
				s13RareCheckpoints(s)
				s.SavepointRetention = &v1beta1.SavepointRetention{Keep: 5, DisposeOlder: true}
				if byRetention {
					s.SavepointRetention.MaxAge = &metav1.Duration{Duration: time.Minute}
				}
			})
			jm := w.jm(old, old.Status.DeployHash)
			job := old.Status.JobStatus.JobID
			crash := false
			w.s13FailStatusWrites(&crash)
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "s13" })
			for i := 0; i < 30 && jm.SavepointTriggers() == 0; i++ {
				_, _ = w.reconcile("wc")
			}
			require.Equal(t, 1, jm.SavepointTriggers())

			// The pass that reads the result makes its FlinkSnapshot and is killed before its status write.
			crash = true
			var snap *v1beta1.FlinkSnapshot
			for i := 0; i < 60 && snap == nil; i++ {
				_, _ = w.reconcile("wc")
				for _, s := range w.snapshots() {
					if s.Annotations[snapshots.LedgerEntryAnnotation] != "" && s.Status.JobID == job && s.Status.Path != "" {
						snap = s.DeepCopy()
					}
				}
			}
			require.NotNil(t, snap, "the operator read the result and made its FlinkSnapshot")
			w.restartOperator()
			crash = false
			jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointSavepointStatus: 1}})
			path := snap.Status.Path
			require.Equal(t, v1beta1.StatePending, s13Entry(w.get("wc"), job, v1beta1.SavepointManual).Result, "the result was not persisted")
			require.Contains(t, snap.Finalizers, snapshots.DisposeFinalizer)
			require.True(t, w.storage.Exists(path))

			if byRetention {
				// The JobManager fails the reads for two minutes; retention runs every pass.
				for end := w.clock.Now().Add(2 * time.Minute); w.clock.Now().Before(end) && w.snapshot(snap.Name) != nil; {
					_, _ = w.reconcile("wc")
				}
			} else {
				w.deleteSnapshot(snap.Name)
			}
			for i := 0; i < 10 && w.snapshot(snap.Name) != nil; i++ {
				_, _ = w.reconcile("wc")
			}
			events := strings.Join(w.events(), "\n")
			require.Equal(t, v1beta1.StatePending, s13Entry(w.get("wc"), job, v1beta1.SavepointManual).Result)
			assert.True(t, w.storage.Exists(path), "the pending savepoint's result %s was disposed of; events:\n%s", path, events)

			// Flink answers again, and then the job's JobManager goes (Flink HA off).
			jm.SetFaults(flinksim.Faults{})
			for i := 0; i < 20 && s13Entry(w.get("wc"), job, v1beta1.SavepointManual).Result == v1beta1.StatePending; i++ {
				_, _ = w.reconcile("wc")
			}
			e := s13Entry(w.get("wc"), job, v1beta1.SavepointManual)
			require.Equal(t, v1beta1.StateCompleted, e.Result)
			require.Equal(t, path, e.Path)
			app := w.s13JobManagerLost(w.get("wc"), 300)
			t.Logf("after the JobManager was lost: phase %s, job %s, restore path %q, reason %q", app.Status.Phase, app.Status.JobStatus.JobID,
				app.Status.JobStatus.RestorePath, app.Status.Reason)
			assert.True(t, app.Status.Phase == v1beta1.PhaseRunning && app.Status.JobStatus.State == v1beta1.JobRunning &&
				w.storage.Exists(app.Status.JobStatus.RestorePath),
				"the next job runs from the newest savepoint %s: phase %s, reason %q", path, app.Status.Phase, app.Status.Reason)
		})
	}
}

// A savepoint whose result the operator never read, and never will (its JobManager went, Flink HA
// off: the entry is marked Unknowable, a Failed entry "in doubt", ledger.IsInDoubt), is held by
// nothing: 432516a holds only Pending entries. Yet it is the case the restore rule stops for: the
// next job is not started until the user names the state to start from (guardian.Job.Doubt:
// RecoveryFailed "name the state to start from by hand"), and the state to name is that very
// savepoint, on storage under savepoint-<job>-…, which nobody has read. A FlinkSnapshot registering
// its path (here owned by another application of the namespace, whose JobManager disposes of it) is
// deleted with disposeOnDelete, and the guardian lets it go; the user then names it as asked, and
// the redeploy fails. What the user loses: the job's newest state, the one the operator's own
// message tells them to name; only an older checkpoint is left.
//
// Two subtests are guards: "still pending", the same deletion while the JobManager is still there
// (entry Pending), keeps the savepoint (432516a); "JobManager gone, nothing deleted" shows that the
// user naming the savepoint, as the operator asks, starts the next job from it.
func TestS13ASavepointWhoseEndCanNoLongerBeLearnedIsNotHeld(t *testing.T) {
	for _, c := range []struct {
		name           string
		lost, deletion bool
	}{{"still pending", false, true}, {"JobManager gone, nothing deleted", true, false}, {"JobManager gone", true, true}} {
		lost := c.lost
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			running(t, w, "other")
			app := runningWith(t, w, "wc", nil)
			job := app.Status.JobStatus.JobID
			path := w.s13ManualSavepointCompletedUnread(app)
			if lost {
				w.s10DeleteJobManager(app, app.Status.DeployHash)
				for i := 0; i < 40 && s13Entry(w.get("wc"), job, v1beta1.SavepointManual).Result == v1beta1.StatePending; i++ {
					_, _ = w.reconcile("wc")
				}
				w.passes("wc", 10)
			}
			e := s13Entry(w.get("wc"), job, v1beta1.SavepointManual)
			a := w.get("wc")
			t.Logf("entry %s %q; wc phase %s, reason %q", e.Result, e.Reason, a.Status.Phase, a.Status.Reason)

			if !c.deletion {
				w.s13NameTheState(t, job, path)
				return
			}
			s := &v1beta1.FlinkSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "throwaway", Namespace: ns, CreationTimestamp: metav1.NewTime(w.clock.Now())},
				Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: applicationKindName, Name: "other"}, Type: v1beta1.SnapshotSavepoint,
					Path: path, DisposeOnDelete: true}}
			_, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Create(context.Background(), s, metav1.CreateOptions{})
			require.NoError(t, err)
			for i := 0; i < 10 && w.snapshot("throwaway").Status.State != v1beta1.StateCompleted; i++ {
				_, _ = w.reconcile("other")
			}
			require.Contains(t, w.snapshot("throwaway").Finalizers, snapshots.DisposeFinalizer)
			w.deleteSnapshot("throwaway")
			for i := 0; i < 10 && w.snapshot("throwaway") != nil; i++ {
				_, _ = w.reconcile("other")
			}
			events := strings.Join(w.events(), "\n")
			assert.True(t, w.storage.Exists(path), "wc's savepoint %s, whose end wc never learned, was disposed of; events:\n%s", path, events)

			if lost {
				w.s13NameTheState(t, job, path)
			}
		})
	}
}

// s13NameTheState does what the operator asks of a user whose job's newest state is in doubt: it
// names the state to start from (spec.savepointPath, with a new savepointRedeployNonce), and checks
// that the next job runs from it.
func (w *world) s13NameTheState(t *testing.T, job, path string) {
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = path, "s13"
	})
	for i := 0; i < 200; i++ {
		_, _ = w.reconcile("wc")
		if a := w.get("wc"); a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != job {
			break
		}
	}
	a := w.get("wc")
	t.Logf("history %v", a.Status.History)
	assert.True(t, a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.RestorePath == path,
		"after the user named %s: phase %s, job %s, reason %q", path, a.Status.Phase, a.Status.JobStatus.JobID, a.Status.Reason)
}
