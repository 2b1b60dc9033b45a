package snapshots

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// FlinkSnapshots follow the ledger (docs/snapshots.md). The ledger stays the write-ahead record the
// state machine trusts; a FlinkSnapshot shows one of its entries, and the entry names it
// (status.ledger[].snapshot):
//
//   - a FlinkSnapshot a user creates to ask for a snapshot is named by the entry written for it,
//     before the trigger is sent (requests.go);
//   - every other savepoint the operator took and that ended (Completed or Failed), and every
//     checkpoint a user asked for by nonce, becomes a FlinkSnapshot once, in the pass that records
//     how it ended, so the same status write persists the entry's new name. A name derived from the
//     entry makes a create repeated after a crash find its object.
//
// An entry that names its FlinkSnapshot never makes another, so one a user deleted stays deleted,
// and its entry stays in the ledger for as long as the restore policy wants it. A FlinkSnapshot
// costs two writes, its create and its status (which a create cannot set), and one status write
// each time its entry changes after that.

// snapshotsPerPass bounds the FlinkSnapshots one pass creates: after an upgrade of the operator, the
// first pass of each owner finds every ended entry of its ledger without an object.
const snapshotsPerPass = 3

// LedgerEntryAnnotation marks a FlinkSnapshot the operator made for a ledger entry, as "<job
// id>/<trigger id>": nothing is to be triggered for it.
const LedgerEntryAnnotation = "flink.k8s.io/ledger-entry"

// Sync brings the owner's FlinkSnapshots in line with its ledger: it creates those of entries that
// ended without one and writes the status of those whose entry changed. A failed write is tried
// again at the next pass; it never holds the owner's own work. labels are put on the objects it
// creates (the owner's values of the shard selector's labels); disposeRetired says that retention
// disposes of the savepoints it retires, so those it creates are disposed of when deleted.
func Sync(ctx context.Context, p Pass, labels map[string]string, disposeRetired bool) {
	byName := map[string]*v1beta1.FlinkSnapshot{}
	for _, s := range p.Snapshots {
		byName[s.Name] = s
	}
	// A FlinkSnapshot tried more than once is named by an entry per attempt: it shows the newest.
	newest := map[string]int{}
	entries := *p.Ledger
	for i, e := range entries {
		if e.Snapshot != "" {
			newest[e.Snapshot] = i
		}
	}
	created := 0
	for i := range entries {
		e := &entries[i]
		if e.Snapshot != "" && newest[e.Snapshot] != i {
			continue
		}
		if e.Snapshot == "" {
			if !mirrored(e) || created == snapshotsPerPass {
				continue
			}
			name, err := createObject(ctx, p, e, labels, disposeRetired)
			if err != nil {
				klog.FromContext(ctx).Error(err, "creating the FlinkSnapshot of a ledger entry", "job", e.JobID, "trigger", e.TriggerID)
				return
			}
			e.Snapshot = name
			created++
			continue
		}
		if s := byName[e.Snapshot]; s != nil && s.DeletionTimestamp == nil {
			if err := showEntry(ctx, p, s, e); err != nil {
				klog.FromContext(ctx).Error(err, "writing the status of a FlinkSnapshot", "snapshot", s.Name)
				return
			}
		}
	}
}

// mirrored tells whether a ledger entry gets a FlinkSnapshot of the operator's making: a snapshot
// the operator took (or a user asked for by nonce) that ended. Checkpoints Flink took on its own are
// recorded, not mirrored: one every few seconds would be an object each; a savepoint a user named
// for a redeploy is the user's.
func mirrored(e *v1beta1.StateEntry) bool {
	switch {
	case e.Result == v1beta1.StatePending, e.Purpose == v1beta1.StateCheckpoint, e.Purpose == v1beta1.SavepointRedeploy:
		return false
	}
	return e.Result == v1beta1.StateFailed || e.Path != ""
}

// createObject creates the FlinkSnapshot of one entry, or finds it created by an earlier attempt,
// and writes its status.
func createObject(ctx context.Context, p Pass, e *v1beta1.StateEntry, labels map[string]string, disposeRetired bool) (string, error) {
	snap := Object(p.Kind, p.Meta, e)
	for k, v := range labels {
		if _, ours := snap.Labels[k]; !ours {
			snap.Labels[k] = v
		}
	}
	if disposeRetired && !ledger.IsCheckpoint(e.Purpose) && e.Path != "" {
		// Retention lets it go by deleting it; its storage goes with it.
		snap.Spec.DisposeOnDelete = true
		snap.Finalizers = []string{DisposeFinalizer}
	}
	client := p.Apps.FlinkV1beta1().FlinkSnapshots(p.Meta.Namespace)
	created, err := client.Create(ctx, snap, metav1.CreateOptions{FieldManager: p.FieldManager})
	if apierrors.IsAlreadyExists(err) {
		created, err = client.Get(ctx, snap.Name, metav1.GetOptions{})
		if err == nil && created.Annotations[LedgerEntryAnnotation] != snap.Annotations[LedgerEntryAnnotation] {
			return "", fmt.Errorf("FlinkSnapshot %s exists and is not this entry's", snap.Name)
		}
	}
	if err != nil {
		return "", err
	}
	if err := showEntry(ctx, p, created, e); err != nil {
		return "", err
	}
	return snap.Name, nil
}

