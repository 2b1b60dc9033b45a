package flinkapplication

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// A JobManager runs the tenant's image, and its vertices may list megabytes of metric names (a job
// that registers its own counters, or an image built to cost the operator). The autoscaler reads
// what it needs of them and keeps nothing more: what it keeps of the object stays small, and it
// still decides.
func TestTheAutoscalerKeepsNotTheMetricNamesAJobManagerLists(t *testing.T) {
	w := newWorld(t)
	var vertices []flinksim.LoadVertex
	for _, name := range []string{"Source: orders", "Parse", "Enrich", "Sink: store"} {
		// About 1.4 MiB of names per vertex, within what one answer may be (2 MiB).
		vertices = append(vertices, flinksim.LoadVertex{Name: name, Capacity: 1000, UserMetrics: 1400, UserMetricNameBytes: 1024})
	}
	w.loads["wc"] = flinksim.Load{Vertices: vertices, Input: flinksim.Constant(2000)}
	app := wordcount("wc")
	app.Spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerRecommend}
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	for end := w.clock.Now().Add(16 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	st := w.get("wc").Status.Autoscaler
	require.NotNil(t, st)
	assert.Len(t, st.Vertices, 4, st.Reason)
	assert.Equal(t, "every vertex keeps its parallelism", st.Reason)
	// A window's samples of four vertices, and what is read of their names: a few KiB.
	kept := retainedBytes(&w.env.autoscaling)
	t.Logf("the autoscaler keeps %d bytes of the job", kept)
	assert.Less(t, kept, 64<<10, "bytes the autoscaler keeps of one four-vertex job")
}

// A job of more vertices than the autoscaler tracks stops its own autoscaler, with the reason in
// status and one Warning Event, and keeps nothing of its samples; an application beside it is
// autoscaled as before.
func TestAJobOfMoreVerticesThanTheAutoscalerTracksStopsOnlyItsAutoscaler(t *testing.T) {
	w := newWorld(t)
	var wide []flinksim.LoadVertex
	for i := range maxTrackedVertices + 1 {
		// Names repeat, as in real jobs (many a vertex is "Map"), and some are long and hostile.
		name := "Map"
		if i%50 == 7 {
			name = "Calc(select=[\x1b[2J" + strings.Repeat("a, ", 2000) + "])"
		}
		wide = append(wide, flinksim.LoadVertex{Name: name, Capacity: 1000})
	}
	w.loads["wide"] = flinksim.Load{Vertices: wide, Input: flinksim.Constant(2000)}
	w.loads["wc"] = flinksim.Load{Vertices: []flinksim.LoadVertex{{Name: "Source", Capacity: 1000}, {Name: "Sink", Capacity: 1000}},
		Input: flinksim.Constant(2000)}
	for _, name := range []string{"wide", "wc"} {
		app := wordcount(name)
		app.Spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerRecommend}
		w.create(app)
		w.runUntilPhase(name, v1beta1.PhaseRunning)
	}
	var events []string
	for end := w.clock.Now().Add(16 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wide")
		_, _ = w.reconcile("wc")
		events = append(events, w.events()...)
	}
	st := w.get("wide").Status.Autoscaler
	require.NotNil(t, st)
	assert.Empty(t, st.Vertices)
	assert.Contains(t, st.Reason, "201 vertices, more than the 200")
	stopped := 0
	for _, e := range events {
		if strings.HasPrefix(e, "Warning AutoscalerStopped ") {
			stopped++
		}
	}
	assert.Equal(t, 1, stopped, "one Warning Event")
	w.env.autoscaling.mu.Lock()
	_, kept := w.env.autoscaling.objects[objectKey(applicationKindName, &w.get("wide").ObjectMeta)]
	w.env.autoscaling.mu.Unlock()
	assert.False(t, kept, "nothing is kept of a job the autoscaler does not track")

	beside := w.get("wc").Status.Autoscaler
	require.NotNil(t, beside)
	assert.Equal(t, "every vertex keeps its parallelism", beside.Reason)
	assert.Len(t, beside.Vertices, 2)
}

