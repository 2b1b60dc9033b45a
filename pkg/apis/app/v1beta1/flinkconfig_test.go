package v1beta1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lookup reads one key as Strings renders the whole configuration, and fails as Strings does.
func TestLookupAgreesWithStrings(t *testing.T) {
	conf := FlinkConfig{"a": "x", "b": true, "c": float64(1.5), "d": int64(7), "e": int32(3), "f": 2}
	all, err := conf.Strings()
	require.NoError(t, err)
	for k, want := range all {
		got, set, err := conf.Lookup(k)
		require.NoError(t, err)
		assert.True(t, set, k)
		assert.Equal(t, want, got, k)
	}
	got, set, err := conf.Lookup("missing")
	assert.NoError(t, err)
	assert.False(t, set)
	assert.Empty(t, got)

	bad := FlinkConfig{"a": "x", "z": []interface{}{"list"}, "y": nil}
	_, wantErr := bad.Strings()
	require.Error(t, wantErr)
	_, _, err = bad.Lookup("a")
	assert.EqualError(t, err, wantErr.Error())
}

// A string value is read without allocating: the operator reads a few keys on every pass.
func TestLookupOfAStringAllocatesNothing(t *testing.T) {
	conf := FlinkConfig{"execution.checkpointing.interval": "10s", "state.savepoints.dir": "s3://b/p", "parallelism.default": 4, "web.cancel.enable": false, "taskmanager.memory.fraction": 0.35}
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_, _, _ = conf.Lookup("execution.checkpointing.interval")
	}))
}
