package fsm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestQueueWaitsAreSummedWithinAPhase(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var q QueueWaits
	q.Note("k", t0, t0.Add(3*time.Second))
	q.Note("k", t0.Add(10*time.Second), t0.Add(12*time.Second))
	assert.Equal(t, 4*time.Second, q.Within("k", t0.Add(time.Second), t0.Add(time.Minute)))
	assert.Zero(t, q.Within("other", t0, t0.Add(time.Minute)))
}

// Waits that ended before the phase began count for no deadline of it or a later phase, and are
// dropped; the others still count.
func TestWaitsBeforeThePhaseAreDropped(t *testing.T) {
	var q QueueWaits
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	q.Note("k", t0, t0.Add(3*time.Second))
	q.Note("k", t0.Add(10*time.Second), t0.Add(12*time.Second))
	q.DropBefore("k", t0.Add(5*time.Second))
	assert.Equal(t, []span{{t0.Add(10 * time.Second), t0.Add(12 * time.Second)}}, q.spans["k"])
	assert.Equal(t, 2*time.Second, q.Within("k", t0, t0.Add(time.Minute)))
	q.DropBefore("k", t0.Add(13*time.Second))
	assert.NotContains(t, q.spans, "k")
}
