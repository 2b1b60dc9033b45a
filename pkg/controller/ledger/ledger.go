// Package ledger is a job owner's state ledger: every state of its jobs the operator knows of, one
// kind of entry for all of them. A savepoint of any purpose (upgrade, suspend, delete, teardown,
// manual, periodic) is an entry written with its trigger id and time before the trigger is sent;
// a checkpoint the operator recorded is an entry too. The restore policy reads the ledger, and the
// fields users read (savepoints, the last checkpoint, the savepoint trigger id) are derived from it.
//
// Its rules: an entry is never dropped while Pending (giving up on a savepoint keeps its trigger,
// and a later pass that finds the savepoint records it); a stop's savepoint is its own entry, so a
// manual or periodic savepoint in flight is never taken for it; retention never removes the newest
// restorable entry nor one a caller protects (what a record points to).
package ledger

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// Ledger is an owner's status.ledger, changed in place.
type Ledger struct {
	Entries *[]v1beta1.StateEntry
}

// Of is the ledger held in entries.
func Of(entries *[]v1beta1.StateEntry) Ledger { return Ledger{Entries: entries} }

// IsCheckpoint tells whether an entry of the purpose is a checkpoint: one the operator recorded, or
// one it triggered (the user asked for it, or periodicCheckpoint's schedule did). Flink manages
// checkpoints: the operator never disposes of one, and a field named savepoint never names one.
func IsCheckpoint(p v1beta1.SavepointPurpose) bool {
	return p == v1beta1.StateCheckpoint || IsTriggeredCheckpoint(p)
}

// IsTriggeredCheckpoint tells whether an entry of the purpose is a checkpoint the operator triggered:
// asked for, triggered and followed as a savepoint is, through Flink's checkpoint calls.
func IsTriggeredCheckpoint(p v1beta1.SavepointPurpose) bool {
	return p == v1beta1.ManualCheckpoint || p == v1beta1.PeriodicCheckpoint
}

// IsStop tells whether a savepoint purpose is a stop's: the job is cancelled with it, or (a
// BlueGreen version started beside it) its state is what the next job starts from.
func IsStop(p v1beta1.SavepointPurpose) bool {
	switch p {
	case v1beta1.SavepointUpgrade, v1beta1.SavepointSuspend, v1beta1.SavepointDelete, v1beta1.SavepointTeardown:
		return true
	}
	return false
}

// Ask records a savepoint asked of a job, with a new trigger id and the time, as Pending. The
// entry must be persisted before the trigger is sent.
func (l Ledger) Ask(purpose v1beta1.SavepointPurpose, jobID, cluster string, cancel bool, now time.Time) *v1beta1.StateEntry {
	t := metav1.NewTime(now)
	*l.Entries = append(*l.Entries, v1beta1.StateEntry{
		Purpose: purpose, JobID: jobID, ClusterHash: cluster, TriggerID: jobs.NewID(), TriggerTime: &t,
		Cancel: cancel, Result: v1beta1.StatePending,
	})
	return &(*l.Entries)[len(*l.Entries)-1]
}

// Pending is the newest Pending savepoint of the job with one of the purposes; nil when none.
func (l Ledger) Pending(jobID string, purposes ...v1beta1.SavepointPurpose) *v1beta1.StateEntry {
	es := *l.Entries
	for i := len(es) - 1; i >= 0; i-- {
		e := &es[i]
		if e.Result == v1beta1.StatePending && e.JobID == jobID && hasPurpose(e.Purpose, purposes) {
			return e
		}
	}
	return nil
}

// AllPending are the Pending savepoints with one of the purposes, of any job, oldest first.
func (l Ledger) AllPending(purposes ...v1beta1.SavepointPurpose) []*v1beta1.StateEntry {
	var out []*v1beta1.StateEntry
	es := *l.Entries
	for i := range es {
		if es[i].Result == v1beta1.StatePending && hasPurpose(es[i].Purpose, purposes) {
			out = append(out, &es[i])
		}
	}
	return out
}

