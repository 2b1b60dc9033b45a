package autoscaling

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// A sample takes a REST call per vertex (two the first time, for its metric names), one after the
// other. A JobManager runs the tenant's image and may answer each slowly, or not at all: with
// hundreds of vertices and the client's timeout for each, one sample would hold a worker for
// hours. So one pass spends at most SamplingBudget of the operator's clock and MaxSamplingCalls
// calls on a sample; each call ends when the budget does, and what is left of the sample goes on
// in the next pass, ResumeSampling later, from the vertex where it stopped. A sample not read
// within one sample interval of its start is dropped: a gap the window tolerates, or, from a
// JobManager that never answers in time, a window that never fills, which holds decisions.
const (
	SamplingBudget   = 3 * time.Second
	MaxSamplingCalls = 64
	ResumeSampling   = time.Second
)

// errBudgetSpent stops a sample where the pass's budget ran out.
var errBudgetSpent = errors.New("the pass's budget for metrics calls is spent")

// CallBudget is what is left of one pass's budget for metrics calls.
type CallBudget struct {
	clock clock.PassiveClock
	until time.Time
	calls int
}

func NewCallBudget(c clock.PassiveClock) *CallBudget {
	return &CallBudget{clock: c, until: c.Now().Add(SamplingBudget), calls: MaxSamplingCalls}
}

// call makes one metrics call within the budget, with a context that ends when the budget does. A
// call the budget cut short is errBudgetSpent, not the JobManager's error.
func (b *CallBudget) call(ctx context.Context, do func(context.Context) error) error {
	left := b.until.Sub(b.clock.Now())
	if left <= 0 || b.calls <= 0 {
		return errBudgetSpent
	}
	b.calls--
	ctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	err := do(ctx)
	if err != nil && (ctx.Err() != nil || !b.clock.Now().Before(b.until)) {
		return errBudgetSpent
	}
	return err
}

// ReadSample reads what the budget allows of the sample under way, starting one at now when none
// is. It returns the sample once every vertex is read, with each source's partitions set in
// vertices; done is false while vertices are left for a later pass. A call that fails drops the
// sample.
func (s *JobSamples) ReadSample(ctx context.Context, api client.API, ref jobs.Ref, vertices []autoscaler.Vertex, now time.Time, b *CallBudget) (sample autoscaler.Sample, done bool, err error) {
	s.keepToVertices(vertices)
	if s.Reading == nil {
		s.Reading = &autoscaler.Sample{Time: now, Vertices: map[string]autoscaler.VertexSample{}}
	}
	for i := range vertices {
		v := &vertices[i]
		if _, read := s.Reading.Vertices[v.ID]; read {
			continue
		}
		id, vs, err := s.readVertex(ctx, api, ref, v, b)
		switch {
		case errors.Is(err, errBudgetSpent):
			return autoscaler.Sample{}, false, nil
		case err != nil:
			s.Reading = nil
			return autoscaler.Sample{}, false, err
		}
		s.Reading.Vertices[id] = vs
	}
	for i := range vertices {
		if v := &vertices[i]; v.IsSource {
			v.Partitions = s.metrics[v.ID].partitions
		}
	}
	sample, s.Reading = *s.Reading, nil
	return sample, true, nil
}

// readVertex reads one vertex's metrics. A source's records in are what its operator read, or
// emitted where it counts none read: its task takes in none from the network.
func (s *JobSamples) readVertex(ctx context.Context, api client.API, ref jobs.Ref, v *autoscaler.Vertex, b *CallBudget) (string, autoscaler.VertexSample, error) {
	known, err := s.metricsOf(ctx, api, ref, v, b)
	if err != nil {
		return "", autoscaler.VertexSample{}, err
	}
	want := slices.Clone(known.task)
	if v.IsSource && known.read != "" {
		want = append(want, known.read)
	}
	if v.IsSource && known.emitted != "" {
		want = append(want, known.emitted)
	}
	if v.IsSource && known.pending != "" {
		want = append(want, known.pending)
	}
	var m map[string]client.AggregatedMetric
	err = b.call(ctx, func(ctx context.Context) (err error) {
		m, err = api.VertexMetrics(ctx, ref.URL, ref.ID, v.ID, want)
		return err
	})
	if err != nil {
		return "", autoscaler.VertexSample{}, fmt.Errorf("metrics of vertex %s: %w", v.Name, err)
	}
	vs := autoscaler.VertexSample{
		BusyTimeMsPerSecond: finite(m[client.MetricBusyTime].Avg), BackPressuredTimeMsPerSecond: finite(m[client.MetricBackPressuredTime].Avg),
		NumRecordsInPerSecond: finite(m[client.MetricRecordsInPerSecond].Sum), NumRecordsOutPerSecond: finite(m[client.MetricRecordsOutPerSecond].Sum),
	}
	if v.IsSource {
		if known.read != "" {
			vs.NumRecordsInPerSecond = finite(m[known.read].Sum)
		}
		if known.emitted != "" && vs.NumRecordsInPerSecond == 0 {
			// Flink counts a source's records read only in its connector base (SourceReaderBase):
			// a reader of other make reads as many as its operator emits, and reports none read.
			vs.NumRecordsInPerSecond = finite(m[known.emitted].Sum)
		}
		if got, ok := m[known.pending]; known.pending != "" && ok && !math.IsNaN(got.Sum) {
			vs.PendingRecords, vs.PendingKnown = got.Sum, true
		}
	}
	return known.id, vs, nil
}

// metricsOf is what the samples need of the vertex's metric names, asked of Flink once per job, or
// again while it lists none of the task metrics (Flink's metric store fills in some seconds after
// the tasks start).
func (s *JobSamples) metricsOf(ctx context.Context, api client.API, ref jobs.Ref, v *autoscaler.Vertex, b *CallBudget) (vertexMetrics, error) {
	if m, ok := s.metrics[v.ID]; ok {
		return m, nil
	}
	var names []string
	err := b.call(ctx, func(ctx context.Context) (err error) {
		names, err = api.VertexMetricNames(ctx, ref.URL, ref.ID, v.ID)
		return err
	})
	if err != nil {
		return vertexMetrics{}, fmt.Errorf("metric names of vertex %s: %w", v.Name, err)
	}
	m := readMetricNames(v.ID, names)
	if len(m.task) == 0 {
		return m, fmt.Errorf("vertex %s reports none of the metrics yet", v.Name)
	}
	s.metrics[m.id] = m
	return m, nil
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// keepToVertices holds what is kept of a job to the vertices it has now. A job's graph is fixed for
// its life: a JobManager that answers other vertex ids than before makes the memory start again,
// never grow by them.
func (s *JobSamples) keepToVertices(vertices []autoscaler.Vertex) {
	same := len(vertices) == len(s.vertexIDs)
	for i := 0; same && i < len(vertices); i++ {
		same = s.vertexIDs[vertices[i].ID]
	}
	if same {
		return
	}
	s.vertexIDs = make(map[string]bool, len(vertices))
	for _, v := range vertices {
		s.vertexIDs[v.ID] = true
	}
	s.metrics, s.Samples, s.Reading, s.Load = map[string]vertexMetrics{}, nil, nil, nil
}
