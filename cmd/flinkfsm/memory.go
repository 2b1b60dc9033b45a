package main

import (
	"strconv"
	"strings"
)

// containerMemoryLimit is the variable deploy/ and the chart set to the container's memory limit,
// in bytes, through the downward API.
const containerMemoryLimit = "FLINKFSM_MEMORY_LIMIT"

// memoryLimit is the soft limit for Go's heap: 80% of the container's memory limit, so that the
// collector works harder as the heap nears it instead of letting it grow to twice the live heap and
// the container be OOM-killed (a surge of large answers or jars could otherwise pass the limit that
// the live heap alone stays well under). GOMEMLIMIT, when set, is Go's own and wins; without a
// container limit there is none.
func memoryLimit(getenv func(string) string) (int64, bool) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(getenv(containerMemoryLimit)), 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n / 5 * 4, true
}