func hasPurpose(p v1beta1.SavepointPurpose, purposes []v1beta1.SavepointPurpose) bool {
	if len(purposes) == 0 {
		return true
	}
	for _, q := range purposes {
		if p == q {
			return true
		}
	}
	return false
}

// Trigger is an entry's savepoint trigger for the job core.
func Trigger(e *v1beta1.StateEntry) jobs.Trigger {
	if e == nil || e.TriggerID == "" || e.TriggerTime == nil {
		return jobs.Trigger{}
	}
	t := jobs.Trigger{ID: e.TriggerID, Time: e.TriggerTime.Time}
	if e.SentTime != nil {
		t.Sent, t.SentToStart = e.SentTime.Time, e.SentToJobStart
	}
	return t
}

// SetTrigger keeps what the job core did to an entry's trigger: Flink before 1.15 names its own
// trigger id, which replaces the one chosen, and when the trigger was sent.
func SetTrigger(e *v1beta1.StateEntry, t jobs.Trigger) {
	if !t.Asked() {
		return
	}
	e.TriggerID = t.ID
	if !t.Sent.IsZero() {
		sent := metav1.NewTime(t.Sent)
		e.SentTime, e.SentToJobStart = &sent, t.SentToStart
	}
}

// Complete records a savepoint's result: where it is and when it was taken. That is when Flink
// took it (taken, zero when Flink did not say), which comes after the trigger was asked for: a
// checkpoint Flink completed in between is older than the savepoint, and the restore rule compares
// the two by these times. A JobManager's word is not taken past now. Without it the savepoint
// counts as taken now, when its completion is read: the trigger's time, up to a pass or more
// before the trigger was sent, would make it older than the checkpoints completed in between,
// while any checkpoint of the job read since Flink took it was read with Flink's word on the
// savepoint too.
func Complete(e *v1beta1.StateEntry, path string, taken, now time.Time) {
	at := now
	if !taken.IsZero() {
		at = taken
		if at.After(now) {
			at = now
		}
	}
	e.Result, e.Path, e.Reason, e.Undated = v1beta1.StateCompleted, path, "", false
	setTaken(e, at)
}

// setTaken sets when the entry's state was taken, to the millisecond.
func setTaken(e *v1beta1.StateEntry, at time.Time) {
	t := metav1.NewTime(at.Truncate(time.Second))
	e.Time, e.TimeMillis = &t, int32(at.Sub(t.Time)/time.Millisecond)
}

// TakenAt is when the entry's state was taken, to the millisecond; zero when not known.
func TakenAt(e *v1beta1.StateEntry) time.Time {
	if e.Time == nil {
		return time.Time{}
	}
	return e.Time.Time.Truncate(time.Second).Add(time.Duration(e.TimeMillis) * time.Millisecond)
}

// Fail records that a savepoint failed, and why.
func Fail(e *v1beta1.StateEntry, reason string, now time.Time) {
	t := metav1.NewTime(now)
	e.Result, e.Reason, e.Time = v1beta1.StateFailed, reason, &t
}

// unknownEnd begins the reason of a savepoint whose end can no longer be learned (Unknowable).
const unknownEnd = "whether it completed cannot be known: "

// goneBefore is the reason operator versions before Unknowable gave a savepoint whose JobManager
// went before its result was read: its end is as unknown.
const goneBefore = "its JobManager is gone; whether the savepoint completed cannot be read"

// Unknowable records that a savepoint's end can no longer be learned: Flink lost the job (its
// JobManager went, or restarted without HA) before the operator read how the savepoint ended. Nothing
// follows it any more, as a failed one, but it is no failure: it may have completed with state newer
// than anything recorded of its job, and the restore rule counts it as in doubt (InDoubt).
func Unknowable(e *v1beta1.StateEntry, why string, now time.Time) {
	Fail(e, unknownEnd+why, now)
}

