package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTheHeapIsHeldUnderTheContainersMemoryLimit(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	limit, ok := memoryLimit(env(map[string]string{containerMemoryLimit: "536870912"}))
	assert.True(t, ok)
	assert.Equal(t, int64(429496728), limit, "80% of 512 Mi")
	_, ok = memoryLimit(env(map[string]string{containerMemoryLimit: "536870912", "GOMEMLIMIT": "300MiB"}))
	assert.False(t, ok, "GOMEMLIMIT wins")
	_, ok = memoryLimit(env(nil))
	assert.False(t, ok, "no container limit, no soft limit")
}
