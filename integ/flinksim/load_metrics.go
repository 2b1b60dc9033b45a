package flinksim

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Names of the task metrics every subtask reports (TaskIOMetricGroup). Operator metrics are these
// records metrics again, and a source's pendingRecords and partition offsets, each under the
// operator's name in the metric store (metricStoreName) and a dot.
const (
	metricBusy          = "busyTimeMsPerSecond"
	metricBackPressured = "backPressuredTimeMsPerSecond"
	metricIdle          = "idleTimeMsPerSecond"
	metricIn            = "numRecordsIn"
	metricInRate        = "numRecordsInPerSecond"
	metricOut           = "numRecordsOut"
	metricOutRate       = "numRecordsOutPerSecond"
	metricPending       = "pendingRecords"
)

// subtaskMetrics are the metrics each subtask of vertex v of job j reports, as the metric store that
// GET /jobs/:jobid/vertices/:vertexid/subtasks/metrics aggregates holds them: none while the tasks
// do not run. A job that does not read a Load's topic reports them idle.
func (jm *JobManager) subtaskMetrics(j *job, v int, now time.Time) []map[string]float64 {
	if j.state != stateRunning || !j.hasSlots {
		return nil
	}
	p := j.vertexParallelism[v]
	r, spec := jm.load, j.load
	if r != nil && r.spec != spec {
		r = nil // the job runs an earlier Load, whose topic nobody writes to any more
	}
	reading := r != nil && r.consumer == j
	var f flow
	var counted float64 // records the source read since the tasks were deployed
	var offset time.Duration
	shares := make([]float64, p)
	for i := range shares {
		shares[i] = 1 / float64(p)
	}
	if spec != nil {
		shares = spec.shares(v, p)
	}
	if reading {
		f, counted, offset = r.flow(j.vertexParallelism, now), r.consumed-r.base, now.Sub(r.origin)
	}
	op := metricStoreName(j.vertexNames[v]) + "."
	out := make([]map[string]float64, p)
	for i := range out {
		m := map[string]float64{}
		var in, busy, backPressured, inCount, outCount float64
		ratio := 1.0
		if reading {
			ratio = spec.ratio[v]
			in = f.in[v] * shares[i]
			busy = math.Min(1000, 1000*in/spec.capacity[v])
			if f.backpressured[v] && shares[i] > 0 {
				// It would take more, but the vertices downstream do not take what it would emit.
				backPressured = 1000 - busy
			}
			inCount = math.Floor(spec.gain[v] * counted * shares[i])
			outCount = math.Floor(spec.gain[v] * ratio * counted * shares[i])
		}
		noisy := func(name string, value float64) float64 {
			if !reading {
				return value
			}
			return spec.noisy(value, name, v, i, offset)
		}
		m[metricBusy] = clampMillis(noisy(metricBusy, busy))
		m[metricBackPressured] = clampMillis(noisy(metricBackPressured, backPressured))
		m[metricIdle] = clampMillis(noisy(metricIdle, 1000-busy-backPressured))
		m[op+metricIn], m[op+metricInRate] = inCount, noisy(op+metricInRate, in)
		if v == 0 && spec != nil && spec.uncounted {
			m[op+metricIn], m[op+metricInRate] = 0, 0
		}
		m[op+metricOut], m[op+metricOutRate] = outCount, noisy(op+metricOutRate, in*ratio)
		// The task counts what it takes from and sends to the network: a source takes nothing in
		// (its operator reads the records), and the last vertex sends nothing on.
		m[metricIn], m[metricInRate] = 0, 0
		if v > 0 {
			m[metricIn], m[metricInRate] = inCount, noisy(metricInRate, in)
		}
		m[metricOut], m[metricOutRate] = 0, 0
		if spec == nil && v == 0 || spec != nil && spec.feeds[v] {
			m[metricOut], m[metricOutRate] = outCount, noisy(metricOutRate, in*ratio)
		}
		if v == 0 && spec != nil {
			sourceMetrics(m, op, spec, r, reading && shares[i] > 0 && counted > 0, p, i, shares[i])
		}
		if spec != nil {
			for _, name := range spec.userMetrics[v] {
				m[name] = 0
			}
		}
		out[i] = m
	}
	return out
}