// IsInDoubt tells whether an entry is a savepoint asked of its job whose end the operator does not
// know: in flight (Pending), or ended Unknowable. A checkpoint the operator triggered is not: Flink
// takes newer checkpoints on its own all the time, which the restore rule does not wait for either.
func IsInDoubt(e *v1beta1.StateEntry) bool {
	if IsCheckpoint(e.Purpose) || e.Purpose == v1beta1.SavepointRedeploy || e.TriggerID == "" {
		return false
	}
	return e.Result == v1beta1.StatePending ||
		e.Result == v1beta1.StateFailed && (strings.HasPrefix(e.Reason, unknownEnd) || e.Reason == goneBefore)
}

// Lost counts the job's savepoints of the purpose, newest first and in a row, whose end Flink lost
// (Unknowable): the ledger's record of a JobManager that keeps losing them.
func (l Ledger) Lost(jobID string, purpose v1beta1.SavepointPurpose) int {
	n := 0
	for i := len(*l.Entries) - 1; i >= 0; i-- {
		e := &(*l.Entries)[i]
		if e.JobID != jobID || e.Purpose != purpose {
			continue
		}
		if e.Result != v1beta1.StateFailed || !IsInDoubt(e) {
			break
		}
		n++
	}
	return n
}

// InDoubt are the triggers of the job's savepoints whose end the operator does not know (IsInDoubt).
func (l Ledger) InDoubt(jobID string) []jobs.Trigger {
	var out []jobs.Trigger
	for i := range *l.Entries {
		if e := &(*l.Entries)[i]; e.JobID == jobID && jobID != "" && IsInDoubt(e) && !l.settledByNewer(e) {
			if t := Trigger(e); t.Asked() {
				out = append(out, t)
			}
		}
	}
	return out
}

// settledByNewer tells whether a savepoint whose end can no longer be learned is older than a
// state the job completed since: it could complete only before Flink lost it, which was before the
// entry was marked so. A savepoint still in flight has no such bound.
func (l Ledger) settledByNewer(e *v1beta1.StateEntry) bool {
	if e.Result == v1beta1.StatePending || e.Time == nil {
		return false
	}
	for i := range *l.Entries {
		x := &(*l.Entries)[i]
		if x.JobID == e.JobID && x.Result == v1beta1.StateCompleted && x.Time != nil && jobs.Restorable(x.Path) &&
			!l.IsDiscarded(x) && TakenAt(x).After(e.Time.Time) {
			return true
		}
	}
	return false
}

// RecordRedeploy notes that a savepointRedeployNonce started the next job from path, at: the newest
// Redeploy entry names it from then on, even when the ledger knows the path already (a savepoint
// the operator took itself), since what follows a failed redeploy asks which state it started from
// (attack review s6: a redeploy from the operator's own savepoint was taken for none, and its
// rollback restored the named savepoint).
//
// It appends, and never moves the time of an entry already there: the time of the path's first
// entry is what the restore order reads as the state's (TimeOf), and a redeploy is no newer state
// (attack review s6: a second redeploy from one savepoint made it newer than the savepoint an
// update stopped the job with, and a rollback went back to it).
//
// The user's word that the state is there settles Flink's earlier answer that it was not (Gone):
// the state may have been copied back, and a redeploy is how the user names it.
func (l Ledger) RecordRedeploy(path string, at time.Time) {
	for i := range *l.Entries {
		if e := &(*l.Entries)[i]; e.Path == path {
			e.Gone = nil
		}
	}
	e := v1beta1.StateEntry{Purpose: v1beta1.SavepointRedeploy, Result: v1beta1.StateCompleted, Path: path}
	setTaken(&e, at)
	*l.Entries = append(*l.Entries, e)
}

// Record adds a completed state the operator learned of otherwise than by asking: a retained
// checkpoint, or a savepoint found in Flink's history. A job keeps one checkpoint entry, its
// newest. It reports whether the ledger changed.
func (l Ledger) Record(purpose v1beta1.SavepointPurpose, jobID, cluster, path string, at time.Time) bool {
	es := *l.Entries
	for i := range es {
		e := &es[i]
		if e.Path == path && e.Result == v1beta1.StateCompleted {
			return false
		}
		if purpose == v1beta1.StateCheckpoint && e.Purpose == v1beta1.StateCheckpoint && e.JobID == jobID {
			if e.Time != nil && !at.After(TakenAt(e)) {
				return false
			}
			// A checkpoint newer than the ones Flink discarded is of a job run again under the
			// same id: the mark covered what came before it, and this one stands.
			e.Path, e.ClusterHash, e.Discarded, e.Disputed = path, cluster, nil, nil
			setTaken(e, at)
			return true
		}
	}
	e := v1beta1.StateEntry{Purpose: purpose, JobID: jobID, ClusterHash: cluster, Result: v1beta1.StateCompleted, Path: path}
	setTaken(&e, at)
	*l.Entries = append(es, e)
	return true
}

