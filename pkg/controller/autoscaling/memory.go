package autoscaling

import (
	"sync"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
)

// The autoscaler reads each vertex's metrics every sampleInterval and keeps the samples of the
// last window in the operator's memory, bounded per job (budget.go) and dropped with the
// job or the object. A restarted operator starts with none: it collects a full window before it
// decides.

// Memory is what the autoscaler keeps of each object between passes.
type Memory struct {
	mu      sync.Mutex
	objects map[string]*JobSamples
}

// JobSamples are the samples of one object's running job.
type JobSamples struct {
	jobID string
	// metrics are what the samples need of each vertex's metric names, by vertex id, read once per
	// job (readMetricNames).
	metrics map[string]vertexMetrics
	Samples []autoscaler.Sample
	Last    time.Time
	// Reading is the sample being read, over as many passes as it takes (sampling.go);
	// nil between samples.
	Reading *autoscaler.Sample
	// Load is each vertex's load over the scale-down delay (autoscaler.History.Load).
	Load map[string]autoscaler.LoadRecord
	// vertexIDs are the vertices the memory is of (keepToVertices).
	vertexIDs map[string]bool
}

// Of is the memory of the object's job, emptied when the job is another.
func (m *Memory) Of(key, jobID string) *JobSamples {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.objects == nil {
		m.objects = map[string]*JobSamples{}
	}
	s := m.objects[key]
	if s == nil || s.jobID != jobID {
		s = &JobSamples{jobID: jobID, metrics: map[string]vertexMetrics{}}
		m.objects[key] = s
	}
	return s
}

// Rescaled starts the object's samples again for the job that runs after a rescale, the same job
// in place or the one a restart submitted, and keeps the record of its vertices' load, which does
// not depend on the parallelism: a vertex's scale-down delay does not start over because the job
// was rescaled.
func (m *Memory) Rescaled(key, jobID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := &JobSamples{jobID: jobID, metrics: map[string]vertexMetrics{}}
	if old := m.objects[key]; old != nil {
		s.Load = old.Load
	}
	if m.objects == nil {
		m.objects = map[string]*JobSamples{}
	}
	m.objects[key] = s
}

// Forget drops what is kept of an object.
func (m *Memory) Forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, key)
}

// Add keeps a sample and drops those older than keep, and more than kept.
func (s *JobSamples) Add(sample autoscaler.Sample, keep time.Duration, kept int) {
	s.Samples = append(s.Samples, sample)
	s.Last = sample.Time
	cut := 0
	for cut < len(s.Samples) && sample.Time.Sub(s.Samples[cut].Time) > keep {
		cut++
	}
	cut = max(cut, len(s.Samples)-kept)
	s.Samples = append([]autoscaler.Sample(nil), s.Samples[cut:]...)
}

// Keeps tells whether anything is kept of the object with this key.
func (m *Memory) Keeps(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.objects[key]
	return ok
}
