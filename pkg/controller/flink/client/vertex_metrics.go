package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Names of the metrics every subtask reports (its task's), as GET
// /jobs/:jobid/vertices/:vertexid/subtasks/metrics lists them. A vertex's operators report more,
// under their names in Flink's metric store: the operator name with space, ':', '.' and ','
// turned into '_', and a dot ("Source__Kafka_Source.pendingRecords"); OperatorMetricName finds
// them.
const (
	// MetricBusyTime is the milliseconds per second a subtask was busy processing.
	MetricBusyTime = "busyTimeMsPerSecond"
	// MetricBackPressuredTime is the milliseconds per second a subtask waited for the vertices
	// downstream to take what it emitted.
	MetricBackPressuredTime = "backPressuredTimeMsPerSecond"
	// MetricIdleTime is the milliseconds per second a subtask had nothing to do.
	MetricIdleTime = "idleTimeMsPerSecond"
	// MetricRecordsInPerSecond counts the records a subtask took in from the network: none for a
	// source, whose operator reports what it reads as <operator>.numRecordsInPerSecond.
	MetricRecordsInPerSecond = "numRecordsInPerSecond"
	// MetricRecordsOutPerSecond counts the records a subtask sent on: none for a vertex that
	// sends nothing on, such as a sink.
	MetricRecordsOutPerSecond = "numRecordsOutPerSecond"
	// MetricPendingRecords is the operator metric of a source's backlog, reported by connectors
	// that know it (Kafka) once the source has read a record.
	MetricPendingRecords = "pendingRecords"
)

// AggregatedMetric is one metric of a vertex, aggregated over its subtasks. An aggregation Flink
// did not send, or sent as no number (a gauge that reports NaN), is NaN.
type AggregatedMetric struct {
	Min, Max, Avg, Sum float64
}

// What one VertexMetrics request may name. Flink's REST server (Netty) refuses a request line
// longer than 4096 bytes; the rest of it (method, path, protocol) takes about 150.
const (
	maxVertexMetricNames  = 64
	maxVertexMetricsQuery = 3 << 10
)

// vertexMetricsAggregations are the aggregations VertexMetrics asks for: AggregatedMetric's.
const vertexMetricsAggregations = "min,max,avg,sum"

// VertexMetricNames implements API.
func (c *Client) VertexMetricNames(ctx context.Context, baseURL, jobID, vertexID string) (_ []string, err error) {
	const op = "VertexMetricNames"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireVertex(op, jobID, vertexID); err != nil {
		return nil, err
	}
	var out []struct {
		ID string `json:"id"`
	}
	if err := c.getJSON(ctx, baseURL, op, &out, "jobs", jobID, "vertices", vertexID, "subtasks", "metrics"); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(out))
	for _, m := range out {
		names = append(names, m.ID)
	}
	return names, nil
}

// VertexMetrics implements API.
func (c *Client) VertexMetrics(ctx context.Context, baseURL, jobID, vertexID string, names []string) (_ map[string]AggregatedMetric, err error) {
	const op = "VertexMetrics"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireVertex(op, jobID, vertexID); err != nil {
		return nil, err
	}
	query, err := vertexMetricsQuery(names)
	if err != nil {
		return nil, invalid(op, err)
	}
	var answer []struct {
		ID  string       `json:"id"`
		Min *flinkDouble `json:"min"`
		Max *flinkDouble `json:"max"`
		Avg *flinkDouble `json:"avg"`
		Sum *flinkDouble `json:"sum"`
	}
	_, _, err = c.send(ctx, baseURL, request{
		op: op, method: http.MethodGet, path: []string{"jobs", jobID, "vertices", vertexID, "subtasks", "metrics"},
		query: query, out: &answer, timeout: c.cfg.GetTimeout, policy: readPolicy,
	})
	if err != nil {
		return nil, err
	}
	asked := map[string]bool{}
	for _, n := range names {
		asked[n] = true
	}
	out := map[string]AggregatedMetric{}
	for _, m := range answer {
		if asked[m.ID] {
			out[m.ID] = AggregatedMetric{Min: m.Min.value(), Max: m.Max.value(), Avg: m.Avg.value(), Sum: m.Sum.value()}
		}
	}
	return out, nil
}

func requireVertex(op, jobID, vertexID string) error {
	if err := requireID(op, "job id", jobID); err != nil {
		return err
	}
	return requireID(op, "vertex id", vertexID)
}

// vertexMetricsQuery is ?get=<names>&agg=min,max,avg,sum, within what Flink reads.
func vertexMetricsQuery(names []string) (url.Values, error) {
	switch {
	case len(names) == 0:
		return nil, errors.New("name at least one metric")
	case len(names) > maxVertexMetricNames:
		return nil, fmt.Errorf("%d metrics in one request, more than the %d allowed", len(names), maxVertexMetricNames)
	}
	for _, n := range names {
		if n == "" || strings.Contains(n, ",") {
			// Flink splits the list at commas: it would ask for other metrics.
			return nil, fmt.Errorf("%q is no metric name", n)
		}
	}
	query := url.Values{"get": {strings.Join(names, ",")}, "agg": {vertexMetricsAggregations}}
	if n := len(query.Encode()); n > maxVertexMetricsQuery {
		return nil, fmt.Errorf("the metric names take %d bytes of query, more than the %d Flink's request line leaves", n, maxVertexMetricsQuery)
	}
	return query, nil
}

// flinkDouble is a Java double as Jackson writes it: a number, or, for what is no number, the
// string "NaN", "Infinity" or "-Infinity".
type flinkDouble float64

func (d *flinkDouble) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(b, []byte(`"`)) {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "NaN":
			*d = flinkDouble(math.NaN())
		case "Infinity":
			*d = flinkDouble(math.Inf(1))
		case "-Infinity":
			*d = flinkDouble(math.Inf(-1))
		default:
			return fmt.Errorf("%q is no number", s)
		}
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*d = flinkDouble(f)
	return nil
}

func (d *flinkDouble) value() float64 {
	if d == nil {
		return math.NaN()
	}
	return float64(*d)
}

// OperatorMetricName finds, among a vertex's metric names (VertexMetricNames), the one under
// which an operator of the vertex reports metric, such as MetricPendingRecords; ok is false when
// none does (a source whose connector does not report it, or has not yet).
func OperatorMetricName(names []string, metric string) (name string, ok bool) {
	for _, n := range names {
		if strings.HasSuffix(n, "."+metric) {
			return n, true
		}
	}
	return "", false
}

// kafkaPartitionMetric is the metric Flink's Kafka source reports for each partition it reads:
// <operator>.KafkaSourceReader.topic.<topic>.partition.<n>.currentOffset.
var kafkaPartitionMetric = regexp.MustCompile(`^.+\.KafkaSourceReader\.topic\.(.+)\.partition\.(\d+)\.currentOffset$`)

// SourcePartitions counts the Kafka partitions a source vertex reads, from its metric names
// (VertexMetricNames): each of its subtasks reports an offset for each partition it reads. It
// is 0 for a vertex that reads no Kafka topic.
func SourcePartitions(names []string) int {
	seen := map[string]bool{}
	for _, n := range names {
		if m := kafkaPartitionMetric.FindStringSubmatch(n); m != nil {
			seen[m[1]+"/"+m[2]] = true
		}
	}
	return len(seen)
}
