package autoscaling

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/internal/retained"
)

// A vertex's name reaches status and Events printable and at most maxVertexName bytes, however
// long and whatever it holds.
func TestAVertexNameIsShownPrintableAndBounded(t *testing.T) {
	long := "Calc(select=[" + strings.Repeat("a, ", 2000) + "é])"
	for _, name := range []string{long, "Map\x1b[2J\u202e", "Map\x1b[2J" + long, strings.Repeat("é", 600), "x" + strings.Repeat("é", 600)} {
		shown := ShownVertexName(name)
		assert.LessOrEqual(t, len(shown), maxVertexName)
		assert.True(t, utf8.ValidString(shown))
		assert.False(t, strings.ContainsAny(shown, "\x1b\u202e"), "%q", shown)
	}
	assert.Equal(t, "Source: orders -> Map", ShownVertexName("Source: orders -> Map"))
}

// The samples of a job of as many vertices as the autoscaler tracks, over any window, stay within
// the budget of one object.
func TestTheSamplesOfTheWidestJobStayWithinTheBudget(t *testing.T) {
	s := &JobSamples{metrics: map[string]vertexMetrics{}}
	var ids []string
	for i := range MaxTrackedVertices {
		id := fmt.Sprintf("%032x", i)
		s.metrics[id] = readMetricNames(id, []string{client.MetricBusyTime, "Source__orders." + client.MetricRecordsInPerSecond,
			"Source__orders." + strings.Repeat("x", maxMetricName) + "." + client.MetricPendingRecords})
		ids = append(ids, s.metrics[id].id)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	every := SampleSpacing(30*time.Second, 6*time.Hour, MaxTrackedVertices)
	assert.Equal(t, 6*time.Hour/time.Duration(SamplesKept(MaxTrackedVertices)-1), every, "a six-hour window is sampled less often")
	for i := range 2 * maxSamples {
		sample := autoscaler.Sample{Time: start.Add(time.Duration(i) * every), Vertices: map[string]autoscaler.VertexSample{}}
		for _, id := range ids {
			sample.Vertices[id] = autoscaler.VertexSample{BusyTimeMsPerSecond: 500}
		}
		s.Add(sample, 6*time.Hour+5*time.Minute, SamplesKept(MaxTrackedVertices))
	}
	assert.LessOrEqual(t, len(s.Samples)*MaxTrackedVertices, maxVertexSamples)
	assert.GreaterOrEqual(t, s.Samples[len(s.Samples)-1].Time.Sub(s.Samples[0].Time), 6*time.Hour, "a whole window fits")
	kept := retained.Bytes(s)
	t.Logf("the widest job's samples keep %d bytes", kept)
	assert.Less(t, kept, 2<<20)
}

// Vertex ids come from the JobManager too, and key the vertices in samples, in status and in
// metrics: a job whose ids are not Flink's, or repeat, is not autoscaled, and says why.
func TestAJobWhoseVertexIdsAreNotFlinksIsNotAutoscaled(t *testing.T) {
	id := strings.Repeat("ab", 16)
	for ids, why := range map[[2]string]string{
		{id, strings.Repeat("x", 1<<20)}:     "which is no Flink vertex id",
		{id, "\x1b[2J" + id[5:]}:             "which is no Flink vertex id",
		{id, id}:                             "two vertices of the job have the id " + id,
		{id, strings.ToUpper(id[:31]) + "c"}: "",
	} {
		d := &client.JobDetails{Vertices: []client.JobVertex{{ID: ids[0], Name: "Source", Parallelism: 1}, {ID: ids[1], Name: "Sink", Parallelism: 1}}}
		vertices, over := TrackedVertices(d)
		if why == "" {
			assert.Empty(t, over)
			assert.Len(t, vertices, 2)
			continue
		}
		assert.Contains(t, over, why)
		assert.Less(t, len(over), 300, "the reason quotes a bounded, printable id")
		assert.NotContains(t, over, "\x1b")
	}
}

// A source vertex that chains operators after its source lists each one's records in and out: what
// the source read is its own operator's, and what it emitted is that operator's too.
func TestASourceVertexReadsItsSourceOperatorsRecords(t *testing.T) {
	m := readMetricNames("v", []string{"Map.numRecordsInPerSecond", "Map.numRecordsOutPerSecond", client.MetricBusyTime,
		"Source__sequence.numRecordsInPerSecond", "Source__sequence.numRecordsOutPerSecond"})
	assert.Equal(t, "Source__sequence.numRecordsInPerSecond", m.read)
	assert.Equal(t, "Source__sequence.numRecordsOutPerSecond", m.emitted)

	m = readMetricNames("v", []string{"Source__sequence.numRecordsInPerSecond"})
	assert.Equal(t, "Source__sequence.numRecordsInPerSecond", m.read)
	assert.Empty(t, m.emitted, "an operator that lists no records emitted")
}

// What a source emitted is kept under a name no longer than maxMetricName, as every name kept is:
// "Out" is a byte longer than "In".
func TestTheNameOfWhatASourceEmittedStaysWithinTheBound(t *testing.T) {
	read := "Source__" + strings.Repeat("x", maxMetricName-len("Source__.")-len(client.MetricRecordsInPerSecond)) + "." + client.MetricRecordsInPerSecond
	out := strings.TrimSuffix(read, client.MetricRecordsInPerSecond) + client.MetricRecordsOutPerSecond
	m := readMetricNames("v", []string{read, out})
	assert.Equal(t, read, m.read)
	assert.LessOrEqual(t, len(m.emitted), maxMetricName)
}
