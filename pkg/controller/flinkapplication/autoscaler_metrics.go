package flinkapplication

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// The autoscaler reads each vertex's metrics every sampleInterval and keeps the samples of the
// last window in the operator's memory, bounded per job (maxSamples) and dropped with the job or
// the object. A restarted operator starts with none: it collects a full window before it decides.

// maxSamples bounds the samples kept of one job, whatever its window and sample interval.
const maxSamples = 720

// autoscalerMemory is what the autoscaler keeps of each object between passes.
type autoscalerMemory struct {
	mu      sync.Mutex
	objects map[string]*jobSamples
}

// jobSamples are the samples of one object's running job.
type jobSamples struct {
	jobID   string
	names   map[string][]string // metric names by vertex id, read once per job
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
		s = &jobSamples{jobID: jobID, names: map[string][]string{}}
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
	s := &jobSamples{jobID: jobID, names: map[string][]string{}}
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

// add keeps a sample and drops those older than keep, and more than maxSamples.
func (s *jobSamples) add(sample autoscaler.Sample, keep time.Duration) {
	s.samples = append(s.samples, sample)
	s.last = sample.Time
	cut := 0
	for cut < len(s.samples) && sample.Time.Sub(s.samples[cut].Time) > keep {
		cut++
	}
	cut = max(cut, len(s.samples)-maxSamples)
	s.samples = append([]autoscaler.Sample(nil), s.samples[cut:]...)
}

// vertexPlan is the job's vertices as the autoscaler sees them, from its details.
func vertexPlan(d *client.JobDetails) []autoscaler.Vertex {
	upstream := d.Upstream()
	var out []autoscaler.Vertex
	for _, v := range d.Vertices {
		out = append(out, autoscaler.Vertex{ID: v.ID, Name: v.Name, Parallelism: int(v.Parallelism),
			MaxParallelism: int(v.MaxParallelism), IsSource: len(upstream[v.ID]) == 0, Upstream: upstream[v.ID]})
	}
	return out
}

// sampleVertices reads one sample of every vertex's metrics, and each source's partitions into
// vertices. A source's records in are what its operator read: its task takes in none from the
// network.
func sampleVertices(ctx context.Context, api client.API, ref jobs.Ref, s *jobSamples, vertices []autoscaler.Vertex, now time.Time) (autoscaler.Sample, error) {
	sample := autoscaler.Sample{Time: now, Vertices: map[string]autoscaler.VertexSample{}}
	for i := range vertices {
		v := &vertices[i]
		names, ok := s.names[v.ID]
		if !ok {
			var err error
			if names, err = api.VertexMetricNames(ctx, ref.URL, ref.ID, v.ID); err != nil {
				return sample, fmt.Errorf("metric names of vertex %s: %w", v.Name, err)
			}
			s.names[v.ID] = names
		}
		want := []string{client.MetricBusyTime, client.MetricBackPressuredTime, client.MetricRecordsInPerSecond, client.MetricRecordsOutPerSecond}
		read, readOK := client.OperatorMetricName(names, client.MetricRecordsInPerSecond)
		pending, pendingOK := client.OperatorMetricName(names, client.MetricPendingRecords)
		if v.IsSource && readOK {
			want = append(want, read)
		}
		if v.IsSource && pendingOK {
			want = append(want, pending)
		}
		m, err := api.VertexMetrics(ctx, ref.URL, ref.ID, v.ID, present(want, names))
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
			v.Partitions = client.SourcePartitions(names)
		}
		sample.Vertices[v.ID] = vs
	}
	return sample, nil
}

// present keeps the names the vertex reports: Flink answers nothing at all when one asked for is
// unknown.
func present(want, names []string) []string {
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	var out []string
	for _, w := range want {
		if known[w] {
			out = append(out, w)
		}
	}
	return out
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
