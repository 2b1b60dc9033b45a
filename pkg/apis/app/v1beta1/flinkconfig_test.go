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

// Nested YAML reads as Flink reads it: every reader sees flat keys, and a flat configuration reads
// as it always did, integers as integers.
func TestANestedConfigurationReadsAsFlat(t *testing.T) {
	var c FlinkConfig
	require.NoError(t, c.UnmarshalJSON([]byte(`{"high-availability":{"type":"kubernetes","storageDir":"s3://b/ha"},
		"state.checkpoints.dir":"s3://b/cp","taskmanager.numberOfTaskSlots":2,"pipeline.classpaths":["file:///a.jar","file:///b.jar"],
		"execution":{"checkpointing":{"interval":"10s","unaligned":true}}}`)))
	assert.Equal(t, FlinkConfig{"high-availability.type": "kubernetes", "high-availability.storageDir": "s3://b/ha",
		"state.checkpoints.dir": "s3://b/cp", "taskmanager.numberOfTaskSlots": int64(2), "pipeline.classpaths": "file:///a.jar;file:///b.jar",
		"execution.checkpointing.interval": "10s", "execution.checkpointing.unaligned": true}, c)
	s, err := c.Strings()
	require.NoError(t, err)
	assert.Equal(t, "2", s["taskmanager.numberOfTaskSlots"])

	var flat FlinkConfig
	require.NoError(t, flat.UnmarshalJSON([]byte(`{"a":"x","b":1.5,"c":3,"d":false}`)))
	assert.Equal(t, FlinkConfig{"a": "x", "b": 1.5, "c": int64(3), "d": false}, flat)

	var twice FlinkConfig
	assert.ErrorContains(t, twice.UnmarshalJSON([]byte(`{"a.b":"1","a":{"b":"2"}}`)), `"a.b" is set twice`)
	var none FlinkConfig
	require.NoError(t, none.UnmarshalJSON([]byte(`null`)))
	assert.Nil(t, none)
	assert.Error(t, none.UnmarshalJSON([]byte(`{"a":[{"b":1}]}`)), "a list of objects is no Flink value")
}
