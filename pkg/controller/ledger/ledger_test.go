package ledger

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func TestAnAskedSavepointIsPendingUntilItEnds(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	e := l.Ask(v1beta1.SavepointManual, "job", "c", false, t0)
	require.NotEmpty(t, e.TriggerID)
	assert.Equal(t, e, l.Pending("job", v1beta1.SavepointManual))
	assert.Nil(t, l.Pending("job", v1beta1.SavepointDelete), "a stop never takes a manual savepoint for its own")
	Complete(e, "s3://sp/1", time.Time{}, t0.Add(time.Minute))
	assert.Nil(t, l.Pending("job"))
	assert.Equal(t, t0.Add(time.Minute), entries[0].Time.Time, "a savepoint Flink did not date is as new as the read of its completion")
	assert.Equal(t, []v1beta1.SavepointRecord{{Time: *entries[0].TriggerTime, Trigger: v1beta1.SavepointManual,
		Result: "Completed", Path: "s3://sp/1"}}, l.Savepoints(10))
}

func TestAJobKeepsOneCheckpointEntryItsNewest(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	assert.True(t, l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://ck/job/chk-1", t0))
	assert.True(t, l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://ck/job/chk-2", t0.Add(time.Minute)))
	assert.False(t, l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://ck/job/chk-1", t0), "an older one never replaces it")
	require.Len(t, entries, 1)
	assert.Equal(t, "s3://ck/job/chk-2", l.Checkpoint("job").Path)
	assert.Len(t, l.States("job"), 1)
	assert.Empty(t, l.States("other"), "the restore policy reads one job's states")
}

func TestOnlySavepointsAreSavepoints(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://ck/job/recorded", t0)
	assert.False(t, l.IsSavepoint("s3://ck/job/recorded"), "a checkpoint the ledger recorded")
	assert.False(t, l.IsSavepoint("s3://ck/job/chk-7"), "Flink's name for a checkpoint")
	assert.True(t, l.IsSavepoint("s3://sp/savepoint-1a2b"))
	assert.False(t, l.IsSavepoint(""))
}

func TestRetentionKeepsWhatARestoreNeeds(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	for i := 0; i < 5; i++ {
		e := l.Ask(v1beta1.SavepointPeriodic, "old", "c", false, t0.Add(time.Duration(i)*time.Minute))
		Complete(e, "s3://sp/old-"+string(rune('a'+i)), time.Time{}, t0)
	}
	pinned := entries[0].Path
	pending := l.Ask(v1beta1.SavepointManual, "job", "c", false, t0.Add(time.Hour))
	pendingID := pending.TriggerID
	l.Record(v1beta1.StateCheckpoint, "gone", "c", "s3://ck/gone/chk-1", t0)
	l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://ck/job/chk-1", t0.Add(2*time.Hour))

	gone := l.Trim(2, []string{"job"}, func(p string) bool { return p == pinned })
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Path)
	}
	assert.Contains(t, paths, pinned, "a state a record points to stays")
	assert.Contains(t, paths, "s3://sp/old-e", "the last savepoints stay")
	assert.Contains(t, paths, "s3://sp/old-d")
	assert.NotContains(t, paths, "s3://sp/old-b")
	assert.Contains(t, paths, "s3://ck/job/chk-1", "a recorded job's checkpoint stays")
	assert.NotContains(t, paths, "s3://ck/gone/chk-1")
	require.NotNil(t, l.Pending("job"), "a pending savepoint is never dropped")
	assert.Equal(t, pendingID, l.Pending("job").TriggerID)
	assert.Len(t, gone, 2, "the completed savepoints let go are handed back for disposal")
}

// Checkpoints the operator triggered are checkpoints: never listed or disposed of as savepoints,
// and never counted against the savepoints kept, of which a checkpoint a minute would leave none.
// The newest of each purpose stays, the time the next periodic one is scheduled from.
func TestTriggeredCheckpointsNeverPushSavepointsOut(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	sp := l.Ask(v1beta1.SavepointManual, "job", "c", false, t0)
	Complete(sp, "s3://sp/kept", time.Time{}, t0)
	for i := 1; i <= 5; i++ {
		e := l.Ask(v1beta1.PeriodicCheckpoint, "job", "c", false, t0.Add(time.Duration(i)*time.Minute))
		Complete(e, "s3://ck/job/chk-"+string(rune('0'+i)), time.Time{}, t0)
	}
	m := l.Ask(v1beta1.ManualCheckpoint, "job", "c", false, t0.Add(time.Hour))
	Complete(m, "s3://ck/job/chk-9", time.Time{}, t0)

	gone := l.Trim(1, []string{"job"}, nil)
	assert.Empty(t, gone, "nothing to dispose of")
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []string{"s3://sp/kept", "s3://ck/job/chk-5", "s3://ck/job/chk-9"}, paths)
	assert.Equal(t, []v1beta1.SavepointRecord{{Time: *sp.TriggerTime, Trigger: v1beta1.SavepointManual, Result: "Completed",
		Path: "s3://sp/kept"}}, l.Savepoints(10))
	assert.True(t, IsCheckpoint(v1beta1.PeriodicCheckpoint))
	assert.False(t, l.IsSavepoint("s3://ck/job/chk-5"))
}

// A job's newest savepoint stays while the job is recorded, whatever retention keeps: its
// checkpoints may not outlive it (NO_EXTERNALIZED_CHECKPOINTS discards them as it fails), and the
// savepoint is then the newest state it leaves. A failed savepoint never pushes a completed one out
// (explorer seed 10000772: keep 1, a manual savepoint failed after one had completed, and the job's
// replacement went back to an older one), and neither is a savepoint whose end is unknown let go
// while its job is recorded: the restore rule counts it as in doubt.
func TestRetentionNeverLetsGoTheNewestSavepointOfARecordedJob(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	done := l.Ask(v1beta1.SavepointManual, "job", "c", false, t0)
	Complete(done, "s3://sp/newest", time.Time{}, t0.Add(time.Second))
	l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://ck/job/chk-9", t0.Add(time.Minute))
	unknown := l.Ask(v1beta1.SavepointManual, "job", "c", false, t0.Add(2*time.Minute))
	Unknowable(unknown, "its JobManager went", t0.Add(3*time.Minute))
	failed := l.Ask(v1beta1.SavepointManual, "job", "c", false, t0.Add(4*time.Minute))
	Fail(failed, "not all tasks running", t0.Add(5*time.Minute))

	gone := l.Trim(1, []string{"job"}, nil)
	assert.Empty(t, gone)
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Path)
	}
	assert.Contains(t, paths, "s3://sp/newest", "the job's newest savepoint stays")
	assert.Len(t, l.InDoubt("job"), 1, "the savepoint whose end is unknown stays")
}

// A state Flink could not find is gone until the user names it for a redeploy: the user's word
// that it is there (copied back, say) settles Flink's earlier answer.
func TestARedeployFromAGoneStateClearsItsMark(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://ck/job/chk-9", t0)
	l.MarkGone("s3://ck/job/chk-9", t0.Add(time.Minute))
	assert.True(t, l.IsGone("s3://ck/job/chk-9"))
	l.RecordRedeploy("s3://ck/job/chk-9", t0.Add(2*time.Minute))
	assert.False(t, l.IsGone("s3://ck/job/chk-9"))
}
