package jobstate

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Native savepoints are asked of releases that can take them; an older release is told, naming
// the field the user set, and its savepoints are taken in its one format.
func TestNativeSavepointsAreSaidUnavailableBeforeFlink115(t *testing.T) {
	s := &Settings{SavepointFormatType: v1beta1.SavepointFormatNative, Field: func(name string) string { return "spec." + name }}
	assert.Equal(t, "NATIVE", s.SavepointFormat())
	assert.Contains(t, s.UnavailableFormat("1.14"), "spec.savepointFormatType is Native, which Flink 1.14 cannot take")
	assert.Empty(t, s.UnavailableFormat("1.15"))
	assert.Empty(t, s.UnavailableFormat("2.2"))
	assert.Empty(t, (&Settings{SavepointFormatType: v1beta1.SavepointFormatCanonical}).UnavailableFormat("1.14"))
	var none *Settings
	assert.Empty(t, none.SavepointFormat(), "an object that owns no job has Flink's default")
}
