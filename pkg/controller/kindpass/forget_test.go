package kindpass

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const key = "FlinkApplication/tenant/gone"

// When the operator last read an object's figures from Flink goes with the object: the reads were
// remembered for the life of the process, so an operator whose tenants create and delete
// applications grew without bound.
func TestADeletedObjectsLooksAreForgotten(t *testing.T) {
	var e Environment
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	look := e.Looks.Of(key, t0)
	require.True(t, look.Due("checkpoints", time.Minute, time.Time{}))
	require.True(t, look.Due("overview/abc", time.Minute, time.Time{}))
	e.Forget(key)
	assert.Zero(t, e.Looks.Objects(), "reads remembered of a deleted object")
}

// An object's waits for a worker go with it: they were kept for the life of the process, so an
// operator whose tenants create and delete applications grew without bound.
func TestADeletedObjectsQueueWaitsAreForgotten(t *testing.T) {
	var e Environment
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	e.PhaseTime.Waits.Note(key, t0, t0.Add(3*time.Second))
	e.Forget(key)
	assert.Zero(t, e.PhaseTime.Waits.Within(key, t0, t0.Add(time.Minute)))
}

// The phase deadline the metric alerts on goes with the object too.
func TestADeletedObjectsDeadlineIsForgotten(t *testing.T) {
	var e Environment
	e.deadlines.Store(key, time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
	_, ok := e.Deadline(key)
	require.True(t, ok)
	e.Forget(key)
	_, ok = e.Deadline(key)
	assert.False(t, ok)
}
