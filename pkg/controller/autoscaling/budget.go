package autoscaling

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

// What the autoscaler keeps of one object, whatever its JobManager answers. A JobManager runs the
// tenant's image: its job may have any number of vertices, with names of any length, each listing
// megabytes of metric names. The client bounds one answer while it is read; these bound what
// outlives it, per object, where the answers enter the autoscaler's memory (TrackedVertices,
// readMetricNames, SamplesKept), so that one tenant's job cannot grow the operator's memory, and
// with it every tenant's, for the job's life:
//
//   - at most MaxTrackedVertices vertices, each with a Flink vertex id (32 hex digits) of its own:
//     a job with more, or others, is not autoscaled, and its status.autoscaler and a Warning Event
//     (AutoscalerStopped) say why;
//   - a vertex's name as shown, printable, at most maxVertexName bytes;
//   - of a vertex's metric names, none but the three a source's samples ask for by name (what its
//     operator read and emitted, and its backlog), each at most maxMetricName bytes, besides which
//     of Flink's own task metrics it reports and how many Kafka partitions it reads;
//   - at most maxVertexSamples samples of vertices in all (and maxSamples of each): a job with
//     many vertices is sampled less often, so that a window still fits.
//
// With 200 vertices that is at most about 2 MiB: 16,384 vertex samples of about 100 bytes, and 200
// vertices' names and load records (TestTheSamplesOfTheWidestJobStayWithinTheBudget).
const (
	// MaxTrackedVertices is also the most status.autoscaler.vertices holds (the CRD's maxItems).
	MaxTrackedVertices = 200
	// maxVertexName is the longest spec.autoscaler.vertices[].vertex (the CRD's maxLength): a longer
	// name could not be given a limit by name anyway.
	maxVertexName = 512
	// maxMetricName: Flink cuts an operator's name to 80 characters in its metrics, so a real
	// operator metric's name is under 150 bytes.
	maxMetricName = 256
	// maxVertexSamples is what the samples of one job may hold, vertices times samples.
	maxVertexSamples = 16384
	// maxSamples bounds the samples kept of one job, whatever its window and sample interval.
	maxSamples = 720
)

// TrackedVertices are the job's vertices as the autoscaler sees them, from its details; over says
// why the autoscaler does not take the job on, when it has more vertices than it tracks.
func TrackedVertices(d *client.JobDetails) (vertices []autoscaler.Vertex, over string) {
	if n := len(d.Vertices); n > MaxTrackedVertices {
		return nil, fmt.Sprintf("the autoscaler stopped: the job has %d vertices, more than the %d it tracks of one job", n, MaxTrackedVertices)
	}
	seen := map[string]bool{}
	for i, v := range d.Vertices {
		switch {
		case !isVertexID(v.ID):
			return nil, fmt.Sprintf("the autoscaler stopped: vertex %d of the job has the id \"%s\", which is no Flink vertex id (32 hex digits)", i, shown(v.ID, 64))
		case seen[v.ID]:
			return nil, fmt.Sprintf("the autoscaler stopped: two vertices of the job have the id %s", v.ID)
		}
		seen[v.ID] = true
	}
	upstream := d.Upstream()
	for _, v := range d.Vertices {
		vertices = append(vertices, autoscaler.Vertex{ID: v.ID, Name: ShownVertexName(v.Name), Parallelism: int(v.Parallelism),
			MaxParallelism: int(v.MaxParallelism), IsSource: len(upstream[v.ID]) == 0, Upstream: upstream[v.ID]})
	}
	return vertices, ""
}

// isVertexID tells whether id is a Flink vertex id (JobVertexID): 16 bytes in hex. The id keys the
// vertex in samples and in status, and in the paths of the calls about it.
func isVertexID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range []byte(id) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ShownVertexName is a vertex's name as the autoscaler keeps and shows it: escaped where it would act
// on a terminal, and cut at maxVertexName bytes.
func ShownVertexName(name string) string { return shown(name, maxVertexName) }

// shown is text from a JobManager escaped where it would act on a terminal, and cut at n bytes.
func shown(s string, n int) string {
	s = printable.Text(s[:min(len(s), 6*n)]) // an escape takes at most six bytes
	if len(s) <= n {
		return s
	}
	const more = "…"
	cut := n - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

// vertexMetrics is what the autoscaler keeps of a vertex's metric names (VertexMetricNames), read
// once per job: which of Flink's task metrics it reports, the names under which its operator reports
// what a source read and its backlog, and how many Kafka partitions it reads.
type vertexMetrics struct {
	// id is the vertex's id, kept once: it keys the vertex in every sample.
	id string
	// task are the task metrics of taskMetrics the vertex reports: the constants, not its answer.
	task []string
	// read, emitted and pending are its source operator's records-read, records-emitted and
	// pendingRecords metrics; "" when it has none (or only names longer than maxMetricName).
	read, emitted, pending string
	partitions             int
}

// taskMetrics are the metrics every sample reads of every vertex.
var taskMetrics = []string{client.MetricBusyTime, client.MetricBackPressuredTime, client.MetricRecordsInPerSecond, client.MetricRecordsOutPerSecond}

// readMetricNames keeps of a vertex's metric names what the samples need, as copies: nothing of the
// answer outlives this call.
func readMetricNames(id string, names []string) vertexMetrics {
	m := vertexMetrics{id: strings.Clone(id)}
	reported := make([]bool, len(taskMetrics))
	for _, n := range names {
		if i := slices.Index(taskMetrics, n); i >= 0 {
			reported[i] = true
		}
		if len(n) > maxMetricName || strings.Contains(n, ",") {
			continue // Flink would read a comma as two names
		}
		if strings.HasSuffix(n, "."+client.MetricRecordsInPerSecond) && (m.read == "" || isSourceOperator(n) && !isSourceOperator(m.read)) {
			m.read = strings.Clone(n)
		}
		if m.pending == "" && strings.HasSuffix(n, "."+client.MetricPendingRecords) {
			m.pending = strings.Clone(n)
		}
	}
	if m.read != "" {
		out := strings.TrimSuffix(m.read, client.MetricRecordsInPerSecond) + client.MetricRecordsOutPerSecond
		if len(out) <= maxMetricName && slices.Contains(names, out) {
			m.emitted = out
		}
	}
	for i, t := range taskMetrics {
		if reported[i] {
			m.task = append(m.task, t)
		}
	}
	m.partitions = client.SourcePartitions(names)
	return m
}

// isSourceOperator tells whether an operator metric's name is a source operator's: Flink names a
// source "Source: …", which its metrics name "Source__…". A vertex that chains operators to its
// source lists each one's records in; only the source's are what it read.
func isSourceOperator(metric string) bool { return strings.HasPrefix(metric, "Source__") }

// SamplesKept is how many samples the autoscaler keeps of a job of n vertices.
func SamplesKept(n int) int {
	return min(maxSamples, maxVertexSamples/max(n, 1))
}

// SampleSpacing is how long the autoscaler waits between two samples of a job of n vertices: the
// operator's sample interval, or longer where the samples a window needs at that interval would not
// fit in SamplesKept. The window then holds fewer samples, evenly spread, and still no gap longer
// than the autoscaler allows (a fifth of the window: SamplesKept is at least 81).
func SampleSpacing(interval, window time.Duration, n int) time.Duration {
	return max(interval, window/time.Duration(SamplesKept(n)-1))
}
