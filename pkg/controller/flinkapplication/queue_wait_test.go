package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/controller/loop"
)

// withQueueWait is ctx carrying the wait s, as the loop hands it to a pass.
func withQueueWait(ctx context.Context, s span) context.Context {
	return loop.WithQueueWait(ctx, s.from, s.to)
}

func TestQueueWaitsAreSummedWithinAPhase(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var q queueWaits
	q.note(withQueueWait(context.Background(), span{t0, t0.Add(3 * time.Second)}), "k")
	q.note(withQueueWait(context.Background(), span{t0.Add(10 * time.Second), t0.Add(12 * time.Second)}), "k")
	q.note(context.Background(), "k")
	assert.Equal(t, 4*time.Second, q.within("k", t0.Add(time.Second), t0.Add(time.Minute)))
	assert.Zero(t, q.within("other", t0, t0.Add(time.Minute)))
}

// An application's waits for a worker go with it: they were kept for the life of the process, so
// an operator whose tenants create and delete applications grew without bound.
func TestADeletedApplicationsQueueWaitsAreForgotten(t *testing.T) {
	var e Environment
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	key := applicationKindName + "/" + ns + "/gone"
	e.waits.note(withQueueWait(context.Background(), span{t0, t0.Add(3 * time.Second)}), key)
	e.forgetApp(key)
	e.waits.mu.Lock()
	defer e.waits.mu.Unlock()
	assert.NotContains(t, e.waits.spans, key)
}

// Waits that ended before the phase began count for no deadline of it or a later phase, and are
// dropped; the others still count.
func TestWaitsBeforeThePhaseAreDropped(t *testing.T) {
	var q queueWaits
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	q.note(withQueueWait(context.Background(), span{t0, t0.Add(3 * time.Second)}), "k")
	q.note(withQueueWait(context.Background(), span{t0.Add(10 * time.Second), t0.Add(12 * time.Second)}), "k")
	q.dropBefore("k", t0.Add(5*time.Second))
	assert.Equal(t, []span{{t0.Add(10 * time.Second), t0.Add(12 * time.Second)}}, q.spans["k"])
	assert.Equal(t, 2*time.Second, q.within("k", t0, t0.Add(time.Minute)))
	q.dropBefore("k", t0.Add(13*time.Second))
	assert.NotContains(t, q.spans, "k")
}
