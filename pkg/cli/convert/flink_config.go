package convert

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// flatConfig reads a flinkConfiguration as Flink reads a nested one: nested objects join their
// keys with dots, a list is its items joined with ";", and a scalar is its text.
func flatConfig(f *fields, key string) map[string]string {
	v, ok := f.take(key)
	if !ok {
		return nil
	}
	out := map[string]string{}
	flatten(f, f.at(key), "", v, out)
	return out
}

func flatten(f *fields, path, prefix string, v any, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flatten(f, path, key, v[k], out)
		}
	case []any:
		items := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := scalarText(x)
			if !ok {
				f.out.warn(path+"."+prefix, "a list whose items are not all scalars; left out")
				return
			}
			items = append(items, s)
		}
		out[prefix] = strings.Join(items, ";")
	case nil:
	default:
		s, ok := scalarText(v)
		if !ok {
			f.out.warn(path+"."+prefix, "not a scalar; left out")
			return
		}
		out[prefix] = s
	}
}

// The Apache operator reads its own settings from an object's flinkConfiguration and never sends
// them to Flink: these prefixes.
var operatorPrefixes = []string{"kubernetes.operator.", "job.autoscaler."}

// jobSettings are the Apache operator's per-object settings that a flinkfsm job field takes.
type jobSettings struct {
	periodicSavepoint *v1beta1.PeriodicSchedule
	retention         *v1beta1.SavepointRetention
}

// splitConfig separates the Apache operator's own settings from Flink's configuration: those a
// flinkfsm field takes go to settings, the others are named in the report.
func splitConfig(f *fields, path string, config map[string]string) (v1beta1.FlinkConfig, jobSettings) {
	var s jobSettings
	if len(config) == 0 {
		return nil, s
	}
	out := v1beta1.FlinkConfig{}
	for _, k := range slices.Sorted(maps.Keys(config)) {
		v := config[k]
		if !slices.ContainsFunc(operatorPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out[k] = v
			continue
		}
		switch ok, note := s.take(k, v); {
		case !ok:
			f.out.warn(path+"."+k, "a setting of the Apache operator, not of Flink, that no flinkfsm field takes; left out")
		case note != "":
			f.out.warn(path+"."+k, note)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out, s
}

// take carries one Apache operator setting to its flinkfsm field; false when none takes it. A value
// beyond what the field takes is carried as the nearest it takes, and note says so.
func (s *jobSettings) take(key, value string) (ok bool, note string) {
	switch key {
	case "kubernetes.operator.periodic.savepoint.interval":
		d, err := parseFlinkDuration(value)
		if err != nil || d <= 0 {
			return false, ""
		}
		seconds, note := bounded(int64(math.Ceil(d.Seconds())), minimumInterval, math.MaxInt32, "periodicSavepoint.intervalSeconds")
		s.periodicSavepoint = &v1beta1.PeriodicSchedule{IntervalSeconds: int32(seconds)}
		return true, note
	case "kubernetes.operator.savepoint.history.max.count":
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil || n < 1 {
			return false, ""
		}
		keep, note := bounded(n, 1, maxKeep, "savepointRetention.keep")
		s.retentionOf().Keep = int32(keep)
		return true, note
	}
	return false, ""
}

// The bounds of the fields the Apache operator's settings go to (the CRD's).
const (
	minimumInterval = 60
	maxKeep         = 1000
)

// bounded is n within [lo, hi], and a note naming the field when it was not.
func bounded(n, lo, hi int64, field string) (int64, string) {
	switch {
	case n < lo:
		return lo, fmt.Sprintf("%d is below the least %s takes; written %d", n, field, lo)
	case n > hi:
		return hi, fmt.Sprintf("%d is beyond the most %s takes; written %d", n, field, hi)
	}
	return n, ""
}

func (s *jobSettings) retentionOf() *v1beta1.SavepointRetention {
	if s.retention == nil {
		s.retention = &v1beta1.SavepointRetention{}
	}
	return s.retention
}
