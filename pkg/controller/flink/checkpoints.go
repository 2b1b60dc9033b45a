package flink

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Flink's checkpoint settings the operator reads.
const (
	CheckpointIntervalKey  = "execution.checkpointing.interval"
	RetainedCheckpointsKey = "state.checkpoints.num-retained"
)

// RetainedCheckpointsAnnotation on a cluster's JobManager Deployment is the number of completed
// checkpoints the operator asked Flink to keep (state.checkpoints.num-retained) because the spec set
// none. The cluster's configuration was rendered when it was created, so what it keeps is read from
// here, not from how the operator would render it today.
const RetainedCheckpointsAnnotation = "flink.k8s.io/checkpoints-retained"

// maxRetainedByOperator caps what the operator sets: a checkpoint every second would otherwise keep
// dozens. A job that checkpoints that often has its checkpoints recorded more often instead.
const maxRetainedByOperator = 20

// CheckpointsToRetain is how many completed checkpoints Flink must keep so that the newest one
// survives `span` after the next one is due: ceil(span / interval) + 2, at most 20. It is 0 when
// the configuration sets state.checkpoints.num-retained itself (the user's count is kept, whatever
// it costs in status writes), has no periodic checkpoints, or span is 0. Flink's default of one
// deletes a checkpoint as soon as the next completes, so the operator would have to record every
// checkpoint the moment it completes; keeping a few more lets it record one a minute instead.
// With incremental checkpoints the retained ones share most of their files.
func CheckpointsToRetain(config v1beta1.FlinkConfig, span time.Duration) int {
	conf, err := config.Strings()
	if err != nil || span <= 0 {
		return 0
	}
	if _, set := conf[RetainedCheckpointsKey]; set {
		return 0
	}
	interval, err := ParseDuration(conf[CheckpointIntervalKey])
	if err != nil || interval <= 0 {
		return 0
	}
	return min(int((span+interval-1)/interval)+2, maxRetainedByOperator)
}

// ClusterCheckpointSurvival is ConfigCheckpointSurvival for a job on a cluster whose JobManager
// Deployment has these annotations: with the count the operator set there when the configuration
// sets none.
func ClusterCheckpointSurvival(config v1beta1.FlinkConfig, annotations map[string]string) (time.Duration, bool) {
	retainedByOperator := 0
	if n, err := strconv.Atoi(annotations[RetainedCheckpointsAnnotation]); err == nil && n > 0 {
		retainedByOperator = n
	}
	return checkpointSurvival(config, retainedByOperator)
}

// ConfigCheckpointSurvival is how long a completed checkpoint is sure to stay on storage after it
// completed: Flink keeps the newest state.checkpoints.num-retained (default 1) and deletes older
// ones as newer complete, so one survives (num-retained − 1) checkpoint intervals; without periodic
// checkpoints nothing replaces it. ok is false when the settings cannot be read. It takes the
// Flink configuration alone because a session job's is its cluster's with its own over it.
func ConfigCheckpointSurvival(config v1beta1.FlinkConfig) (time.Duration, bool) {
	return checkpointSurvival(config, 0)
}

// checkpointSurvival is ConfigCheckpointSurvival with retainedByOperator (when above 0) as the
// count where the configuration sets none. It reads the two keys it needs, not the whole
// configuration: it runs on every pass of every application that checkpoints.
func checkpointSurvival(config v1beta1.FlinkConfig, retainedByOperator int) (time.Duration, bool) {
	intervalText, set, err := config.Lookup(CheckpointIntervalKey)
	if err != nil {
		return 0, false
	}
	if !set {
		return math.MaxInt64, true
	}
	interval, err := ParseDuration(intervalText)
	if err != nil || interval <= 0 {
		return 0, false
	}
	retained := 1
	if v, set, _ := config.Lookup(RetainedCheckpointsKey); set {
		if retained, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || retained < 1 {
			return 0, false
		}
	} else if retainedByOperator > 0 {
		retained = retainedByOperator
	}
	return time.Duration(retained-1) * interval, true
}

// durationUnits are Flink's duration units; a number without one is milliseconds.
var durationUnits = map[string]time.Duration{
	"": time.Millisecond, "ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// ParseDuration reads Flink's duration syntax: "10s", "500 ms", "1 min", "60000" (milliseconds).
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	unit, known := durationUnits[strings.ToLower(strings.TrimSpace(s[i:]))]
	if err != nil || !known || n > int64(1<<62)/int64(unit) {
		return 0, fmt.Errorf("%q is not a Flink duration", s)
	}
	return time.Duration(n) * unit, nil
}
