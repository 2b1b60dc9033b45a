package snapshots

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
)

// What users ask of FlinkSnapshots, answered by the owner's pass:
//
//   - one created without spec.path asks for a snapshot of the owner's running job. It is taken as a
//     savepointTriggerNonce's is (the owner's savepointOnDemand), oldest first, one at a time: the ledger entry
//     written for it names it and is persisted, with the trigger shown in the object's status,
//     before the trigger is sent. It waits, saying why, while the owner's job does not run;
//   - one created with spec.path registers a snapshot that exists: it is Completed at once, and the
//     ledger is not touched (the restore policy follows the owner's own jobs);
//   - one deleted with spec.disposeOnDelete is held by DisposeFinalizer until its storage is
//     disposed of through Flink, which needs a JobManager of the owner; never the storage of a
//     state the owner's restore needs, which stays while the object goes.

// DisposeFinalizer holds a FlinkSnapshot with spec.disposeOnDelete until its storage is disposed of.
const DisposeFinalizer = "flink.k8s.io/dispose"

// AskedFor is the oldest FlinkSnapshot that asks for a snapshot the ledger has not taken up, with
// the ledger purpose it is taken as; nil when none asks.
func AskedFor(p Pass) (*v1beta1.FlinkSnapshot, v1beta1.SavepointPurpose) {
	var oldest *v1beta1.FlinkSnapshot
	for _, s := range p.Snapshots {
		if !asksForSnapshot(p, s) {
			continue
		}
		if oldest == nil || s.CreationTimestamp.Before(&oldest.CreationTimestamp) ||
			s.CreationTimestamp.Equal(&oldest.CreationTimestamp) && s.Name < oldest.Name {
			oldest = s
		}
	}
	switch {
	case oldest == nil:
		return nil, ""
	case oldest.Spec.Type == v1beta1.SnapshotCheckpoint:
		return oldest, v1beta1.ManualCheckpoint
	}
	return oldest, v1beta1.SavepointManual
}

// asksForSnapshot tells whether a FlinkSnapshot asks for a snapshot that no ledger entry is taking:
// a user's, without a path, not deleted, and either not taken up yet, shown Pending by an ask whose
// entry was never persisted (an entry is never dropped while Pending, so a Pending status without
// one was not sent), or due to be tried again after a failure.
func asksForSnapshot(p Pass, s *v1beta1.FlinkSnapshot) bool {
	if !isRequest(s) || s.DeletionTimestamp != nil || s.Status.State != "" && s.Status.State != v1beta1.StatePending {
		return false
	}
	if e := p.newestEntryNaming(s.Name); e != nil && e.Result != v1beta1.StateFailed {
		return false
	}
	next := s.Status.NextAttemptTime
	return next == nil || !p.Now.Before(next.Time)
}

// isRequest tells whether a FlinkSnapshot asks for a snapshot: a user's, without a path.
func isRequest(s *v1beta1.FlinkSnapshot) bool {
	return s.Annotations[LedgerEntryAnnotation] == "" && s.Spec.Path == ""
}

// defaultBackoffLimit is how many times a failed snapshot a FlinkSnapshot asked for is tried again
// when its spec does not say.
const defaultBackoffLimit = 3

// showAttempt counts the attempts of a snapshot a FlinkSnapshot asked for and, when one failed with
// attempts left, shows it Pending until the time it is tried again: 10 s after the first failure,
// doubling to at most 10 minutes.
func showAttempt(now time.Time, s *v1beta1.FlinkSnapshot, e *v1beta1.StateEntry, want *v1beta1.FlinkSnapshotStatus) {
	// The same attempt as the one shown: its trigger id, or its trigger time to the second the API
	// server keeps (Flink before 1.15 names the trigger's id once it is sent).
	sameTrigger := s.Status.TriggerID != "" && s.Status.TriggerID == e.TriggerID ||
		s.Status.TriggerTime != nil && e.TriggerTime != nil && s.Status.TriggerTime.Rfc3339Copy().Time.Equal(e.TriggerTime.Rfc3339Copy().Time)
	want.Attempts = s.Status.Attempts
	if !sameTrigger || want.Attempts == 0 {
		want.Attempts++
	}
	limit := int32(defaultBackoffLimit)
	if s.Spec.BackoffLimit != nil {
		limit = *s.Spec.BackoffLimit
	}
	if e.Result != v1beta1.StateFailed || want.Attempts > limit {
		return
	}
	next := s.Status.NextAttemptTime
	if next == nil || !sameTrigger {
		wait := min(10*time.Second<<(want.Attempts-1), 10*time.Minute)
		t := metav1.NewTime(now.Add(wait))
		next = &t
	}
	want.State, want.ResultTime, want.NextAttemptTime = v1beta1.StatePending, nil, next
	want.Error = fmt.Sprintf("attempt %d of %d failed: %s; tried again at %s", want.Attempts, limit+1, e.Reason,
		next.UTC().Format(time.RFC3339))
}

// Disposal is how an owner disposes of the storage of its deleted FlinkSnapshots.
type Disposal struct {
	// Guardian is the guardian of the namespace, read now (other shards included): storage goes on
	// its word. It is asked once a pass, when a disposal is due.
	Guardian func() (*guardian.Namespace, error)
	// Dispose disposes of a savepoint's storage through a running JobManager of the owner; nil when
	// the owner has none ready.
	Dispose func(path string) error
}

