package ledger

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// A savepoint is in doubt while its end is not known: in flight, or unknowable once Flink lost its
// job. One Flink failed, one completed, and a checkpoint the operator triggered are not.
func TestASavepointIsInDoubtUntilFlinkSaysHowItEnded(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	inFlight := l.Ask(v1beta1.SavepointManual, "job", "c", false, t0)
	assert.Len(t, l.InDoubt("job"), 1, "in flight")
	Unknowable(inFlight, "Flink no longer knows job job", t0.Add(time.Minute))
	assert.Equal(t, []string{inFlight.TriggerID}, triggerIDs(l.InDoubt("job")), "its end cannot be known")
	assert.Empty(t, l.InDoubt("other"), "a job's own savepoints only")

	failed := l.Ask(v1beta1.SavepointUpgrade, "job2", "c", true, t0)
	Fail(failed, "savepoint of job job2 failed: disk full", t0)
	done := l.Ask(v1beta1.SavepointSuspend, "job2", "c", true, t0)
	Complete(done, "s3://sp/2", t0, t0)
	checkpoint := l.Ask(v1beta1.ManualCheckpoint, "job2", "c", false, t0)
	Unknowable(checkpoint, "Flink no longer knows job job2", t0)
	assert.Empty(t, l.InDoubt("job2"), "Flink's word, or a checkpoint, leaves no doubt")

	old := l.Ask(v1beta1.SavepointPeriodic, "job3", "c", false, t0)
	Fail(old, goneBefore, t0)
	assert.Len(t, l.InDoubt("job3"), 1, "as older operator versions recorded a JobManager gone before the result was read")
}

func triggerIDs(ts []jobs.Trigger) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// A savepoint whose end Flink lost is older than any state its job completed after: it could only
// have completed before. One still in flight has no such bound.
func TestASavepointWhoseEndIsLostIsSettledByANewerStateOfItsJob(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	lost := l.Ask(v1beta1.SavepointUpgrade, "job", "c", true, t0)
	Unknowable(lost, "job job was taken over by another JobMaster", t0.Add(time.Minute))
	inFlight := l.Ask(v1beta1.SavepointManual, "job", "c", false, t0.Add(time.Minute))
	l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://chk/job/chk-9", t0.Add(30*time.Second))
	assert.ElementsMatch(t, []string{lost.TriggerID, inFlight.TriggerID}, triggerIDs(l.InDoubt("job")),
		"a checkpoint taken before Flink lost the savepoint may be older than it")

	l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://chk/job/chk-12", t0.Add(2*time.Minute))
	assert.Equal(t, []string{inFlight.TriggerID}, triggerIDs(l.InDoubt("job")), "a newer state settles the lost one only")
}

// A savepoint Flink completed without saying when it took it is recorded as taken when that is
// read, unless a checkpoint of its job recorded as taken after the trigger was sent may be newer
// or older than it (explorer seed 47000232): it then stays pending for Flink's word.
func TestASavepointFlinkDoesNotDateIsOrderedOnlyAgainstCheckpointsBeforeItsTrigger(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://chk/job/chk-3", t0.Add(-time.Second))
	e := l.Ask(v1beta1.SavepointManual, "job", "c", false, t0)
	now := t0.Add(90 * time.Second)
	assert.True(t, l.CompleteSavepoint(e, "s3://sp/1", time.Time{}, time.Time{}, now))
	assert.Equal(t, now, TakenAt(e), "newer than the checkpoint before its trigger")

	later := l.Ask(v1beta1.SavepointManual, "job", "c", false, now)
	l.Record(v1beta1.StateCheckpoint, "job", "c", "s3://chk/job/chk-9", now.Add(20*time.Second))
	assert.False(t, l.CompleteSavepoint(later, "s3://sp/2", time.Time{}, time.Time{}, now.Add(time.Minute)))
	assert.Equal(t, v1beta1.StatePending, later.Result, "left for Flink to date")
	assert.True(t, l.CompleteSavepoint(later, "s3://sp/2", now.Add(time.Second), time.Time{}, now.Add(time.Minute)))
	assert.Equal(t, now.Add(time.Second), TakenAt(later), "Flink's time")

	booked := l.Ask(v1beta1.SavepointManual, "job", "c", false, now.Add(time.Hour))
	assert.False(t, l.CompleteSavepoint(booked, "s3://sp/3", time.Time{}, now.Add(time.Hour+time.Second), now.Add(2*time.Hour)),
		"a checkpoint recorded in the book counts as one in the ledger")
}

// A savepoint the operator dated itself takes Flink's time from the next statistics that list it,
// and is put before all they list when they do not (they list the newest, or a JobMaster that took
// the job over lists only what it took since).
func TestAnUndatedSavepointIsDatedByTheNextStatisticsFlinkAnswers(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	l.Ask(v1beta1.SavepointManual, "job", "c", false, t0)
	l.Ask(v1beta1.SavepointManual, "job", "c", false, t0)
	listed, unlisted := &entries[0], &entries[1]
	require.True(t, l.CompleteSavepoint(listed, "s3://sp/1", time.Time{}, time.Time{}, t0.Add(time.Minute)))
	require.True(t, listed.Undated)
	require.True(t, l.CompleteSavepoint(unlisted, "s3://sp/2", time.Time{}, time.Time{}, t0.Add(time.Minute)))

	l.DateUndated("job", nil, time.Time{}, t0.Add(2*time.Minute))
	assert.True(t, listed.Undated, "statistics that list nothing say nothing")

	taken := map[string]time.Time{"s3://sp/1": t0.Add(5 * time.Second), "s3://chk/job/chk-9": t0.Add(30 * time.Second)}
	l.DateUndated("job", taken, t0.Add(5*time.Second), t0.Add(2*time.Minute))
	assert.Equal(t, t0.Add(5*time.Second), TakenAt(listed), "Flink's time")
	assert.Equal(t, t0.Add(5*time.Second-time.Millisecond), TakenAt(unlisted), "before all Flink lists")
	assert.False(t, listed.Undated || unlisted.Undated)
}

// The ledger counts the savepoints of a purpose whose end Flink lost in a row, newest first: a
// JobManager that keeps losing them is not asked again and again.
func TestTheLedgerCountsTheSavepointsFlinkLostInARow(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	Complete(l.Ask(v1beta1.SavepointDelete, "job", "c", true, t0), "s3://sp/1", t0, t0)
	for i := 0; i < 2; i++ {
		Unknowable(l.Ask(v1beta1.SavepointDelete, "job", "c", true, t0), "taken over", t0)
	}
	Unknowable(l.Ask(v1beta1.SavepointManual, "job", "c", false, t0), "taken over", t0)
	assert.Equal(t, 2, l.Lost("job", v1beta1.SavepointDelete))
	assert.Equal(t, 0, l.Lost("other", v1beta1.SavepointDelete))
}