// A vertex's name reaches status and Events printable and at most maxVertexName bytes, however
// long and whatever it holds.
func TestAVertexNameIsShownPrintableAndBounded(t *testing.T) {
	long := "Calc(select=[" + strings.Repeat("a, ", 2000) + "é])"
	for _, name := range []string{long, "Map\x1b[2J\u202e", "Map\x1b[2J" + long, strings.Repeat("é", 600), "x" + strings.Repeat("é", 600)} {
		shown := shownVertexName(name)
		assert.LessOrEqual(t, len(shown), maxVertexName)
		assert.True(t, utf8.ValidString(shown))
		assert.False(t, strings.ContainsAny(shown, "\x1b\u202e"), "%q", shown)
	}
	assert.Equal(t, "Source: orders -> Map", shownVertexName("Source: orders -> Map"))
}

// The samples of a job of as many vertices as the autoscaler tracks, over any window, stay within
// the budget of one object.
func TestTheSamplesOfTheWidestJobStayWithinTheBudget(t *testing.T) {
	s := &jobSamples{metrics: map[string]vertexMetrics{}}
	var ids []string
	for i := range maxTrackedVertices {
		id := fmt.Sprintf("%032x", i)
		s.metrics[id] = readMetricNames(id, []string{client.MetricBusyTime, "Source__orders." + client.MetricRecordsInPerSecond,
			"Source__orders." + strings.Repeat("x", maxMetricName) + "." + client.MetricPendingRecords})
		ids = append(ids, s.metrics[id].id)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	every := sampleSpacing(30*time.Second, 6*time.Hour, maxTrackedVertices)
	assert.Equal(t, 6*time.Hour/time.Duration(samplesKept(maxTrackedVertices)-1), every, "a six-hour window is sampled less often")
	for i := range 2 * maxSamples {
		sample := autoscaler.Sample{Time: start.Add(time.Duration(i) * every), Vertices: map[string]autoscaler.VertexSample{}}
		for _, id := range ids {
			sample.Vertices[id] = autoscaler.VertexSample{BusyTimeMsPerSecond: 500}
		}
		s.add(sample, 6*time.Hour+5*time.Minute, samplesKept(maxTrackedVertices))
	}
	assert.LessOrEqual(t, len(s.samples)*maxTrackedVertices, maxVertexSamples)
	assert.GreaterOrEqual(t, s.samples[len(s.samples)-1].Time.Sub(s.samples[0].Time), 6*time.Hour, "a whole window fits")
	kept := retainedBytes(s)
	t.Logf("the widest job's samples keep %d bytes", kept)
	assert.Less(t, kept, 2<<20)
}

// retainedBytes is about how much memory v holds: every string, slice and map it reaches, each
// counted once.
func retainedBytes(v any) int {
	seen := map[uintptr]bool{}
	var walk func(reflect.Value) int
	walk = func(v reflect.Value) int {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return 0
			}
			seen[v.Pointer()] = true
			return int(v.Type().Elem().Size()) + walk(v.Elem())
		case reflect.Interface:
			if v.IsNil() {
				return 0
			}
			return walk(v.Elem())
		case reflect.String:
			return v.Len()
		case reflect.Struct:
			n := 0
			for i := range v.NumField() {
				n += walk(v.Field(i))
			}
			return n
		case reflect.Slice:
			if v.IsNil() || seen[v.Pointer()] {
				return 0
			}
			seen[v.Pointer()] = true
			n := v.Cap() * int(v.Type().Elem().Size())
			for i := range v.Len() {
				n += walk(v.Index(i))
			}
			return n
		case reflect.Array:
			n := 0
			for i := range v.Len() {
				n += walk(v.Index(i))
			}
			return n
		case reflect.Map:
			if v.IsNil() || seen[v.Pointer()] {
				return 0
			}
			seen[v.Pointer()] = true
			n := v.Len() * int(v.Type().Key().Size()+v.Type().Elem().Size())
			for it := v.MapRange(); it.Next(); {
				n += walk(it.Key()) + walk(it.Value())
			}
			return n
		}
		return 0
	}
	return walk(reflect.ValueOf(v))
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
		vertices, over := trackedVertices(d)
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
