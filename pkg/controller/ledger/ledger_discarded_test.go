package ledger

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

func TestCheckpointsFlinkDiscardedAreNoStateOfTheJob(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	var es []v1beta1.StateEntry
	l := Of(&es)
	l.Record(v1beta1.SavepointManual, "a", "c", "s3://sp/savepoint-1", t0)
	l.Record(v1beta1.StateCheckpoint, "a", "c", "s3://ck/a/chk-7", t0.Add(time.Minute))
	l.RecordDiscarded("a", "c", "s3://ck/a/chk-8", t0.Add(2*time.Minute), t0.Add(3*time.Minute))

	assert.Len(t, es, 2, "the job keeps one checkpoint entry, which names Flink's newest")
	assert.Equal(t, "s3://ck/a/chk-8", l.Checkpoint("a").Path)
	assert.Equal(t, []string{"s3://sp/savepoint-1"}, paths(l.States("a")))
	assert.Equal(t, "s3://sp/savepoint-1", l.NewestPath("a"))
	assert.True(t, l.Discarded("a", t0.Add(time.Minute)))
	assert.False(t, l.Discarded("b", t0.Add(time.Minute)), "another job's checkpoints stand")

	l.RecordDiscarded("a", "c", "s3://ck/a/chk-7", t0.Add(time.Minute), t0.Add(4*time.Minute))
	assert.Equal(t, "s3://ck/a/chk-8", l.Checkpoint("a").Path, "an older word moves nothing")

	l.KeepCheckpoints("a")
	assert.Equal(t, []string{"s3://sp/savepoint-1", "s3://ck/a/chk-8"}, paths(l.States("a")), "Flink reports them there after all")
}

func TestTheBoundKeepsADiscardedMarkWhileItsJobIsRecorded(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	var es []v1beta1.StateEntry
	l := Of(&es)
	l.RecordDiscarded("a", "c", "s3://ck/a/chk-8", t0, t0)
	for i := range v1beta1.MaxLedger + 5 {
		l.Record(v1beta1.SavepointPeriodic, "a", "c", fmt.Sprintf("s3://sp/savepoint-%d", i), t0.Add(time.Duration(i)*time.Second))
	}
	l.Trim(100, []string{"a"}, nil)
	assert.Len(t, es, v1beta1.MaxLedger)
	assert.True(t, l.Discarded("a", t0))
}

func paths(ps []jobs.StatePoint) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Path)
	}
	return out
}

func TestADisputedDiscardKeepsItsMarkUntilFlinkSaysAgainOrTheJobRunsOn(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	var es []v1beta1.StateEntry
	l := Of(&es)
	l.RecordDiscarded("a", "c", "s3://ck/a/chk-8", t0, t0)
	assert.Nil(t, l.Disputed("a"))
	l.DisputeDiscard("a", t0.Add(time.Minute))
	assert.NotNil(t, l.Disputed("a"))
	assert.True(t, l.Discarded("a", t0), "the mark stays while disputed")

	l.RecordDiscarded("a", "c", "s3://ck/a/chk-8", t0, t0.Add(2*time.Minute))
	assert.Nil(t, l.Disputed("a"), "Flink's word again settles it")

	l.DisputeDiscard("a", t0.Add(3*time.Minute))
	l.Record(v1beta1.StateCheckpoint, "a", "c", "s3://ck/a/chk-9", t0.Add(4*time.Minute))
	assert.Nil(t, l.Disputed("a"), "a newer checkpoint of the job settles it")
	assert.False(t, l.Discarded("a", t0.Add(4*time.Minute)))
}
