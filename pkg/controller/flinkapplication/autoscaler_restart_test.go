package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// restartScaledApp is an autoscaled application whose cluster cannot rescale a running job in
// place: no adaptive scheduler.
func restartScaledApp() *v1beta1.FlinkApplication {
	app := autoscaledApp(v1beta1.AutoscalerApply)
	delete(app.Spec.FlinkConfig, flink.SchedulerKey)
	return app
}

func lastChange(a *v1beta1.FlinkApplication) string {
	if as := a.Status.Autoscaler; as != nil && len(as.Changes) > 0 {
		return as.Changes[len(as.Changes)-1].Kind
	}
	return ""
}

// Without the adaptive scheduler, mode Apply writes its target with Restart first, stops the job
// with a savepoint (upgradeMode Savepoint) and submits a new job on the same cluster from it, each
// vertex at its target; the TaskManagers follow. An operator restarted at any pass carries on.
// What was applied stays in force: a job recovered later runs at it too.
func TestWithoutTheAdaptiveSchedulerTheAutoscalerAppliesByRestartingTheJob(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = bottleneck()
	w.create(restartScaledApp())
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	first := running.Status.JobStatus.JobID
	cluster := running.Status.DeployHash

	sawRestartTarget := false
	app := w.runUntil("wc", "rescaled by a restart", func(a *v1beta1.FlinkApplication) bool {
		if as := a.Status.Autoscaler; as != nil && as.Target != nil {
			sawRestartTarget = sawRestartTarget || as.Target.Restart
			w.restartOperator()
		}
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.Autoscaler != nil && a.Status.Autoscaler.Applied != nil
	})
	assert.True(t, sawRestartTarget, "the target, marked as a restart, is in status before the job is stopped")
	assert.NotEqual(t, first, app.Status.JobStatus.JobID, "a new job")
	assert.Equal(t, cluster, app.Status.DeployHash, "on the same cluster")
	assert.NotEmpty(t, app.Status.JobStatus.RestorePath, "from the savepoint the stop took")
	p := vertexParallelism(w, app)
	assert.GreaterOrEqual(t, p["Map"], 9, "%v", p)
	assert.Equal(t, int32((p["Map"]+1)/2), w.taskManagerReplicas(app, cluster), "two slots each")
	assert.Equal(t, int32(p["Map"]), app.Status.Autoscaler.Applied.Parallelism[vertexID(w, app, "Map")])
	assert.Contains(t, eventReasons(w.events()), "Autoscaled")
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"), "never two jobs at once")

	// A job lost later is submitted again at what the autoscaler applied, not at spec.parallelism.
	w.jm(app, cluster).Restart()
	again := w.runUntil("wc", "recovered", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != app.Status.JobStatus.JobID && a.Status.JobStatus.JobID != ""
	})
	assert.Equal(t, p["Map"], vertexParallelism(w, again)["Map"])
}

