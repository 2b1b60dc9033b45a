package flinkapplication

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// What users ask of FlinkSnapshots, answered by the owner's pass:
//
//   - one created without spec.path asks for a snapshot of the owner's running job. It is taken as a
//     savepointTriggerNonce's is (savepointOnDemand), oldest first, one at a time: the ledger entry
//     written for it names it and is persisted, with the trigger shown in the object's status,
//     before the trigger is sent. It waits, saying why, while the owner's job does not run;
//   - one created with spec.path registers a snapshot that exists: it is Completed at once, and the
//     ledger is not touched (the restore policy follows the owner's own jobs);
//   - one deleted with spec.disposeOnDelete is held by DisposeFinalizer until its storage is
//     disposed of through Flink, which needs a JobManager of the owner; never the storage of a
//     state the owner's restore needs, which stays while the object goes.

// DisposeFinalizer holds a FlinkSnapshot with spec.disposeOnDelete until its storage is disposed of.
const DisposeFinalizer = "flink.k8s.io/dispose"

// snapshotAskedFor is the oldest FlinkSnapshot that asks for a snapshot the ledger has not taken
// up, with the ledger purpose it is taken as; nil when none asks.
func snapshotAskedFor(rc *Context) (*v1beta1.FlinkSnapshot, v1beta1.SavepointPurpose) {
	var oldest *v1beta1.FlinkSnapshot
	for _, s := range rc.Snapshots {
		if !asksForSnapshot(rc, s) {
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
func asksForSnapshot(rc *Context, s *v1beta1.FlinkSnapshot) bool {
	if !isRequest(s) || s.DeletionTimestamp != nil || s.Status.State != "" && s.Status.State != v1beta1.StatePending {
		return false
	}
	if e := newestEntryNaming(rc, s.Name); e != nil && e.Result != v1beta1.StateFailed {
		return false
	}
	next := s.Status.NextAttemptTime
	return next == nil || !rc.Now.Before(next.Time)
}

// isRequest tells whether a FlinkSnapshot asks for a snapshot: a user's, without a path.
func isRequest(s *v1beta1.FlinkSnapshot) bool {
	return s.Annotations[LedgerEntryAnnotation] == "" && s.Spec.Path == ""
}

// newestEntryNaming is the newest ledger entry that names the FlinkSnapshot; nil when none does.
func newestEntryNaming(rc *Context, name string) *v1beta1.StateEntry {
	for i := len(rc.Job.Ledger) - 1; i >= 0; i-- {
		if rc.Job.Ledger[i].Snapshot == name {
			return &rc.Job.Ledger[i]
		}
	}
	return nil
}

// defaultBackoffLimit is how many times a failed snapshot a FlinkSnapshot asked for is tried again
// when its spec does not say.
const defaultBackoffLimit = 3

// showAttempt counts the attempts of a snapshot a FlinkSnapshot asked for and, when one failed with
// attempts left, shows it Pending until the time it is tried again: 10 s after the first failure,
// doubling to at most 10 minutes.
func showAttempt(rc *Context, s *v1beta1.FlinkSnapshot, e *v1beta1.StateEntry, want *v1beta1.FlinkSnapshotStatus) {
	// The same attempt as the one shown: its trigger time, to the second the API server keeps.
	sameTrigger := s.Status.TriggerTime != nil && e.TriggerTime != nil &&
		s.Status.TriggerTime.Rfc3339Copy().Time.Equal(e.TriggerTime.Rfc3339Copy().Time)
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
		t := metav1.NewTime(rc.Now.Add(wait))
		next = &t
	}
	want.State, want.ResultTime, want.NextAttemptTime = v1beta1.StatePending, nil, next
	want.Error = fmt.Sprintf("attempt %d of %d failed: %s; tried again at %s", want.Attempts, limit+1, e.Reason,
		next.UTC().Format(time.RFC3339))
}

// answerSnapshotRequests writes what a pass did not take up of the users' FlinkSnapshots: a
// registered path is Completed; a request waits, saying why, while the owner's job does not run;
// a FlinkSnapshot to dispose of on delete gets its finalizer.
func answerSnapshotRequests(rc *Context) {
	if rc.Job == nil || rc.env.Apps == nil || rc.mayAct() != nil {
		return
	}
	d := &disposals{}
	for _, s := range rc.Snapshots {
		var err error
		switch {
		case s.DeletionTimestamp != nil:
			err = disposeOnDelete(rc, s, d)
		case s.Spec.DisposeOnDelete && !slices.Contains(s.Finalizers, DisposeFinalizer):
			err = patchSnapshotFinalizers(rc, s, append(slices.Clone(s.Finalizers), DisposeFinalizer))
		case s.Annotations[LedgerEntryAnnotation] == "" && s.Spec.Path != "" && s.Status.State == "":
			now := metav1.NewTime(rc.Now)
			err = writeSnapshotStatus(rc, s, v1beta1.FlinkSnapshotStatus{State: v1beta1.StateCompleted, Purpose: v1beta1.SnapshotRegistered,
				Path: s.Spec.Path, ResultTime: &now, ObservedGeneration: s.Generation})
		case asksForSnapshot(rc, s) && s.Status.State == "" && s.Status.Error == "":
			err = writeSnapshotStatus(rc, s, v1beta1.FlinkSnapshotStatus{ObservedGeneration: s.Generation,
				Error: fmt.Sprintf("waiting for the job of %s %s to run (phase %s)", rc.kind.name, rc.Meta.Name, rc.Subject.Phase())})
		}
		if err != nil {
			klog.FromContext(rc).Error(err, "answering a FlinkSnapshot", "snapshot", s.Name)
			return
		}
	}
}

// disposeOnDelete disposes of a deleted FlinkSnapshot's storage through a JobManager of the owner,
// then lets the object go. The storage of a state anything of the namespace still needs stays
// (the guardian says who).
func disposeOnDelete(rc *Context, s *v1beta1.FlinkSnapshot, d *disposals) error {
	if !slices.Contains(s.Finalizers, DisposeFinalizer) {
		return nil
	}
	rest := slices.DeleteFunc(slices.Clone(s.Finalizers), func(f string) bool { return f == DisposeFinalizer })
	path := s.Status.Path
	switch {
	case !s.Spec.DisposeOnDelete || path == "" || s.Spec.Type == v1beta1.SnapshotCheckpoint:
		// Nothing of ours to remove: a checkpoint is Flink's to manage.
		return patchSnapshotFinalizers(rc, s, rest)
	}
	if d.calls == disposalsPerPass {
		// The rest wait for the next passes: one owner's deleted FlinkSnapshots never hold its worker
		// for more than a few Flink calls; the owner's next poll goes on.
		return nil
	}
	g, err := d.guardian(rc)
	if err != nil {
		return err
	}
	if v := g.MayDelete(guardian.State{Path: path, Snapshot: s.Name}); !v.MayGo() {
		if onlyUntilThisWrite(v) {
			// Only the stored status names it, and this pass's write stops naming it: the
			// finalizer stays, and the next pass disposes of it.
			return nil
		}
		rc.event(true, "SnapshotKept", fmt.Sprintf("FlinkSnapshot %s is deleted but its savepoint is kept: %s", s.Name, v))
		return patchSnapshotFinalizers(rc, s, rest)
	}
	hash := liveCluster(rc.Job)
	if c := rc.Clusters[hash]; hash == "" || !c.Ready() {
		why := fmt.Sprintf("waiting for a running JobManager of %s %s to dispose of %s through Flink; remove finalizer %s to delete it without",
			rc.kind.name, rc.Meta.Name, path, DisposeFinalizer)
		if s.Status.Error == why {
			return nil
		}
		st := s.Status
		st.Error = why
		return writeSnapshotStatus(rc, s, st)
	}
	d.calls++
	if err := rc.pass().Flink().DisposeSavepoint(rc, rc.FlinkURL(hash), path); err != nil {
		why := fmt.Sprintf("disposing of %s failed: %v; tried again", path, err)
		if s.Status.Error == why {
			return nil
		}
		st := s.Status
		st.Error = why
		return writeSnapshotStatus(rc, s, st)
	}
	// The ledger forgets the state with its storage, so that no restore picks it.
	rc.ledger().Forget(path)
	rc.event(false, "SavepointDisposed", fmt.Sprintf("disposed of %s, the savepoint of FlinkSnapshot %s", path, s.Name))
	return patchSnapshotFinalizers(rc, s, rest)
}

// disposalsPerPass bounds the savepoint disposals one pass of an owner asks Flink for.
const disposalsPerPass = 5

// disposals is what one pass spent on disposing of deleted FlinkSnapshots' storage: the guardian,
// read once for all of them, and the Flink calls made.
type disposals struct {
	g     *guardian.Namespace
	calls int
}

func (d *disposals) guardian(rc *Context) (*guardian.Namespace, error) {
	if d.g == nil {
		g, err := stateGuardian(rc, true)
		if err != nil {
			return nil, err
		}
		d.g = g
	}
	return d.g, nil
}

// protectedPaths are the states the owner's restore may need: what the running and the next job
// start from, the final savepoint, the newest completed state of each job it records and, when
// that job's checkpoints may go with it as it ends (NO_EXTERNALIZED_CHECKPOINTS, or
// DELETE_ON_CANCELLATION: explorer seed 10000122), its newest savepoint, and what a rollback
// restores. The status as stored counts as much as the pass's own: a pass that moves its
// records on (a job that now runs becomes the stable one) writes them at its end, and until then the
// stored status is what a new process reads after a crash. Nothing it names goes before the write
// that stops naming it. The value says whether the pass's own status names the path too (false:
// only the stored one, until this pass's write).
func protectedPaths(rc *Context) map[string]bool {
	out := map[string]bool{}
	if rc.Stored != nil && rc.storedJob != nil {
		for p := range pathsNamedBy(rc, rc.storedJob) {
			out[p] = false
		}
	}
	for p := range pathsNamedBy(rc, rc.Job) {
		out[p] = true
	}
	return out
}

// pathsNamedBy are the states one status of the owner names for its restores.
func pathsNamedBy(rc *Context, st *v1beta1.JobOwnerStatus) map[string]bool {
	out := map[string]bool{st.Deployments.NextRestorePath: true, st.JobStatus.RestorePath: true,
		st.FinalSavepointPath: true, st.SavepointPath: true}
	for _, r := range []*v1beta1.DeploymentRecord{stable(st), candidate(st)} {
		if r != nil {
			out[r.RestorePath] = true
			out[rc.jobState().NewestStatePath(r.JobID)] = true
			if !checkpointsOutliveJob(rc, r.JobID) {
				out[ledger.Of(&st.Ledger).NewestSavepointPath(r.JobID)] = true
			}
		}
	}
	// What a rollback restores: the stable record may no longer name its job once that job was
	// stopped for an update, and a redeploy does not start from its stop's savepoint.
	out[stableFloor(st, func(jobID string) []jobs.StatePoint { return rc.jobState().BookPoints(jobID) })] = true
	delete(out, "")
	return out
}

// checkpointsOutliveJob tells whether the job's checkpoints stay on storage however it ends (a
// cancel or a failure), as the configuration it runs with says: its newest checkpoint then stands
// for its newest state.
func checkpointsOutliveJob(rc *Context, jobID string) bool {
	conf := runConfigOfJob(rc, jobID)
	return flink.CheckpointsSurviveEnd(conf, client.JobCanceled) && flink.CheckpointsSurviveEnd(conf, client.JobFailed)
}

// patchSnapshotFinalizers sets a FlinkSnapshot's finalizers, guarded by its resourceVersion.
func patchSnapshotFinalizers(rc *Context, s *v1beta1.FlinkSnapshot, finalizers []string) error {
	patch, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"finalizers": finalizers, "resourceVersion": s.ResourceVersion}})
	if err != nil {
		return err
	}
	_, err = rc.env.Apps.FlinkV1beta1().FlinkSnapshots(s.Namespace).Patch(rc, s.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: fieldManager})
	return err
}
