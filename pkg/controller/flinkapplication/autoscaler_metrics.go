package flinkapplication

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// The autoscaler reads each vertex's metrics every sampleInterval and keeps the samples of the
// last window in the operator's memory, bounded per job (autoscaler_budget.go) and dropped with the
// job or the object. A restarted operator starts with none: it collects a full window before it
// decides.

// autoscalerMemory is what the autoscaler keeps of each object between passes.
type autoscalerMemory struct {
	mu      sync.Mutex
	objects map[string]*jobSamples
}

// jobSamples are the samples of one object's running job.
type jobSamples struct {
	jobID string
	// metrics are what the samples need of each vertex's metric names, by vertex id, read once per
	// job (readMetricNames).
	metrics map[string]vertexMetrics
	samples []autoscaler.Sample
	last    time.Time
	// load is each vertex's load over the scale-down delay (autoscaler.History.Load).
	load map[string]autoscaler.LoadRecord
}

// of is the memory of the object's job, emptied when the job is another.
func (m *autoscalerMemory) of(key, jobID string) *jobSamples {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.objects == nil {
		m.objects = map[string]*jobSamples{}
	}
	s := m.objects[key]
	if s == nil || s.jobID != jobID {
		s = &jobSamples{jobID: jobID, metrics: map[string]vertexMetrics{}}
		m.objects[key] = s
	}
	return s
}

// rescaled starts the object's samples again for the job that runs after a rescale, the same job
// in place or the one a restart submitted, and keeps the record of its vertices' load, which does
// not depend on the parallelism: a vertex's scale-down delay does not start over because the job
// was rescaled.
func (m *autoscalerMemory) rescaled(key, jobID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := &jobSamples{jobID: jobID, metrics: map[string]vertexMetrics{}}
	if old := m.objects[key]; old != nil {
		s.load = old.load
	}
	if m.objects == nil {
		m.objects = map[string]*jobSamples{}
	}
	m.objects[key] = s
}

// forget drops what is kept of an object.
func (m *autoscalerMemory) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, key)
}

// add keeps a sample and drops those older than keep, and more than kept.
func (s *jobSamples) add(sample autoscaler.Sample, keep time.Duration, kept int) {
	s.samples = append(s.samples, sample)
	s.last = sample.Time
	cut := 0
	for cut < len(s.samples) && sample.Time.Sub(s.samples[cut].Time) > keep {
		cut++
	}
	cut = max(cut, len(s.samples)-kept)
	s.samples = append([]autoscaler.Sample(nil), s.samples[cut:]...)
}

// metricsOf is what the samples need of the vertex's metric names, asked of Flink once per job, or
// again while it lists none of the task metrics (Flink's metric store fills in some seconds after
// the tasks start).
func (s *jobSamples) metricsOf(ctx context.Context, api client.API, ref jobs.Ref, v *autoscaler.Vertex) (vertexMetrics, error) {
	if m, ok := s.metrics[v.ID]; ok {
		return m, nil
	}
	names, err := api.VertexMetricNames(ctx, ref.URL, ref.ID, v.ID)
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

// sampleVertices reads one sample of every vertex's metrics, and each source's partitions into
// vertices. A source's records in are what its operator read: its task takes in none from the
// network.
func sampleVertices(ctx context.Context, api client.API, ref jobs.Ref, s *jobSamples, vertices []autoscaler.Vertex, now time.Time) (autoscaler.Sample, error) {
	sample := autoscaler.Sample{Time: now, Vertices: map[string]autoscaler.VertexSample{}}
	for i := range vertices {
		v := &vertices[i]
		known, err := s.metricsOf(ctx, api, ref, v)
		if err != nil {
			return sample, err
		}
		want := slices.Clone(known.task)
		read, readOK := known.read, known.read != ""
		pending, pendingOK := known.pending, known.pending != ""
		if v.IsSource && readOK {
			want = append(want, read)
		}
		if v.IsSource && pendingOK {
			want = append(want, pending)
		}
		m, err := api.VertexMetrics(ctx, ref.URL, ref.ID, v.ID, want)
		if err != nil {
			return sample, fmt.Errorf("metrics of vertex %s: %w", v.Name, err)
		}
		vs := autoscaler.VertexSample{
			BusyTimeMsPerSecond: finite(m[client.MetricBusyTime].Avg), BackPressuredTimeMsPerSecond: finite(m[client.MetricBackPressuredTime].Avg),
			NumRecordsInPerSecond: finite(m[client.MetricRecordsInPerSecond].Sum), NumRecordsOutPerSecond: finite(m[client.MetricRecordsOutPerSecond].Sum),
		}
		if v.IsSource {
			if readOK {
				vs.NumRecordsInPerSecond = finite(m[read].Sum)
			}
			if got, ok := m[pending]; pendingOK && ok && !math.IsNaN(got.Sum) {
				vs.PendingRecords, vs.PendingKnown = got.Sum, true
			}
			v.Partitions = known.partitions
		}
		sample.Vertices[known.id] = vs
	}
	return sample, nil
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
