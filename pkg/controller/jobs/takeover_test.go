package jobs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newHABench is a bench whose JobManager runs Flink HA: one that crashes comes back and another
// JobMaster takes its jobs over, knowing nothing of the savepoints the one before was asked for.
func newHABench(t *testing.T) *bench {
	return newBenchWith(t, map[string]string{"high-availability.type": "kubernetes", "high-availability.storageDir": "s3://b/ha"})
}

// A savepoint sent to a JobMaster that failed over before its result was read is in doubt: the
// one that took the job over knows neither the trigger nor what the one before completed, and
// sent to it again, the trigger's failure would be taken for the savepoint's end (explorer seeds
// 47000405 and 49000041: the job went back to a checkpoint older than the savepoint completed
// before the failover).
func TestASavepointWhoseJobMasterFailedOverIsInDoubtAndNotSentAgain(t *testing.T) {
	b := newHABench(t)
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	ref := b.pass().Ref("c", job.ID)
	b.step(15 * time.Second)
	var trig Trigger
	require.True(t, b.pass().Savepoint(ref, &trig, false, true).Wait.Persist)
	b.step(time.Second)
	require.True(t, b.pass().Savepoint(ref, &trig, false, true).Wait.Persist, "when it is sent is persisted first")
	require.NotNil(t, b.pass().Savepoint(ref, &trig, false, true).Wait)
	require.Equal(t, 1, b.jm.SavepointTriggers())

	// The savepoint completes, and the JobMaster fails over before the operator reads it.
	b.step(2 * time.Second)
	b.jm.Crash()
	var step SavepointStep
	for i := 0; i < 20 && step.Failure == "" && step.Location == ""; i++ {
		b.step(500 * time.Millisecond)
		step = b.pass().Savepoint(ref, &trig, false, true)
	}
	assert.True(t, step.Unknowable, "in doubt, not failed: %+v", step)
	assert.Contains(t, step.Failure, "taken over by another JobMaster")
	assert.Equal(t, 1, b.jm.SavepointTriggers(), "not sent again")

	// Nor does the statistics' silence of the JobMaster that took the job over settle it, until it
	// completes a state of its own.
	answer, err := b.pass().AskFlinkState(ref, trig)
	require.NoError(t, err)
	assert.False(t, answer.Covers([]Trigger{trig}), "the savepoint is in no statistics of the JobMaster that took the job over")
	for i := 0; i < 40 && answer.Covers([]Trigger{trig}) == false; i++ {
		b.step(time.Second)
		answer, err = b.pass().AskFlinkState(ref, trig)
		require.NoError(t, err)
	}
	assert.True(t, answer.Covers([]Trigger{trig}), "a checkpoint taken after the takeover is newer than anything the savepoint held")
}

// A trigger persisted but never sent (the operator stopped in between) is sent when Flink does not
// know it and the JobMaster that runs the job ran it when the trigger was asked for.
func TestATriggerNeverSentIsSentWhenTheJobMasterRanTheJobWhenItWasAskedFor(t *testing.T) {
	b := newHABench(t)
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	ref := b.pass().Ref("c", job.ID)
	trig := Trigger{ID: NewID(), Time: b.clock.Now()}
	b.step(time.Second)
	require.True(t, b.pass().Savepoint(ref, &trig, false, true).Wait.Persist, "when it is sent is persisted first")
	step := b.pass().Savepoint(ref, &trig, false, true)
	require.NotNil(t, step.Wait)
	assert.Empty(t, step.Failure)
	assert.Equal(t, 1, b.jm.SavepointTriggers(), "sent")
}
