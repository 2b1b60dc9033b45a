package flinksim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Load is the work a JobManager's jobs do, so that an autoscaler can be tested against a job that
// behaves like one: records arrive at the source's topic at the rate Input gives over time, each
// vertex processes what it is offered up to its capacity, what the source cannot read waits in the
// topic (the backlog), and a saturated vertex backpressures the vertices upstream of it. What the
// metrics of GET /jobs/:jobid/vertices/:vertexid/subtasks/metrics report follows from that, at the
// parallelism each vertex runs with now.
//
// JobManager.SetLoad (or Fleet.SetLoad for an application) sets it: jobs submitted from then on
// have its vertices, and offset 0 of Input is that moment. A job reads the topic only while it is
// RUNNING with its tasks deployed: restarts, rescales and resubmissions cost the records that
// arrive meanwhile. The topic and its backlog outlive the jobs, as a Kafka topic and a consumer
// group's offsets do: a resubmitted job carries on from where the last one stopped reading.
type Load struct {
	// Vertices are the job's vertices, the source first. Each other vertex reads the output of its
	// Inputs.
	Vertices []LoadVertex
	// Input is the rate at which records arrive at the source's topic.
	Input Rate
	// Noise is how far each per-second metric (busy, backpressured and idle time, records in and
	// out per second) may stray from the model, as a fraction: 0.05 is ±5%. Counters, offsets and
	// the backlog are exact.
	Noise float64
	// Seed picks the noise. The same Seed gives the same values at the same times, however often
	// and in whatever order they are read; a value stays the same for a second.
	Seed int64
}

// LoadVertex is one vertex of a Load.
type LoadVertex struct {
	// Name is the vertex's name as Flink shows it, "Source: Kafka Source" or "Map". The vertex has
	// one operator, whose metrics are named after it.
	Name string
	// Capacity is how many records per second one subtask processes when it is busy all the time.
	Capacity float64
	// OutputRatio is how many records the vertex emits per record it takes in; zero means 1.
	OutputRatio float64
	// Inputs are the vertices whose output this one reads, by index in Load.Vertices, each before
	// it. Nil means the vertex just before it, which makes a chain; the source has none.
	Inputs []int
	// Partitions, on the source, makes it a Kafka source reading a topic of that many partitions:
	// Flink's Kafka source spreads them over its subtasks (a subtask beyond the partition count
	// reads none), each subtask reports a KafkaSourceReader.topic.<topic>.partition.<n>.currentOffset
	// metric per partition it reads, and the partitions are read at one pace, so the source keeps up
	// only while its subtask with the most partitions does. Zero makes the source one whose
	// subtasks share the input evenly.
	Partitions int
	// Topic names the topic in the partition metrics; "input" when empty.
	Topic string
	// PendingRecords, on the source, makes it report its backlog as <operator>.pendingRecords, as
	// connectors that know it (Kafka) do, from the first record a deployment reads on.
	PendingRecords bool
	// UncountedReads, on the source, makes its operator report no records read
	// (<operator>.numRecordsIn stays 0), as on real Flink a source whose reader does not extend the
	// connector base (SourceReaderBase) does: Flink counts a source's records in nowhere else, so
	// NumberSequenceSource, DataGeneratorSource and readers of a job's own show what they read only
	// as what their operator emits.
	UncountedReads bool
	// UserMetrics makes each subtask of the vertex report this many metrics of the job's own beside
	// Flink's, named <operator>.user.<n>, as a job that registers counters does. Names are padded
	// with '-' to UserMetricNameBytes when that is longer: a tenant's image can make the list of a
	// vertex's metric names as long as it likes, and the operator must not keep it.
	UserMetrics         int
	UserMetricNameBytes int
}

// loadSpec is a checked Load, with what the model derives from its graph.
type loadSpec struct {
	names    []string
	inputs   [][]int
	capacity []float64 // per subtask
	ratio    []float64
	// gain is how many records each vertex takes in per record the source reads.
	gain []float64
	// upstreamOf[v][w] says v feeds w, directly or through other vertices.
	upstreamOf [][]bool
	// feeds says whether a vertex sends records to another over the network.
	feeds      []bool
	prefixes   []string // each operator's metric name prefix: its name as Flink's metric store filters it, and "."
	partitions int
	topic      string
	pending    bool
	uncounted  bool
	input      Rate
	noise      float64
	seed       int64
	// userMetrics are the names of each vertex's own metrics (LoadVertex.UserMetrics).
	userMetrics [][]string
}

