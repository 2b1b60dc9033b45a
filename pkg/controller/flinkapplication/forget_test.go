package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// When the operator last read an object's figures from Flink goes with the object: the reads were
// remembered for the life of the process, so an operator whose tenants create and delete
// applications grew without bound.
func TestADeletedObjectsLooksAreForgotten(t *testing.T) {
	var e Environment
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	key := applicationKindName + "/" + ns + "/gone"
	look := e.Looks.Of(key, t0)
	require.True(t, look.Due("checkpoints", time.Minute, time.Time{}))
	require.True(t, look.Due("overview/abc", time.Minute, time.Time{}))
	e.forgetApp(key)
	assert.Zero(t, e.Looks.Objects(), "reads remembered of a deleted object")
}
