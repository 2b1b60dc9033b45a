package ledger

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Attack review s7; failed on f701a0f. The bound now takes the oldest entries that are neither
// Pending nor essential to a restore (oldestDroppable).
//
// Trim promises to keep what a restore needs (every entry protect names, each recorded job's newest
// completed state and savepoint) and to let "the oldest of the rest" go past v1beta1.MaxLedger. Its
// MaxLedger loop (ledger.go, `for len(out) > v1beta1.MaxLedger { i := oldestUnpending(out) ...`)
// drops the oldest entries of what it decided to keep instead. Since 64ee43f every savepoint of a
// recorded job whose end is unknown is kept as well, and failed savepoints count apart from the
// completed ones, so the kept entries alone exceed MaxLedger: a live job whose JobManager lost the
// results of its periodic savepoints (restarts, or a JobManager answering 404 for the trigger and
// the job's history, which makes each Unknowable) fills the ledger, and the cut drops
//   - the state the next job starts from (protected), with its Gone mark: the operator no longer
//     knows Flink could not find it, and once the record moves on the restore takes older state;
//   - the recorded job's newest completed savepoint, the state 64ee43f set out to keep.
func TestTheLedgerBoundNeverDropsWhatARestoreNeedsForSavepointsInDoubt(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	// The state the next job is to start from, which Flink reported missing.
	l.Record(v1beta1.StateCheckpoint, "old", "c", "s3://ck/old/chk-7", t0)
	l.MarkGone("s3://ck/old/chk-7", t0.Add(time.Minute))
	// The recorded job's newest completed savepoint.
	sp := l.Ask(v1beta1.SavepointManual, "job", "c", false, t0.Add(2*time.Minute))
	Complete(sp, "s3://sp/newest", time.Time{}, t0.Add(2*time.Minute))
	// Its periodic savepoints since, whose results its JobManager lost, and a few that failed.
	for i := 0; i < 25; i++ {
		e := l.Ask(v1beta1.SavepointPeriodic, "job", "c", false, t0.Add(time.Duration(10+i)*time.Minute))
		Unknowable(e, "Flink no longer knows the trigger", t0.Add(time.Duration(11+i)*time.Minute))
	}
	for i := 0; i < 10; i++ {
		e := l.Ask(v1beta1.SavepointPeriodic, "job", "c", false, t0.Add(time.Duration(40+i)*time.Minute))
		Fail(e, "not all tasks running", t0.Add(time.Duration(41+i)*time.Minute))
	}
	l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://ck/job/chk-99", t0.Add(time.Hour))

	l.Trim(v1beta1.MaxSavepoints, []string{"job"}, func(p string) bool { return p == "s3://ck/old/chk-7" })
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Path)
	}
	t.Logf("%d entries left: %v", len(entries), paths)
	assert.True(t, l.IsGone("s3://ck/old/chk-7"), "the state the next job starts from lost its gone mark (it left the ledger)")
	assert.Contains(t, paths, "s3://sp/newest", "the recorded job's newest completed savepoint left the ledger")
}
