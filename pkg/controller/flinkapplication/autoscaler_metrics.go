package flinkapplication

import (
	"sync"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
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
	// reading is the sample being read, over as many passes as it takes (autoscaler_sampling.go);
	// nil between samples.
	reading *autoscaler.Sample
	// load is each vertex's load over the scale-down delay (autoscaler.History.Load).
	load map[string]autoscaler.LoadRecord
	// vertexIDs are the vertices the memory is of (keepToVertices).
	vertexIDs map[string]bool
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
