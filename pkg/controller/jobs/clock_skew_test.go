package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skewedPass is a pass whose clock runs ahead of the JobManager's by skew (the JobManager's clock
// is behind the operator's): NTP keeps pods within milliseconds, never at exactly the same time.
func (b *bench) skewedPass(skew time.Duration) *Pass {
	p := NewPass(context.Background(), b.api, b.clock.Now().Add(skew), Clusters{
		URL:            func(string) string { return b.url },
		JobManagerGone: func(string) bool { return b.gone },
	})
	p.Announce = func(e Event) { b.events = append(b.events, e) }
	return p
}

// Attack review: moving the trigger's time to when it was sent (p.Now of the sending pass) and
// SavepointSince makes no allowance for a JobManager clock behind the operator's. Before, the
// trigger's time was when it was asked for, a pass earlier, which absorbed any skew smaller than a
// pass. A savepoint with cancel completes, the job is CANCELED; the operator reads it only after
// Flink forgot the trigger's result (rest.async.store-duration, 5 minutes: an operator restart or a
// long pass queue). The history lookup misses the savepoint Flink lists (its trigger_timestamp is
// 300 ms before the operator's idea of the send), the job is not alive so nothing is sent again, and
// End reports the savepoint missing: the caller fails the ledger entry and the job is restored from
// a checkpoint older than the savepoint it ended with.
func TestASavepointWithCancelIsFoundInFlinksHistoryWhenTheJobManagersClockIsBehind(t *testing.T) {
	const skew = 300 * time.Millisecond
	b := newBench(t)
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	ref := b.pass().Ref("c", job.ID)
	b.step(15 * time.Second)
	var trig Trigger
	require.True(t, b.skewedPass(skew).Savepoint(ref, &trig, true, true).Wait.Persist)
	asked := trig.Time
	b.step(time.Second)
	require.True(t, b.skewedPass(skew).Savepoint(ref, &trig, true, true).Wait.Persist, "when it is sent is persisted first")
	require.NotNil(t, b.skewedPass(skew).Savepoint(ref, &trig, true, true).Wait)
	require.Equal(t, 1, b.jm.SavepointTriggers())
	t.Logf("asked %s, trigger time now %s", asked.Format(time.StampMilli), trig.Time.Format(time.StampMilli))

	// The savepoint completes and cancels the job; Flink forgets the trigger's result after 5 minutes.
	b.step(10 * time.Second)
	b.step(6 * time.Minute)
	v := b.skewedPass(skew).View("c", job.ID)
	require.NotNil(t, v)
	t.Logf("job %s liveness %v", v.State(), v.Liveness)
	cps, err := b.skewedPass(skew).Checkpoints(ref)
	require.NoError(t, err)
	if sp := cps.Latest.Savepoint; sp != nil {
		t.Logf("Flink lists savepoint %s triggered %s", sp.ExternalPath, time.UnixMilli(sp.TriggerTimestamp).Format(time.StampMilli))
	}
	end := b.skewedPass(skew).End(v, &trig, true, "Stop")
	t.Logf("end: %+v", end)
	assert.NotEmpty(t, end.SavepointPath, "the job ended with a completed savepoint Flink still lists; the operator reports it missing: %q", end.Missing)
}

// The takeover check (takenOverSince, FlinkAnswer.Covers) compares the job's start time Flink gives
// now with the one it gave when the trigger was sent, both on the JobManager's clock: a JobManager
// whose clock is seconds behind the operator's and that fails over right after the send is seen to
// have taken the job over; the trigger is not sent again to it, and its empty statistics settle
// nothing.
func TestATakeoverIsSeenWhenTheJobManagersClockIsBehind(t *testing.T) {
	const skew = 5 * time.Second
	b := newHABench(t)
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	ref := b.pass().Ref("c", job.ID)
	b.step(15 * time.Second)
	var trig Trigger
	require.True(t, b.skewedPass(skew).Savepoint(ref, &trig, false, true).Wait.Persist)
	b.step(time.Second)
	require.True(t, b.skewedPass(skew).Savepoint(ref, &trig, false, true).Wait.Persist, "when it is sent is persisted first")
	require.NotNil(t, b.skewedPass(skew).Savepoint(ref, &trig, false, true).Wait)
	require.Equal(t, 1, b.jm.SavepointTriggers())

	b.step(2 * time.Second)
	b.jm.Crash()
	var step SavepointStep
	for i := 0; i < 20 && step.Failure == "" && step.Location == "" && b.jm.SavepointTriggers() == 1; i++ {
		b.step(500 * time.Millisecond)
		step = b.skewedPass(skew).Savepoint(ref, &trig, false, true)
	}
	started, _ := b.skewedPass(skew).StartedAt(ref)
	t.Logf("trigger time %s (operator clock), job started again %s (JobManager clock); step %+v", trig.Time.Format(time.StampMilli), started.Format(time.StampMilli), step)
	assert.Equal(t, 1, b.jm.SavepointTriggers(), "the trigger was sent again to the JobMaster that took the job over")
	answer, err := b.skewedPass(skew).AskFlinkState(ref, trig)
	require.NoError(t, err)
	assert.False(t, answer.Covers([]Trigger{trig}), "the statistics of the JobMaster that took the job over settle nothing")
}

// Every savepoint's first send goes through the 404 path (the trigger, then when it is sent, are
// persisted first, so Flink answers 404 for it), and so through takenOverSince. A JobManager whose
// clock runs ahead of the operator's shows a start time after the send for a savepoint sent soon
// after the job's start; no JobMaster failed over, and the savepoint is sent, HA or not.
func TestASavepointAskedSoonAfterTheStartIsSentWhenTheJobManagersClockIsAhead(t *testing.T) {
	const skew = -10 * time.Second // the operator is 10 s behind the JobManager
	b := newBench(t)
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	ref := b.pass().Ref("c", job.ID)
	var trig Trigger
	require.True(t, b.skewedPass(skew).Savepoint(ref, &trig, true, true).Wait.Persist)
	b.step(time.Second)
	require.True(t, b.skewedPass(skew).Savepoint(ref, &trig, true, true).Wait.Persist, "when it is sent is persisted first")
	step := b.skewedPass(skew).Savepoint(ref, &trig, true, true)
	t.Logf("step %+v", step)
	assert.False(t, step.Unknowable, "no JobMaster took the job over: %s", step.Failure)
	assert.Equal(t, 1, b.jm.SavepointTriggers(), "the savepoint was never sent")
}
