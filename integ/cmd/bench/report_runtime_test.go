package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTheOperatorsRuntimeVariablesAreRecordedOnlyWhenSet(t *testing.T) {
	env := map[string]string{"GOGC": "100", "HOME": "/root"}
	assert.Equal(t, map[string]string{"GOGC": "100"}, runtimeEnvironment(func(k string) string { return env[k] }))
	assert.Nil(t, runtimeEnvironment(func(string) string { return "" }), "nothing set leaves the field out of the JSON")
}