// A job that FAILS after the autoscaler rescaled it goes back, with its newest state, to the last
// parallelism that ran stable, whether or not restartFailedJob is set; the autoscaler then holds off.
func TestAScaledJobThatFailsGoesBackWithItsState(t *testing.T) {
	w := newWorld(t)
	scaled, back := rescaleByRestartThenFail(t, w)
	assert.NotEqual(t, scaled.Status.JobStatus.JobID, back.Status.JobStatus.JobID)
	assert.Equal(t, 3, vertexParallelism(w, back)["Map"], "the parallelism that ran stable")
	assert.NotEmpty(t, back.Status.JobStatus.RestorePath, "with state")
	require.NotNil(t, back.Status.Autoscaler.HoldUntil)
	assert.Contains(t, eventReasons(w.events()), "ScalingWentBack")
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

// A restart the autoscaler asked for whose savepoint fails goes on as an update's stop does: the
// job is cancelled and the new one starts from its newest checkpoint (Recovering), at the target.
func TestAnAutoscalerRestartWhoseSavepointFailsStartsFromTheNewestCheckpoint(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = bottleneck()
	w.create(restartScaledApp())
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.jm(running, running.Status.DeployHash).SetFaults(flinksim.Faults{FailSavepoints: true})
	w.runUntilPhase("wc", v1beta1.PhaseSavepointing)
	got := w.runUntil("wc", "rescaled", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.Autoscaler != nil && a.Status.Autoscaler.Applied != nil
	})
	assert.NotEqual(t, running.Status.JobStatus.JobID, got.Status.JobStatus.JobID)
	assert.Contains(t, got.Status.JobStatus.RestorePath, "/chk-", "from the newest checkpoint")
	assert.GreaterOrEqual(t, vertexParallelism(w, got)["Map"], 9)
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

// A job the autoscaler restarted at a new parallelism that fails before it runs stable is started
// again, once, from its newest state at the parallelism that ran stable before.
func TestAJobRestartedAtANewParallelismThatFailsToStartGoesBack(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = bottleneck()
	w.create(restartScaledApp())
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	jm := w.jm(running, running.Status.DeployHash)
	w.runUntilPhase("wc", v1beta1.PhaseSavepointing)
	jm.SetFaults(flinksim.Faults{FailJobsAfter: 2 * time.Second}) // the job submitted at the target fails
	w.runUntil("wc", "going back", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Autoscaler != nil && a.Status.Autoscaler.Target != nil && a.Status.Autoscaler.Target.WayBack
	})
	jm.SetFaults(flinksim.Faults{})
	back := w.runUntil("wc", "gone back", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.Autoscaler.Target == nil && lastChange(a) == "WentBack"
	})
	assert.Equal(t, 3, vertexParallelism(w, back)["Map"])
	assert.NotEmpty(t, back.Status.JobStatus.RestorePath, "with state")
	assert.NotNil(t, back.Status.Autoscaler.HoldUntil)
	assert.Contains(t, eventReasons(w.events()), "ScalingWentBack")
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

// vertexID is the id of the job's vertex with this name.
func vertexID(w *world, app *v1beta1.FlinkApplication, name string) string {
	for _, j := range w.jm(app, app.Status.DeployHash).Jobs() {
		for i, n := range j.VertexNames {
			if n == name {
				return j.VertexIDs[i]
			}
		}
	}
	return ""
}

// playAutoscalerRestartAndWayBack is a crash path: the autoscaler rescales a job by restarting it,
// the rescaled job fails, and it goes back with its state. Wherever the operator dies, one job runs
// at a time, and the job that goes back starts from state.
func playAutoscalerRestartAndWayBack(t *testing.T, w *world) {
	_, back := rescaleByRestartThenFail(t, w)
	assert.Equal(t, 3, vertexParallelism(w, back)["Map"])
	assert.NotEmpty(t, back.Status.JobStatus.RestorePath, "with state")
	w.assertOneJobAtATime(w.events())
}

// rescaleByRestartThenFail runs an application the autoscaler rescales by restarting its job, fails
// the rescaled job, and waits until it went back: the application as rescaled, and as gone back.
func rescaleByRestartThenFail(t *testing.T, w *world) (scaled, back *v1beta1.FlinkApplication) {
	w.loads["wc"] = bottleneck()
	w.create(restartScaledApp())
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	scaled = w.runUntil("wc", "rescaled", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.Autoscaler != nil && a.Status.Autoscaler.Applied != nil
	})
	require.Greater(t, vertexParallelism(w, scaled)["Map"], 3)
	require.True(t, w.jm(scaled, scaled.Status.DeployHash).FailJobNow(scaled.Status.JobStatus.JobID))
	back = w.runUntil("wc", "gone back", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && lastChange(a) == "WentBack" && a.Status.Autoscaler.Target == nil &&
			a.Status.JobStatus.State == v1beta1.JobRunning
	})
	return scaled, back
}
