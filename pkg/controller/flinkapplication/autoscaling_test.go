package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// statusWrites counts the writes the operator sent to FlinkApplications' status.
func (w *world) statusWrites() int {
	n := 0
	for _, a := range w.apps.Actions() {
		if a.GetResource().Resource == "flinkapplications" && a.GetSubresource() == "status" {
			if _, ok := a.(k8stesting.PatchAction); ok {
				n++
			} else if _, ok := a.(k8stesting.UpdateAction); ok {
				n++
			}
		}
	}
	return n
}

// recommendedAfter20Minutes reconciles the application for twenty minutes and returns what
// status.autoscaler shows, with its vertices by name.
func recommendedAfter20Minutes(t *testing.T, w *world, name string) (*v1beta1.AutoscalerStatus, map[string]v1beta1.VertexScaling) {
	t.Helper()
	for end := w.clock.Now().Add(20 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile(name)
	}
	st := w.get(name).Status.Autoscaler
	require.NotNil(t, st)
	byName := map[string]v1beta1.VertexScaling{}
	for _, v := range st.Vertices {
		byName[v.Name] = v
	}
	return st, byName
}

// A job whose map cannot keep up: in Recommend mode the autoscaler reads the vertices' metrics for a
// window, then recommends more subtasks for the map, in status and a ScalingReport Event, and
// changes nothing. Its backlog grows, and the recommendation with it.
func TestTheAutoscalerRecommendsFromTheJobsMetrics(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = flinksim.Load{
		Vertices: []flinksim.LoadVertex{
			{Name: "Source: orders", Capacity: 2000, Partitions: 8, PendingRecords: true},
			{Name: "Map", Capacity: 200},
			{Name: "Sink: store", Capacity: 5000},
		},
		Input: flinksim.Constant(900),
	}
	app := wordcount("wc")
	app.Spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerRecommend}
	w.create(app)
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	jm := w.jm(running, running.Status.DeployHash)

	st, byName := recommendedAfter20Minutes(t, w, "wc")
	require.Contains(t, byName, "Map", "vertices %+v, reason %q", st.Vertices, st.Reason)
	assert.Equal(t, int32(3), byName["Map"].Current)
	// 900 records a second at 200 a subtask and 70% utilisation is 7 subtasks, and more to work
	// off the backlog that grows meanwhile.
	assert.Greater(t, byName["Map"].Recommended, int32(7))
	assert.Contains(t, st.Reason, "Map 3→", st.Reason)
	assert.True(t, strings.HasPrefix(st.Reason, "recommends "), st.Reason)
	assert.NotEmpty(t, st.Changes)
	assert.Contains(t, eventReasons(w.events()), "ScalingReport")
	jobs := jm.Jobs()
	require.Len(t, jobs, 1)
	assert.Equal(t, running.Status.JobStatus.JobID, jobs[0].ID, "recommending changes nothing")
}

// A source that does not count what it reads (on real Flink, any whose reader does not extend
// SourceReaderBase: NumberSequenceSource, DataGeneratorSource, a job's own) reports 0 records read
// per second; what it read is what its operator emitted. The autoscaler reads that, and recommends
// more subtasks for the map it cannot keep up with, not fewer for every vertex.
func TestTheAutoscalerReadsWhatASourceEmittedWhenItCountsNoReads(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = flinksim.Load{
		Vertices: []flinksim.LoadVertex{
			{Name: "Source: sequence", Capacity: 5000, UncountedReads: true},
			{Name: "Map", Capacity: 200},
			{Name: "Sink: store", Capacity: 5000},
		},
		Input: flinksim.Constant(900),
	}
	app := wordcount("wc")
	app.Spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerRecommend}
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	st, byName := recommendedAfter20Minutes(t, w, "wc")
	require.Contains(t, byName, "Map", "vertices %+v, reason %q", st.Vertices, st.Reason)
	// The map takes 3 × 200 of the 900 a second that arrive: backpressured, the source reads no
	// more than that, and the map is busy all the time.
	assert.Greater(t, byName["Map"].Recommended, byName["Map"].Current, "vertices %+v, reason %q", st.Vertices, st.Reason)
	assert.Contains(t, st.Reason, "Map 3→", st.Reason)
}

// autoscaledWrites runs a job the cluster keeps up with for forty minutes and counts the status
// writes of the last twenty, after the autoscaler's first decision.
func autoscaledWrites(t *testing.T, mode v1beta1.AutoscalerMode) (int, *v1beta1.AutoscalerStatus) {
	w := newWorld(t)
	w.loads["wc"] = flinksim.Load{Vertices: []flinksim.LoadVertex{{Name: "Source", Capacity: 1000}, {Name: "Sink", Capacity: 1000}},
		Input: flinksim.Constant(2000), Noise: 0.05, Seed: 1}
	app := wordcount("wc")
	app.Spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: mode}
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	for end := w.clock.Now().Add(20 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	before := w.statusWrites()
	for end := w.clock.Now().Add(20 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	return w.statusWrites() - before, w.get("wc").Status.Autoscaler
}

// An autoscaled job whose load the autoscaler finds right costs no more status writes than one
// without the autoscaler: the rates of each sample are never written.
func TestTheAutoscalerWritesNothingWhileItsRecommendationHolds(t *testing.T) {
	off, _ := autoscaledWrites(t, v1beta1.AutoscalerOff)
	on, st := autoscaledWrites(t, v1beta1.AutoscalerRecommend)
	require.NotNil(t, st)
	assert.Equal(t, "every vertex keeps its parallelism", st.Reason)
	assert.Equal(t, off, on)
}

// Turning the autoscaler off clears what it showed.
func TestTurningTheAutoscalerOffClearsItsStatus(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = flinksim.Load{Vertices: []flinksim.LoadVertex{{Name: "Source", Capacity: 1000}, {Name: "Sink", Capacity: 1000}},
		Input: flinksim.Constant(100)}
	app := wordcount("wc")
	app.Spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerRecommend}
	w.create(app)
	w.runUntil("wc", "autoscaler status", func(a *v1beta1.FlinkApplication) bool { return a.Status.Autoscaler != nil })
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Autoscaler.Mode = v1beta1.AutoscalerOff })
	w.runUntil("wc", "autoscaler status cleared", func(a *v1beta1.FlinkApplication) bool { return a.Status.Autoscaler == nil })
}
