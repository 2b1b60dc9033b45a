package ledger

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Kubernetes keeps times to the second; a savepoint and a checkpoint Flink took within one second
// are still told apart.
func TestStatesTakenWithinOneSecondAreOrderedByTheirMilliseconds(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	base := time.Date(2026, 11, 1, 12, 8, 51, 0, time.UTC)
	require.True(t, l.Record(v1beta1.StateCheckpoint, "job", "c", "file:/chk/chk-44", base.Add(400*time.Millisecond)))
	sp := l.Ask(v1beta1.SavepointManual, "job", "c", false, base.Add(-time.Second))
	Complete(sp, "file:/sp/savepoint-1", base.Add(700*time.Millisecond), base.Add(2*time.Second))
	entries = stored(t, entries)
	assert.Equal(t, "file:/sp/savepoint-1", l.NewestPath("job"))
	assert.True(t, base.Add(700*time.Millisecond).Equal(l.TimeOf("file:/sp/savepoint-1")), "taken at %s", l.TimeOf("file:/sp/savepoint-1"))

	// A newer checkpoint of the same second replaces the recorded one.
	assert.True(t, l.Record(v1beta1.StateCheckpoint, "job", "c", "file:/chk/chk-45", base.Add(900*time.Millisecond)))
	entries = stored(t, entries)
	assert.Equal(t, "file:/chk/chk-45", l.NewestPath("job"))
}

// stored is the entries as the API server gives them back: through JSON, times to the second.
func stored(t *testing.T, entries []v1beta1.StateEntry) []v1beta1.StateEntry {
	b, err := json.Marshal(entries)
	require.NoError(t, err)
	var out []v1beta1.StateEntry
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
