package ledger

import (
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// When a savepoint was taken orders it against the job's checkpoints, and only Flink's time of it
// is sure: a savepoint Flink completed without saying when is dated with care.

// CompleteSavepoint records a savepoint's result, as Complete does. When Flink did not say when it
// took it (taken zero), it counts as taken when its completion is read, and is marked Undated for
// the next statistics Flink answers to date it (DateUndated); unless a checkpoint of its job was
// recorded as taken after the trigger was sent: Flink took that one before or after the savepoint,
// and only its word orders the two (explorer seed 47000232: a savepoint read completed while the
// statistics failed counted as taken then, after a checkpoint Flink took later than it, and a
// restart rewound the job to it). The entry then stays pending, in doubt, until Flink says (false).
// recorded is when the job's newest checkpoint recorded outside the ledger (the checkpoint book) was
// taken, zero for none. A checkpoint the operator triggered is one of those checkpoints, and
// completes as Complete says.
func (l Ledger) CompleteSavepoint(e *v1beta1.StateEntry, path string, taken, recorded, now time.Time) bool {
	if !taken.IsZero() || e.TriggerTime == nil || IsTriggeredCheckpoint(e.Purpose) {
		Complete(e, path, taken, now)
		return true
	}
	if c := l.Checkpoint(e.JobID); c != nil && TakenAt(c).After(recorded) {
		recorded = TakenAt(c)
	}
	if recorded.After(Trigger(e).Sent) && recorded.After(e.TriggerTime.Time) {
		return false
	}
	Complete(e, path, taken, now)
	e.Undated = true
	return true
}

// DateUndated dates the job's completed savepoints that Flink did not date (Undated) from the
// statistics it answered: taken is when it took each state they list, by path, and earliest the
// earliest of those in their history. One they list takes Flink's time; one their history does
// not list is older than all it lists (jobs.Listed), which a checkpoint recorded from them must
// outrank; never later than when its completion was read (attack review of d1efec4: a
// checkpoint Flink took after the savepoint, recorded once the statistics answered again, was
// older than the time the savepoint was read completed). Statistics that list nothing say nothing.
func (l Ledger) DateUndated(jobID string, taken map[string]time.Time, earliest, now time.Time) {
	for i := range *l.Entries {
		e := &(*l.Entries)[i]
		if e.JobID != jobID || jobID == "" || !e.Undated || e.Result != v1beta1.StateCompleted {
			continue
		}
		at, listed := taken[e.Path]
		switch {
		case !listed && earliest.IsZero():
			continue
		case !listed:
			at = earliest.Add(-time.Millisecond)
		}
		// It was taken before its completion was read: a later time of Flink's is its clock's, which
		// would put the savepoint after checkpoints recorded since (attack review of 4f3e264).
		if read := TakenAt(e); at.After(read) {
			at = read
		}
		if at.After(now) {
			at = now
		}
		setTaken(e, at)
		e.Undated = false
	}
}