// showEntry writes the entry's state to the FlinkSnapshot's status, and its state label, when they
// differ.
func showEntry(ctx context.Context, p Pass, s *v1beta1.FlinkSnapshot, e *v1beta1.StateEntry) error {
	want := entryStatus(e)
	want.ObservedGeneration = s.Generation
	if isRequest(s) {
		showAttempt(p.Now, s, e, &want)
	}
	have := s.Status
	if apiequality.Semantic.DeepEqual(inSeconds(have), inSeconds(want)) {
		return nil
	}
	return writeStatus(ctx, p, s, want)
}

// inSeconds is a status with its times as the API server keeps them, to the second, so that one
// read back compares equal to the one written.
func inSeconds(st v1beta1.FlinkSnapshotStatus) v1beta1.FlinkSnapshotStatus {
	for _, t := range []**metav1.Time{&st.TriggerTime, &st.ResultTime, &st.NextAttemptTime} {
		if *t != nil {
			c := (*t).Rfc3339Copy()
			*t = &c
		}
	}
	return st
}

// writeStatus writes a FlinkSnapshot's status, and its state label when the state changed.
func writeStatus(ctx context.Context, p Pass, s *v1beta1.FlinkSnapshot, st v1beta1.FlinkSnapshotStatus) error {
	client := p.Apps.FlinkV1beta1().FlinkSnapshots(s.Namespace)
	s = s.DeepCopy()
	s.Status = st
	updated, err := client.UpdateStatus(ctx, s, metav1.UpdateOptions{FieldManager: p.FieldManager})
	if err != nil {
		return err
	}
	if st.State != "" && updated.Labels[v1beta1.SnapshotStateLabel] != string(st.State) {
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, v1beta1.SnapshotStateLabel, st.State)
		if _, err := client.Patch(ctx, s.Name, "application/merge-patch+json", patch, metav1.PatchOptions{FieldManager: p.FieldManager}); err != nil {
			return err
		}
	}
	return nil
}

// entryStatus is what a FlinkSnapshot says of its ledger entry.
func entryStatus(e *v1beta1.StateEntry) v1beta1.FlinkSnapshotStatus {
	st := v1beta1.FlinkSnapshotStatus{
		State: e.Result, Purpose: e.Purpose, JobID: e.JobID, TriggerID: e.TriggerID, TriggerTime: e.TriggerTime,
		Path: e.Path, Error: e.Reason,
	}
	if e.Result != v1beta1.StatePending {
		st.ResultTime = e.Time
	}
	return st
}

// Object is the FlinkSnapshot that shows a ledger entry of an owner of this kind.
func Object(kind string, owner *metav1.ObjectMeta, e *v1beta1.StateEntry) *v1beta1.FlinkSnapshot {
	typ := v1beta1.SnapshotSavepoint
	if ledger.IsCheckpoint(e.Purpose) {
		typ = v1beta1.SnapshotCheckpoint
	}
	return &v1beta1.FlinkSnapshot{
		ObjectMeta: metav1.ObjectMeta{
			Name: snapshotName(owner.Name, e), Namespace: owner.Namespace,
			Labels: map[string]string{
				v1beta1.SnapshotOwnerKindLabel: kind, v1beta1.SnapshotOwnerLabel: labelValue(owner.Name),
				v1beta1.SnapshotPurposeLabel: string(e.Purpose), v1beta1.SnapshotStateLabel: string(e.Result),
			},
			Annotations: map[string]string{LedgerEntryAnnotation: e.JobID + "/" + e.TriggerID},
		},
		Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: kind, Name: owner.Name}, Type: typ, Path: e.Path},
	}
}

// snapshotName is "<owner>-<purpose>-<eight hex digits of the entry>", within the 253 characters of
// an object name.
func snapshotName(owner string, e *v1beta1.StateEntry) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(e.JobID + "/" + e.TriggerID + "/" + e.Path + "/" + string(e.Purpose)))
	suffix := fmt.Sprintf("-%s-%08x", strings.ToLower(string(e.Purpose)), h.Sum32())
	if limit := 253 - len(suffix); len(owner) > limit {
		owner = strings.TrimRight(owner[:limit], "-.")
	}
	return owner + suffix
}

// labelValue is name as a label value, which holds 63 characters at most: a longer name is cut, and
// spec.owner.name says it whole.
func labelValue(name string) string {
	if len(name) <= 63 {
		return name
	}
	return strings.TrimRight(name[:63], "-_.")
}
