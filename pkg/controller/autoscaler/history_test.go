package autoscaler

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheHistoryKeepsTheLastChanges(t *testing.T) {
	var h History
	for i := range 25 {
		h.record(Change{Time: t0.Add(time.Duration(i) * time.Minute), Kind: Scaled, Reason: strings.Repeat("Source -> Map → ", 100)})
	}
	require.Len(t, h.Changes, MaxChanges)
	assert.Equal(t, t0.Add(15*time.Minute), h.Changes[0].Time, "the oldest go")
	assert.Equal(t, t0.Add(24*time.Minute), h.Changes[MaxChanges-1].Time)
	for _, c := range h.Changes {
		b, _ := json.Marshal(c.Reason)
		assert.LessOrEqual(t, len(b), 200+len(`""`), "its JSON, where > takes 6 bytes")
		assert.True(t, utf8.ValidString(c.Reason), "cut between characters")
		assert.True(t, strings.HasPrefix(c.Reason, "Source -> Map → "))
	}
}

// The bound doc.go states, for the largest history of a job of 20 vertices.
func TestTheHistoryStaysWithinItsSizeBound(t *testing.T) {
	const vertices = 20
	h := History{Stable: StableRun{At: t0.Add(time.Nanosecond), Parallelism: map[string]int{}}, Load: map[string]LoadRecord{},
		HoldUntil: t0.Add(time.Nanosecond)}
	var all []VertexChange
	for i := range vertices {
		id := fmt.Sprintf("%032x", i)
		all = append(all, VertexChange{ID: id, From: 32768, To: 32768})
		h.Stable.Parallelism[id] = 32768
		var r LoadRecord
		for j := range 2 * maxPeaks {
			r.add(t0.Add(time.Duration(j)*time.Minute+time.Nanosecond), 32768.123456789/float64(j+1), time.Hour, time.Hour)
		}
		require.Len(t, r.Peaks, maxPeaks)
		h.Load[id] = r
	}
	for i := range 3 * MaxChanges {
		h.record(Change{Time: t0.Add(time.Duration(i) + time.Nanosecond), Kind: Recommended, Vertices: all,
			Reason: strings.Repeat("é->", 1000)})
	}
	b, err := json.Marshal(h)
	require.NoError(t, err)
	t.Logf("%d bytes", len(b))
	assert.LessOrEqual(t, len(b), 4096+1024*vertices)
}

func TestADecisionNeverChangesTheCallersHistory(t *testing.T) {
	vs, samples, state := overloaded()
	var h History
	for i := range MaxChanges {
		h.record(Change{Time: t0.Add(time.Duration(i) * time.Minute), Kind: Scaled})
	}
	h.Load = map[string]LoadRecord{"src": {Since: t0, Peaks: []Peak{{Until: now.Add(-time.Minute), Busy: 0.5}}}}
	before, _ := json.Marshal(h)
	d := Evaluate(now, DefaultConfig(), vs, samples, state, h)
	require.True(t, d.Apply, d.Reason)
	after, _ := json.Marshal(h)
	assert.JSONEq(t, string(before), string(after))
	assert.Equal(t, now, d.History.Changes[MaxChanges-1].Time)
}