// Checkpoint is the job's recorded checkpoint; nil when none.
func (l Ledger) Checkpoint(jobID string) *v1beta1.StateEntry {
	for i := range *l.Entries {
		e := &(*l.Entries)[i]
		if e.Purpose == v1beta1.StateCheckpoint && e.JobID == jobID && jobID != "" {
			return e
		}
	}
	return nil
}

// States are the completed states of a job, for the restore policy: not the checkpoints Flink
// discarded as it ended.
func (l Ledger) States(jobID string) []jobs.StatePoint {
	var out []jobs.StatePoint
	for _, e := range *l.Entries {
		if l.IsDiscarded(&e) {
			continue
		}
		if e.JobID == jobID && jobID != "" && e.Result == v1beta1.StateCompleted && jobs.Restorable(e.Path) && e.Time != nil {
			out = append(out, jobs.StatePoint{Path: e.Path, At: TakenAt(&e)})
		}
	}
	return out
}

// IsSavepoint tells whether a path names a savepoint: not a checkpoint the ledger recorded, nor one
// that Flink's naming shows as a checkpoint (…/chk-N). A path a user gave is taken as they named it.
func (l Ledger) IsSavepoint(path string) bool {
	if path == "" {
		return false
	}
	for _, e := range *l.Entries {
		if e.Path == path {
			return !IsCheckpoint(e.Purpose)
		}
	}
	i := strings.LastIndex(strings.TrimSuffix(path, "/"), "/")
	return !strings.HasPrefix(path[i+1:], "chk-")
}

