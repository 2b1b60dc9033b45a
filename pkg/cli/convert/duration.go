package convert

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// flinkUnits are the units of Flink's duration syntax (TimeUtils), by each of their names.
var flinkUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "nano": time.Nanosecond, "nanos": time.Nanosecond, "nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
	"us": time.Microsecond, "µs": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond,
	"microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// parseFlinkDuration reads a duration as Flink's configuration writes one: a whole number and a
// unit ("10 min", "30s"), milliseconds without a unit.
func parseFlinkDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	unit := strings.ToLower(strings.TrimSpace(s[i:]))
	if unit == "" {
		unit = "ms"
	}
	d, ok := flinkUnits[unit]
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit %q", s, unit)
	}
	if n > math.MaxInt64/int64(d) {
		return 0, fmt.Errorf("%q is longer than a duration can be", s)
	}
	return time.Duration(n) * d, nil
}
