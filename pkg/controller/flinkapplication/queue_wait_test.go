package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/controller/loop"
)

// withQueueWait is ctx carrying a wait for a worker from from to to, as the loop hands it to a pass.
func withQueueWait(ctx context.Context, from, to time.Time) context.Context {
	return loop.WithQueueWait(ctx, from, to)
}

// An application's waits for a worker go with it: they were kept for the life of the process, so
// an operator whose tenants create and delete applications grew without bound.
func TestADeletedApplicationsQueueWaitsAreForgotten(t *testing.T) {
	var e Environment
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	key := applicationKindName + "/" + ns + "/gone"
	e.PhaseTime.Waits.Note(key, t0, t0.Add(3*time.Second))
	e.forgetApp(key)
	assert.Zero(t, e.PhaseTime.Waits.Within(key, t0, t0.Add(time.Minute)))
}