// Savepoints are the ended savepoints, newest last, at most max: status.savepoints.
func (l Ledger) Savepoints(max int) []v1beta1.SavepointRecord {
	var out []v1beta1.SavepointRecord
	for _, e := range *l.Entries {
		if IsCheckpoint(e.Purpose) || e.Purpose == v1beta1.SavepointRedeploy || e.Result == v1beta1.StatePending {
			continue
		}
		r := v1beta1.SavepointRecord{Trigger: e.Purpose, Result: string(e.Result), Path: e.Path, Reason: e.Reason}
		switch {
		case e.TriggerTime != nil:
			r.Time = *e.TriggerTime
		case e.Time != nil:
			r.Time = *e.Time
		}
		out = append(out, r)
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}

// Trim keeps the ledger within its bounds and returns the completed savepoints it let go, for a
// caller that disposes of them. It keeps every Pending entry, every entry whose path protect names
// (what a record points to, what the next job starts from), for each job in keepJobs its newest
// completed state, its newest completed savepoint, its checkpoints and its savepoints whose end is
// unknown, the newest triggered checkpoint of each purpose and job, the last keep completed
// savepoints and the last keep failed ones; past v1beta1.MaxLedger the oldest go too, except
// Pending entries and what a restore needs (what protect names, a gone mark, each recorded job's
// newest completed state and savepoint).
//
// A recorded job's newest savepoint stays beside its newest checkpoint: a checkpoint may not outlive
// the job (NO_EXTERNALIZED_CHECKPOINTS discards it as the job fails), and the savepoint is then the
// newest state the job leaves. Failed savepoints count apart: attempts that failed never push out
// the state one completed (explorer seed 10000772).
func (l Ledger) Trim(keep int, keepJobs []string, protect func(path string) bool) []v1beta1.StateEntry {
	es := *l.Entries
	kept := make([]bool, len(es))
	completed, failed := 0, 0
	newestCheckpoint := map[string]bool{}
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		switch {
		case e.Result == v1beta1.StatePending, e.Path != "" && protect != nil && protect(e.Path):
			kept[i] = true
		case IsInDoubt(&e) && contains(keepJobs, e.JobID):
			kept[i] = true
		case e.Purpose == v1beta1.StateCheckpoint:
			kept[i] = contains(keepJobs, e.JobID)
		case IsTriggeredCheckpoint(e.Purpose):
			// Flink keeps or discards a checkpoint as its own retention says, so checkpoints never
			// count against the savepoints kept: a checkpoint every minute would otherwise push the
			// savepoints out, to be disposed of. The newest of each purpose stays, the time the next
			// periodic one is scheduled from.
			key := string(e.Purpose) + "/" + e.JobID
			kept[i] = !newestCheckpoint[key]
			newestCheckpoint[key] = true
		case e.Result == v1beta1.StateCompleted:
			completed++
			kept[i] = completed <= keep
		default:
			failed++
			kept[i] = failed <= keep
		}
	}
	// What a restore needs is essential: the bound below never takes it.
	essential := make([]bool, len(es))
	for i, e := range es {
		// A gone mark, or a discarded one, matters while a restore could still pick its state: the state is protected,
		// or its job is still recorded. Past that it would stay for good, one per update.
		protected := e.Path != "" && protect != nil && protect(e.Path)
		essential[i] = protected || (e.Gone != nil || e.Discarded != nil) && contains(keepJobs, e.JobID)
	}
	for _, job := range keepJobs {
		for _, savepoints := range []bool{false, true} {
			if i := newestCompleted(es, job, savepoints); i >= 0 {
				kept[i], essential[i] = true, true
			}
		}
	}
	var out, gone []v1beta1.StateEntry
	var outEssential []bool
	for i, e := range es {
		if kept[i] || essential[i] {
			out = append(out, e)
			outEssential = append(outEssential, essential[i])
		} else if e.Result == v1beta1.StateCompleted && !IsCheckpoint(e.Purpose) && e.Purpose != v1beta1.SavepointRedeploy {
			// A savepoint the user named for a redeploy is theirs: it leaves the ledger, never the store.
			gone = append(gone, e)
		}
	}
	// Past the bound the oldest of the rest go, savepoints in doubt included: a JobManager that
	// loses every savepoint's result must not grow the ledger, and the newest doubts still hold
	// the restore until Flink answers or the user names the state (attack review s7: the bound
	// took the state the next job starts from, with its gone mark).
	for len(out) > v1beta1.MaxLedger {
		i := oldestDroppable(out, outEssential)
		if i < 0 {
			break
		}
		out = append(out[:i], out[i+1:]...)
		outEssential = append(outEssential[:i], outEssential[i+1:]...)
	}
	*l.Entries = out
	return gone
}

// NewestSavepointPath is where the job's newest completed savepoint is; "" when the ledger has none.
func (l Ledger) NewestSavepointPath(jobID string) string {
	if i := newestCompleted(*l.Entries, jobID, true); i >= 0 {
		return (*l.Entries)[i].Path
	}
	return ""
}

