package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// bottleneck is a job whose map cannot keep up with its input at parallelism 3.
func bottleneck() flinksim.Load {
	return flinksim.Load{
		Vertices: []flinksim.LoadVertex{
			{Name: "Source: orders", Capacity: 5000, Partitions: 12, PendingRecords: true},
			{Name: "Map", Capacity: 100},
			{Name: "Sink: store", Capacity: 5000},
		},
		Input: flinksim.Constant(600),
	}
}

func autoscaledApp(mode v1beta1.AutoscalerMode) *v1beta1.FlinkApplication {
	app := wordcount("wc")
	app.Spec.FlinkConfig[flink.SchedulerKey] = "adaptive"
	app.Spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: mode, StabilizationInterval: &metav1.Duration{Duration: time.Minute},
		MetricsWindow: &metav1.Duration{Duration: 3 * time.Minute}}
	return app
}

func vertexParallelism(w *world, app *v1beta1.FlinkApplication) map[string]int {
	for _, j := range w.jm(app, app.Status.DeployHash).Jobs() {
		if j.ID != app.Status.JobStatus.JobID {
			continue
		}
		out := map[string]int{}
		for i, name := range j.VertexNames {
			out[name] = j.VertexParallelism[i]
		}
		return out
	}
	require.Failf(w.t, "no job", "job %s is not on cluster %s", app.Status.JobStatus.JobID, app.Status.DeployHash)
	return nil
}

// In mode Apply a decision is written to status as the target before anything is sent, then the
// job is rescaled in place (the same job, its state kept) with the TaskManagers its widest vertex
// needs; an operator restarted between any two passes while it applies carries on with the same
// target.
func TestTheAutoscalerRescalesTheJobInPlace(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = bottleneck()
	w.create(autoscaledApp(v1beta1.AutoscalerApply))
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	jobID := running.Status.JobStatus.JobID

	sawTarget := false
	app := w.runUntil("wc", "rescaled", func(a *v1beta1.FlinkApplication) bool {
		if as := a.Status.Autoscaler; as != nil && as.Target != nil {
			sawTarget = true
			// The samples are in memory and a restart drops them, so restarts come once there is a
			// target: the target itself is carried through.
			w.restartOperator()
		}
		return a.Status.Autoscaler != nil && len(a.Status.Autoscaler.Changes) > 0 && a.Status.Autoscaler.Target == nil
	})
	assert.True(t, sawTarget, "the target is in status before it is applied")
	assert.Equal(t, jobID, app.Status.JobStatus.JobID, "the same job")
	p := vertexParallelism(w, app)
	assert.GreaterOrEqual(t, p["Map"], 9, "600/s at 100/s a subtask and 70%%: %v", p)
	assert.Equal(t, "Scaled", app.Status.Autoscaler.Changes[len(app.Status.Autoscaler.Changes)-1].Kind)
	assert.Equal(t, int32((p["Map"]+1)/2), w.taskManagerReplicas(app, app.Status.DeployHash), "two slots each")
	assert.Contains(t, eventReasons(w.events()), "Autoscaled")
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

// The adaptive scheduler rescales a job through RESTARTING, which is not a failure: the job's
// health is never Red for it and no Event says it restarts.
func TestARescaleInPlaceIsNotAFailure(t *testing.T) {
	w := newWorld(t)
	w.timings.Cancel = 30 * time.Second // long enough for passes to see the job RESTARTING
	w.loads["wc"] = bottleneck()
	w.create(autoscaledApp(v1beta1.AutoscalerApply))
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	jm := w.jm(running, running.Status.DeployHash)
	seen := false
	w.runUntil("wc", "observed while it rescales", func(a *v1beta1.FlinkApplication) bool {
		if a.Status.JobStatus.State == v1beta1.JobRestarting {
			seen = true
			// Yellow while its tasks are not all running, never Red: a rescale in place is not a failure.
			assert.NotEqual(t, v1beta1.Red, a.Status.JobStatus.Health)
		}
		if js := jm.Jobs(); len(js) == 1 && js[0].State == "RESTARTING" {
			w.reconcile("wc") // the pass that sees it
		}
		return seen && a.Status.Autoscaler != nil && a.Status.Autoscaler.Target == nil
	})
	for _, e := range w.events() {
		assert.NotContains(t, e, "JobRestarting")
	}
}

// Before Flink 1.17, which takes no parallelism per vertex at submission, mode Apply recommends
// without the adaptive scheduler, and says why.
func TestTheAutoscalerRecommendsWhereItCannotApply(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = bottleneck()
	app := autoscaledApp(v1beta1.AutoscalerApply)
	delete(app.Spec.FlinkConfig, flink.SchedulerKey)
	app.Spec.FlinkVersion = "1.16"
	w.create(app)
	w.runUntil("wc", "a recommendation", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Autoscaler != nil && a.Status.Autoscaler.Reason != "" && a.Status.Autoscaler.Vertices != nil &&
			a.Status.Autoscaler.Vertices[1].Recommended > 3
	})
	got := w.get("wc")
	assert.Nil(t, got.Status.Autoscaler.Target)
	assert.Contains(t, got.Status.Autoscaler.Reason, "recommends")
	assert.Equal(t, 3, vertexParallelism(w, got)["Map"])
}

// A rescale that does not run within readinessTimeout (here: the cluster has no room for the
// TaskManagers it needs) goes back to the last parallelism that ran stable, in place, and the
// autoscaler holds off for its cool-down.
func TestAScaledJobThatDoesNotRunInTimeGoesBack(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = bottleneck()
	w.taskManagerCap["wc"] = 2 // no room for more: the rescale never gets the slots it asks for
	w.create(autoscaledApp(v1beta1.AutoscalerApply))
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	got := w.runUntil("wc", "gone back", func(a *v1beta1.FlinkApplication) bool {
		as := a.Status.Autoscaler
		return as != nil && as.Target == nil && len(as.Changes) > 0 && as.Changes[len(as.Changes)-1].Kind == "WentBack"
	})
	require.NotNil(t, got.Status.Autoscaler.HoldUntil, "a cool-down")
	assert.True(t, got.Status.Autoscaler.HoldUntil.After(w.clock.Now().Add(30*time.Minute)))
	assert.Equal(t, 3, vertexParallelism(w, got)["Map"], "back at the parallelism that ran stable")
	assert.Equal(t, "Map", got.Status.Autoscaler.Vertices[1].Name, "vertices are named as Flink names them")
	assert.Equal(t, running.Status.JobStatus.JobID, got.Status.JobStatus.JobID, "in place, the same job")
	for i := 0; i < 40; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Nil(t, w.get("wc").Status.Autoscaler.Target, "nothing during the cool-down")
}