// sourceMetrics adds what a source subtask's connector reports: the offset reached in each partition
// it reads, and its part of the backlog once it has read a record (the Kafka source registers
// pendingRecords lazily).
func sourceMetrics(m map[string]float64, op string, spec *loadSpec, r *loadRun, read bool, p, i int, share float64) {
	if spec.pending && read {
		m[op+metricPending] = math.Floor(r.backlog * share)
	}
	if spec.partitions == 0 {
		return
	}
	offset := 0.0
	if r != nil {
		offset = math.Floor(r.consumed / float64(spec.partitions))
	}
	topic := metricStoreName(spec.topic)
	for k, owner := range spec.partitionOwners(p) {
		if owner == i {
			m[op+"KafkaSourceReader.topic."+topic+".partition."+itoa(k)+".currentOffset"] = offset
		}
	}
}

// aggregationModes are Flink's MetricsAggregationParameter.AggregationMode values, in the order it
// applies them when agg is not given; skew came with 1.19 (unverified: the 1.20 document is the
// only one at hand that lists it).
var aggregationModes = []string{"min", "max", "avg", "sum", "skew"}

// handleSubtaskMetrics is AggregatingSubtasksMetricsHandler: without get, the names of the metrics
// the vertex's subtasks report ([{"id":...}]); with get, each named metric aggregated over the
// subtasks ([{"id":...,"min":...,"max":...}]). Like Flink, it answers an unknown job or vertex with
// no metrics, and as soon as one named metric is reported by no subtask, with none at all.
func (jm *JobManager) handleSubtaskMetrics(rc *reqCtx) response {
	query := rc.r.URL.Query()
	modes, bad := jm.aggregations(query["agg"])
	if bad != nil {
		return *bad
	}
	var stores []map[string]float64
	if j := jm.job(rc.params["jobid"]); j != nil {
		if v := j.vertexIndex(rc.params["vertexid"]); v >= 0 {
			stores = selectSubtasks(jm.subtaskMetrics(j, v, rc.now), query["subtasks"])
		}
	}
	out := []any{}
	get := strings.Join(query["get"], ",")
	if get == "" {
		names := map[string]bool{}
		for _, m := range stores {
			for name := range m {
				names[name] = true
			}
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			out = append(out, map[string]string{"id": name})
		}
		return respondOK(out)
	}
	for _, name := range strings.Split(get, ",") {
		var values []float64
		for _, m := range stores {
			if x, ok := m[name]; ok {
				values = append(values, x)
			}
		}
		if len(values) == 0 {
			return respondOK([]any{})
		}
		metric := map[string]any{"id": name}
		for _, mode := range modes {
			metric[mode] = jsonDouble(aggregate(mode, values))
		}
		out = append(out, metric)
	}
	return respondOK(out)
}

// aggregations parses agg, which Flink reads case-insensitively; every mode when it is absent.
func (jm *JobManager) aggregations(raw []string) ([]string, *response) {
	known := aggregationModes
	if flinkBefore(jm.flinkVersion, 1, 19) {
		known = known[:4]
	}
	value := strings.Join(raw, ",")
	if value == "" {
		return known, nil
	}
	var modes []string
	for _, m := range strings.Split(value, ",") {
		m = strings.ToLower(m)
		if !slices.Contains(known, m) {
			bad := badParams("Cannot resolve query parameter (agg) from value \"" + value + "\".")
			return nil, &bad
		}
		if !slices.Contains(modes, m) {
			modes = append(modes, m)
		}
	}
	return modes, nil
}

// selectSubtasks keeps the subtasks the subtasks parameter names ("1,3,5-9"), all without it. As in
// Flink, a range that is no number is skipped, and so is a subtask the vertex does not have.
func selectSubtasks(stores []map[string]float64, ranges []string) []map[string]float64 {
	if len(ranges) == 0 {
		return stores
	}
	var out []map[string]float64
	for _, rg := range strings.Split(strings.Join(ranges, ","), ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(rg), "-")
		start, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		end := start
		if isRange {
			if end, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := max(start, 0); i <= end && i < len(stores); i++ {
			out = append(out, stores[i])
		}
	}
	return out
}

// aggregate is Flink's DoubleAccumulator of a mode; skew is the mean absolute deviation as a
// percentage of the mean, at most 100.
func aggregate(mode string, values []float64) float64 {
	total := 0.0
	for _, x := range values {
		total += x
	}
	avg := total / float64(len(values))
	switch mode {
	case "min":
		return slices.Min(values)
	case "max":
		return slices.Max(values)
	case "sum":
		return total
	case "avg":
		return avg
	}
	if avg == 0 {
		return 0
	}
	dev := 0.0
	for _, x := range values {
		dev += math.Abs(avg - x)
	}
	return math.Min(dev/float64(len(values))/avg*100, 100)
}