// NewestPath is where the newest completed state of the job is, not counting the checkpoints Flink
// discarded as it ended; "" when the ledger has none.
func (l Ledger) NewestPath(jobID string) string {
	best := -1
	es := *l.Entries
	for i := range es {
		e := &es[i]
		if e.JobID == jobID && jobID != "" && e.Result == v1beta1.StateCompleted && e.Time != nil && !l.IsDiscarded(e) &&
			(best < 0 || TakenAt(e).After(TakenAt(&es[best]))) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return es[best].Path
}

// TimeOf is when the state at path was taken, as its completed entry says; zero when the ledger
// has no completed entry of it.
func (l Ledger) TimeOf(path string) time.Time {
	for _, e := range *l.Entries {
		if e.Path == path && path != "" && e.Result == v1beta1.StateCompleted && e.Time != nil {
			return TakenAt(&e)
		}
	}
	return time.Time{}
}

// MarkGone records that Flink found no state at path when a job was started from it (Gone).
func (l Ledger) MarkGone(path string, now time.Time) {
	t := metav1.NewTime(now)
	for i := range *l.Entries {
		if e := &(*l.Entries)[i]; e.Path == path && path != "" && e.Result == v1beta1.StateCompleted && e.Gone == nil {
			e.Gone = &t
		}
	}
}

// RecordMissing records that Flink found no state at path when a job was started from it: the
// completed entries that name it are marked gone (MarkGone), and when none does (a checkpoint of a
// job whose entries went when the job was no longer recorded), an entry is added already marked, so
// that no restore offers it again while anything still names it (Trim keeps it then).
func (l Ledger) RecordMissing(path string, now time.Time) {
	if path == "" {
		return
	}
	for _, e := range *l.Entries {
		if e.Path == path && e.Result == v1beta1.StateCompleted {
			l.MarkGone(path, now)
			return
		}
	}
	e := v1beta1.StateEntry{Purpose: v1beta1.SavepointRedeploy, Result: v1beta1.StateCompleted, Path: path}
	trimmed := strings.TrimSuffix(path, "/")
	if i := strings.LastIndex(trimmed, "/"); strings.HasPrefix(trimmed[i+1:], "chk-") {
		// Flink names a checkpoint <checkpoint dir>/<job id>/chk-<n>.
		e.Purpose = v1beta1.StateCheckpoint
		if j := strings.LastIndex(trimmed[:i], "/"); j >= 0 {
			e.JobID = trimmed[j+1 : i]
		}
	}
	t := metav1.NewTime(now)
	e.Gone = &t
	*l.Entries = append(*l.Entries, e)
}

// RecordGone records that the completed state at path, taken at about `at` by the job jobID, is
// gone since now: Flink discarded it. A state the ledger has is marked; one it has not (a job keeps
// one checkpoint entry, and this one is older) is added already marked, so that no restore picks
// it.
func (l Ledger) RecordGone(jobID, cluster, path string, at, now time.Time) {
	if !l.TimeOf(path).IsZero() {
		l.MarkGone(path, now)
		return
	}
	e := v1beta1.StateEntry{Purpose: v1beta1.StateCheckpoint, JobID: jobID, ClusterHash: cluster, Result: v1beta1.StateCompleted, Path: path}
	setTaken(&e, at)
	t := metav1.NewTime(now)
	e.Gone = &t
	*l.Entries = append(*l.Entries, e)
}

// IsGone tells whether Flink found no state at path when a job was started from it.
func (l Ledger) IsGone(path string) bool {
	for _, e := range *l.Entries {
		if e.Path == path && path != "" && e.Gone != nil {
			return true
		}
	}
	return false
}

// Forget drops the ended entries of the state at path, whose storage is gone, so that no restore
// picks it. A Pending entry stays: its savepoint may still complete elsewhere.
func (l Ledger) Forget(path string) {
	out := (*l.Entries)[:0]
	for _, e := range *l.Entries {
		if e.Path != path || path == "" || e.Result == v1beta1.StatePending {
			out = append(out, e)
		}
	}
	*l.Entries = out
}

// newestCompleted is the index of the job's newest completed state (of its savepoints only, when
// savepoints says so); -1 when there is none.
func newestCompleted(es []v1beta1.StateEntry, job string, savepoints bool) int {
	best := -1
	for i, e := range es {
		if savepoints && IsCheckpoint(e.Purpose) {
			continue
		}
		if e.JobID == job && job != "" && e.Result == v1beta1.StateCompleted && e.Time != nil &&
			(best < 0 || TakenAt(&e).After(TakenAt(&es[best]))) {
			best = i
		}
	}
	return best
}

// oldestDroppable is the index of the oldest entry the ledger's bound may take: not Pending, not
// essential to a restore; -1 when there is none.
func oldestDroppable(es []v1beta1.StateEntry, essential []bool) int {
	for i, e := range es {
		if e.Result != v1beta1.StatePending && !essential[i] {
			return i
		}
	}
	return -1
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id && id != "" {
			return true
		}
	}
	return false
}
