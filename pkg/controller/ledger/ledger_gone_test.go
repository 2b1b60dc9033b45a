package ledger

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A checkpoint Flink discarded is recorded gone even when its job's newer checkpoint is the one
// entry the ledger keeps of it, and the mark stays only while a restore could pick the state: once
// nothing protects it and its job is no longer recorded, the entry goes, so that one update after
// another does not grow the ledger.
func TestAGoneCheckpointIsRecordedBesideItsJobsNewerOneAndLeavesOnceNothingNeedsIt(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	l.Record(v1beta1.StateCheckpoint, "old", "c", "s3://ck/old/chk-9", t0.Add(time.Minute))
	l.RecordGone("old", "c", "s3://ck/old/chk-7", t0, t0.Add(time.Hour))
	require.True(t, l.IsGone("s3://ck/old/chk-7"))
	assert.False(t, l.IsGone("s3://ck/old/chk-9"))
	assert.Equal(t, "s3://ck/old/chk-9", l.Checkpoint("old").Path, "the job's checkpoint entry is still its newest")

	l.Trim(v1beta1.MaxSavepoints, []string{"new"}, func(p string) bool { return p == "s3://ck/old/chk-7" })
	assert.True(t, l.IsGone("s3://ck/old/chk-7"), "kept while the state is protected")
	l.Trim(v1beta1.MaxSavepoints, []string{"new"}, func(string) bool { return false })
	assert.False(t, l.IsGone("s3://ck/old/chk-7"), "dropped once nothing needs it")
	assert.Empty(t, entries)
}
