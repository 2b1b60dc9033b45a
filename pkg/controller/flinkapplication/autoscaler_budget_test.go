package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaling"
	"github.com/flinkfsm/flinkfsm/pkg/internal/retained"
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
	kept := retained.Bytes(&w.env.scaling)
	t.Logf("the autoscaler keeps %d bytes of the job", kept)
	assert.Less(t, kept, 64<<10, "bytes the autoscaler keeps of one four-vertex job")
}

// A job of more vertices than the autoscaler tracks stops its own autoscaler, with the reason in
// status and one Warning Event, and keeps nothing of its samples; an application beside it is
// autoscaled as before.
func TestAJobOfMoreVerticesThanTheAutoscalerTracksStopsOnlyItsAutoscaler(t *testing.T) {
	w := newWorld(t)
	var wide []flinksim.LoadVertex
	for i := range autoscaling.MaxTrackedVertices + 1 {
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
	kept := w.env.scaling.Keeps(objectKey(applicationKindName, &w.get("wide").ObjectMeta))
	assert.False(t, kept, "nothing is kept of a job the autoscaler does not track")

	beside := w.get("wc").Status.Autoscaler
	require.NotNil(t, beside)
	assert.Equal(t, "every vertex keeps its parallelism", beside.Reason)
	assert.Len(t, beside.Vertices, 2)
}