// Answer writes what a pass did not take up of the users' FlinkSnapshots: a registered path is
// Completed; a request waits, saying why, while the owner's job does not run (phase is the
// owner's); a FlinkSnapshot to dispose of on delete gets its finalizer, and a deleted one is
// disposed of.
func Answer(ctx context.Context, p Pass, phase string, disposal Disposal) {
	d := &disposals{Disposal: disposal}
	for _, s := range p.Snapshots {
		var err error
		switch {
		case s.DeletionTimestamp != nil:
			err = disposeOnDelete(ctx, p, s, d)
		case s.Spec.DisposeOnDelete && !slices.Contains(s.Finalizers, DisposeFinalizer):
			err = patchFinalizers(ctx, p, s, append(slices.Clone(s.Finalizers), DisposeFinalizer))
		case s.Annotations[LedgerEntryAnnotation] == "" && s.Spec.Path != "" && s.Status.State == "":
			now := metav1.NewTime(p.Now)
			err = writeStatus(ctx, p, s, v1beta1.FlinkSnapshotStatus{State: v1beta1.StateCompleted, Purpose: v1beta1.SnapshotRegistered,
				Path: s.Spec.Path, ResultTime: &now, ObservedGeneration: s.Generation})
		case asksForSnapshot(p, s) && s.Status.State == "" && s.Status.Error == "":
			err = writeStatus(ctx, p, s, v1beta1.FlinkSnapshotStatus{ObservedGeneration: s.Generation,
				Error: fmt.Sprintf("waiting for the job of %s %s to run (phase %s)", p.Kind, p.Meta.Name, phase)})
		}
		if err != nil {
			klog.FromContext(ctx).Error(err, "answering a FlinkSnapshot", "snapshot", s.Name)
			return
		}
	}
}

// disposeOnDelete disposes of a deleted FlinkSnapshot's storage through a JobManager of the owner,
// then lets the object go. The storage of a state anything of the namespace still needs stays
// (the guardian says who).
func disposeOnDelete(ctx context.Context, p Pass, s *v1beta1.FlinkSnapshot, d *disposals) error {
	if !slices.Contains(s.Finalizers, DisposeFinalizer) {
		return nil
	}
	rest := slices.DeleteFunc(slices.Clone(s.Finalizers), func(f string) bool { return f == DisposeFinalizer })
	path := s.Status.Path
	switch {
	case !s.Spec.DisposeOnDelete || path == "" || s.Spec.Type == v1beta1.SnapshotCheckpoint:
		// Nothing of ours to remove: a checkpoint is Flink's to manage.
		return patchFinalizers(ctx, p, s, rest)
	}
	if d.calls == disposalsPerPass {
		// The rest wait for the next passes: one owner's deleted FlinkSnapshots never hold its worker
		// for more than a few Flink calls; the owner's next poll goes on.
		return nil
	}
	g, err := d.guardian()
	if err != nil {
		return err
	}
	if v := g.MayDelete(guardian.State{Path: path, Snapshot: s.Name}); !v.MayGo() {
		if OnlyUntilThisWrite(v) || v.OnlyUntilAnswered() {
			// Only the stored status names it, and this pass's write stops naming it, or it may be
			// a savepoint's unread result until Flink's answer is read: the finalizer stays, and a
			// later pass disposes of it.
			return nil
		}
		p.Announce(true, "SnapshotKept", fmt.Sprintf("FlinkSnapshot %s is deleted but its savepoint is kept: %s", s.Name, v))
		return patchFinalizers(ctx, p, s, rest)
	}
	if d.Dispose == nil {
		why := fmt.Sprintf("waiting for a running JobManager of %s %s to dispose of %s through Flink; remove finalizer %s to delete it without",
			p.Kind, p.Meta.Name, path, DisposeFinalizer)
		if s.Status.Error == why {
			return nil
		}
		st := s.Status
		st.Error = why
		return writeStatus(ctx, p, s, st)
	}
	d.calls++
	if err := d.Dispose(path); err != nil {
		why := fmt.Sprintf("disposing of %s failed: %v; tried again", path, err)
		if s.Status.Error == why {
			return nil
		}
		st := s.Status
		st.Error = why
		return writeStatus(ctx, p, s, st)
	}
	// The ledger forgets the state with its storage, so that no restore picks it.
	p.ledger().Forget(path)
	p.Announce(false, "SavepointDisposed", fmt.Sprintf("disposed of %s, the savepoint of FlinkSnapshot %s", path, s.Name))
	return patchFinalizers(ctx, p, s, rest)
}

// disposalsPerPass bounds the savepoint disposals one pass of an owner asks Flink for.
const disposalsPerPass = 5

// disposals is what one pass spent on disposing of deleted FlinkSnapshots' storage: the guardian,
// read once for all of them, and the Flink calls made.
type disposals struct {
	Disposal
	g     *guardian.Namespace
	calls int
}

func (d *disposals) guardian() (*guardian.Namespace, error) {
	if d.g == nil {
		g, err := d.Guardian()
		if err != nil {
			return nil, err
		}
		d.g = g
	}
	return d.g, nil
}

// patchFinalizers sets a FlinkSnapshot's finalizers, guarded by its resourceVersion.
func patchFinalizers(ctx context.Context, p Pass, s *v1beta1.FlinkSnapshot, finalizers []string) error {
	patch, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"finalizers": finalizers, "resourceVersion": s.ResourceVersion}})
	if err != nil {
		return err
	}
	_, err = p.Apps.FlinkV1beta1().FlinkSnapshots(s.Namespace).Patch(ctx, s.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: p.FieldManager})
	return err
}
