package ledger

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A job's checkpoints that Flink discarded as the job ended (its retention policy) are marked on
// the job's checkpoint entry (StateEntry.Discarded), and disputed when Flink later contradicts
// itself (StateEntry.Disputed): no restore takes a checkpoint marked.

// RecordDiscarded records that Flink discarded the job's checkpoints as the job ended (its
// retention policy), Flink's newest of them being path, taken at `at`: the job's checkpoint entry
// names it, marked Discarded, and no checkpoint of the job taken up to it is a restore's state
// again (Discarded). The job's savepoints and the state it started from stand. Flink says it once,
// in the pass that reads the ended job's statistics; a JobManager that restarts without HA forgets
// the job, and the record is then all that says so (explorer seed 32000603).
func (l Ledger) RecordDiscarded(jobID, cluster, path string, at, now time.Time) {
	if jobID == "" {
		return
	}
	t := metav1.NewTime(now)
	if e := l.Checkpoint(jobID); e != nil {
		// Flink's word again settles a dispute (Disputed): the checkpoints are gone.
		e.Disputed = nil
		if e.Discarded != nil && (e.Time == nil || !at.After(TakenAt(e))) {
			return
		}
		if e.Time == nil || at.After(TakenAt(e)) {
			e.Path, e.ClusterHash = path, cluster
			setTaken(e, at)
		}
		e.Discarded = &t
		return
	}
	e := v1beta1.StateEntry{Purpose: v1beta1.StateCheckpoint, JobID: jobID, ClusterHash: cluster, Result: v1beta1.StateCompleted, Path: path}
	setTaken(&e, at)
	e.Discarded = &t
	*l.Entries = append(*l.Entries, e)
}

// KeepCheckpoints takes back the mark that Flink discarded the job's checkpoints: Flink reports
// the job running on, with a newer checkpoint.
func (l Ledger) KeepCheckpoints(jobID string) {
	if e := l.Checkpoint(jobID); e != nil {
		e.Discarded, e.Disputed = nil, nil
	}
}

// DisputeDiscard records that Flink reported the job running with the checkpoint marked discarded
// still there (Disputed); the mark stays.
func (l Ledger) DisputeDiscard(jobID string, now time.Time) {
	if e := l.Checkpoint(jobID); e != nil && e.Discarded != nil && e.Disputed == nil {
		t := metav1.NewTime(now)
		e.Disputed = &t
	}
}

// Disputed is the job's checkpoint marked discarded whose discard Flink disputed since; nil when
// there is none.
func (l Ledger) Disputed(jobID string) *v1beta1.StateEntry {
	if e := l.Checkpoint(jobID); e != nil && e.Discarded != nil && e.Disputed != nil && e.Time != nil {
		return e
	}
	return nil
}

// DiscardedUpTo is the time of the newest checkpoint of the job that Flink discarded with the
// others as the job ended; zero when Flink was not seen to.
func (l Ledger) DiscardedUpTo(jobID string) time.Time {
	if e := l.Checkpoint(jobID); e != nil && e.Discarded != nil && e.Time != nil {
		return TakenAt(e)
	}
	return time.Time{}
}

// Discarded tells whether the job's checkpoint at path, taken at `at`, went as Flink discarded the
// job's checkpoints at its end (RecordDiscarded).
func (l Ledger) Discarded(jobID string, at time.Time) bool {
	upTo := l.DiscardedUpTo(jobID)
	return !upTo.IsZero() && !at.After(upTo)
}

// IsDiscarded tells whether the entry is a checkpoint Flink discarded as its job ended.
func (l Ledger) IsDiscarded(e *v1beta1.StateEntry) bool {
	return IsCheckpoint(e.Purpose) && e.Time != nil && l.Discarded(e.JobID, TakenAt(e))
}