// compile checks a Load. A Load without vertices is none: nil.
func (l Load) compile() (*loadSpec, error) {
	if len(l.Vertices) == 0 {
		return nil, nil
	}
	n := len(l.Vertices)
	s := &loadSpec{
		capacity: make([]float64, n), ratio: make([]float64, n), gain: make([]float64, n),
		inputs: make([][]int, n), feeds: make([]bool, n), upstreamOf: make([][]bool, n),
		input: l.Input, noise: l.Noise, seed: l.Seed,
	}
	var problems []error
	if l.Input.err != nil {
		problems = append(problems, fmt.Errorf("input: %w", l.Input.err))
	}
	if math.IsNaN(l.Noise) || l.Noise < 0 || l.Noise >= 1 {
		problems = append(problems, fmt.Errorf("noise %v is not a fraction in [0, 1)", l.Noise))
	}
	for v, vx := range l.Vertices {
		where := fmt.Sprintf("vertex %d (%s)", v, vx.Name)
		if strings.TrimSpace(vx.Name) == "" {
			problems = append(problems, fmt.Errorf("vertex %d has no name", v))
		}
		if !(vx.Capacity > 0) || math.IsInf(vx.Capacity, 0) {
			problems = append(problems, fmt.Errorf("%s: capacity %v is not a positive number", where, vx.Capacity))
		}
		s.ratio[v] = vx.OutputRatio
		if vx.OutputRatio == 0 {
			s.ratio[v] = 1
		}
		if !(s.ratio[v] > 0) || math.IsInf(s.ratio[v], 0) {
			problems = append(problems, fmt.Errorf("%s: output ratio %v is not a positive number", where, vx.OutputRatio))
		}
		s.names = append(s.names, vx.Name)
		s.prefixes = append(s.prefixes, metricStoreName(vx.Name)+".")
		if vx.UserMetrics < 0 || vx.UserMetricNameBytes < 0 {
			problems = append(problems, fmt.Errorf("%s: user metrics (%d of %d bytes) cannot be negative", where, vx.UserMetrics, vx.UserMetricNameBytes))
		}
		s.userMetrics = append(s.userMetrics, userMetricNames(s.prefixes[v], vx.UserMetrics, vx.UserMetricNameBytes))
		s.capacity[v] = vx.Capacity
		s.upstreamOf[v] = make([]bool, n)
		switch {
		case v == 0 && len(vx.Inputs) > 0:
			problems = append(problems, fmt.Errorf("%s: the source has no inputs", where))
		case v > 0 && vx.Inputs == nil:
			s.inputs[v] = []int{v - 1}
		case v > 0 && len(vx.Inputs) == 0:
			problems = append(problems, fmt.Errorf("%s: only the first vertex is a source", where))
		default:
			s.inputs[v] = slices.Clone(vx.Inputs)
		}
		for _, u := range s.inputs[v] {
			if u < 0 || u >= v {
				problems = append(problems, fmt.Errorf("%s: input %d is not a vertex before it", where, u))
			}
		}
		if v > 0 && (vx.Partitions != 0 || vx.PendingRecords || vx.Topic != "") {
			problems = append(problems, fmt.Errorf("%s: only the source reads a topic", where))
		}
	}
	src := l.Vertices[0]
	if src.Partitions < 0 {
		problems = append(problems, fmt.Errorf("the source's partitions (%d) cannot be negative", src.Partitions))
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	s.partitions, s.pending, s.topic, s.uncounted = src.Partitions, src.PendingRecords, src.Topic, src.UncountedReads
	if s.topic == "" {
		s.topic = "input"
	}
	s.gain[0] = 1
	for v := 1; v < n; v++ {
		for _, u := range s.inputs[v] {
			s.gain[v] += s.gain[u] * s.ratio[u]
			s.feeds[u] = true
			// Inputs come first, so what feeds u is known by now.
			s.upstreamOf[u][v] = true
			for w := range u {
				if s.upstreamOf[w][u] {
					s.upstreamOf[w][v] = true
				}
			}
		}
	}
	return s, nil
}

// userMetricNames are n metric names under the operator's prefix, each padded to size bytes.
func userMetricNames(prefix string, n, size int) []string {
	var out []string
	for k := range max(n, 0) {
		name := prefix + "user." + itoa(k)
		if pad := size - len(name); pad > 0 {
			name += strings.Repeat("-", pad)
		}
		out = append(out, name)
	}
	return out
}

// metricStoreName is a name as Flink's MetricQueryService writes it into the metric store the REST
// API answers from: space, ':', '.' and ',' become '_' ("Source: Kafka" is "Source__Kafka").
func metricStoreName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', ':', '.', ',':
			return '_'
		}
		return r
	}, s)
}

// capacityAt is how many records per second vertex v takes in at most with p subtasks. A Kafka
// source reads its partitions at one pace, so its subtask with the most partitions sets it.
func (s *loadSpec) capacityAt(v, p int) float64 {
	if v == 0 && s.partitions > 0 {
		most := 0
		for _, n := range s.partitionsPerSubtask(p) {
			most = max(most, n)
		}
		return s.capacity[0] * float64(s.partitions) / float64(most)
	}
	return s.capacity[v] * float64(p)
}

// limit is how many records per second the source can read with the vertices at parallelism p:
// the vertex with the least room for its share of them sets it.
func (s *loadSpec) limit(p []int) float64 {
	l := math.Inf(1)
	for v := range s.names {
		l = min(l, s.capacityAt(v, p[v])/s.gain[v])
	}
	return l
}

// partitionOwners is the subtask that reads each partition of the topic with p subtasks, as Flink's
// KafkaSourceEnumerator.getSplitOwner assigns them: from a start index the topic name hashes to,
// round robin.
func (s *loadSpec) partitionOwners(p int) []int {
	h := int32(0)
	for _, c := range s.topic {
		h = 31*h + int32(c) // Java's String.hashCode, for the topic names this sees (no surrogates)
	}
	start := int((h*31)&math.MaxInt32) % p
	owners := make([]int, s.partitions)
	for k := range owners {
		owners[k] = (start + k) % p
	}
	return owners
}

func (s *loadSpec) partitionsPerSubtask(p int) []int {
	n := make([]int, p)
	for _, owner := range s.partitionOwners(p) {
		n[owner]++
	}
	return n
}

// shares is the part of vertex v's records each of its p subtasks handles: a Kafka source's
// subtasks by the partitions they read, any other vertex's evenly.
func (s *loadSpec) shares(v, p int) []float64 {
	out := make([]float64, p)
	if v == 0 && s.partitions > 0 {
		for _, owner := range s.partitionOwners(p) {
			out[owner] += 1 / float64(s.partitions)
		}
		return out
	}
	for i := range out {
		out[i] = 1 / float64(p)
	}
	return out
}
