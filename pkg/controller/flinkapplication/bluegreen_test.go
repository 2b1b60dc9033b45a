package flinkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

func blueGreenSpec(s *v1beta1.FlinkApplicationSpec) {
	s.DeploymentMode = v1beta1.DeploymentModeBlueGreen
}

// dualRunningAfterUpdate runs a BlueGreen application, changes its image and waits for both
// versions to run.
func dualRunningAfterUpdate(t *testing.T, w *world) (old, dual *v1beta1.FlinkApplication) {
	t.Helper()
	old = runningWith(t, w, "wc", blueGreenSpec)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	dual = w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
	return old, dual
}

// assertAtMostTwoJobs checks BlueGreen's invariant: the two designated versions may run at once,
// never a third job.
func (w *world) assertAtMostTwoJobs(events []string) {
	w.t.Helper()
	assert.LessOrEqual(w.t, w.timeline.MostAlive(ns+"/wc"), 2, "never three live jobs")
	assert.NotContains(w.t, eventReasons(events), "InvalidTransition")
}

// Lyft's blue/green scenario: the first version is green; an update starts blue beside it from a
// savepoint taken without cancelling green, and both run; tearing down green's hash leaves blue
// deployed; deleting stops blue with a final savepoint.
func TestBlueGreenUpdateRunsBothVersionsUntilOneIsTornDown(t *testing.T) {
	w := newWorld(t)
	old, dual := dualRunningAfterUpdate(t, w)
	assert.Equal(t, v1beta1.GreenFlinkApplication, old.Status.DeployVersion)

	st := dual.Status
	assert.Equal(t, v1beta1.GreenFlinkApplication, st.DeployVersion)
	assert.Equal(t, v1beta1.BlueFlinkApplication, st.UpdatingVersion)
	assert.Equal(t, old.Status.DeployHash, st.DeployHash, "deployHash stays the old version's")
	assert.Equal(t, flink.ClusterHash(dual), st.UpdatingHash)
	require.Len(t, st.VersionStatuses, 2)
	assert.Equal(t, v1beta1.GreenFlinkApplication, st.VersionStatuses[0].Version)
	assert.Equal(t, v1beta1.BlueFlinkApplication, st.VersionStatuses[1].Version)
	assert.Equal(t, v1beta1.JobRunning, st.VersionStatuses[1].JobStatus.State)
	assert.Equal(t, old.Status.JobStatus.JobID, st.JobStatus.JobID, "the top-level job is the deployed version's")

	oldJobs := w.jm(old, old.Status.DeployHash).Jobs()
	require.Len(t, oldJobs, 1)
	assert.Equal(t, "RUNNING", oldJobs[0].State, "the deployed job is never cancelled")
	newJobs := w.jm(dual, st.UpdatingHash).Jobs()
	require.Len(t, newJobs, 1)
	assert.Contains(t, newJobs[0].RestoredFrom, "savepoint-")
	assert.Equal(t, 1, savepointsTaken(w))

	// Per-version objects: the colour's Service and label, and the colour in the environment.
	ctx := context.Background()
	for _, v := range []struct {
		version v1beta1.FlinkApplicationVersion
		hash    string
	}{{v1beta1.GreenFlinkApplication, st.DeployHash}, {v1beta1.BlueFlinkApplication, st.UpdatingHash}} {
		svc, err := w.kube.CoreV1().Services(ns).Get(ctx, "wc-"+string(v.version), metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, v.hash, svc.Spec.Selector[flink.HashLabel])
		jm, err := w.kube.AppsV1().Deployments(ns).Get(ctx, flink.JobManagerName(dual, v.hash), metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, string(v.version), jm.Spec.Template.Labels[flink.VersionLabel])
		assert.Contains(t, jm.Spec.Template.Spec.Containers[0].Env, envVar(flink.VersionEnv, string(v.version)))
	}
	generic, err := w.kube.CoreV1().Services(ns).Get(ctx, "wc", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, st.DeployHash, generic.Spec.Selector[flink.HashLabel], "the application's Service stays on the deployed version")

	// Promote blue by tearing down green.
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.TearDownVersionHash = old.Status.DeployHash })
	app := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	assert.Equal(t, v1beta1.BlueFlinkApplication, app.Status.DeployVersion)
	assert.Empty(t, app.Status.UpdatingVersion)
	assert.Equal(t, st.UpdatingHash, app.Status.DeployHash)
	assert.Equal(t, old.Status.DeployHash, app.Status.TeardownHash)
	assert.Equal(t, v1beta1.FlinkApplicationVersionStatus{}, app.Status.VersionStatuses[1])
	assert.Equal(t, newJobs[0].ID, app.Status.JobStatus.JobID)
	assert.Equal(t, newJobs[0].RestoredFrom, app.Status.JobStatus.RestorePath, "the job status is the promoted version's")
	require.NotNil(t, app.Status.LastTeardown)
	assert.Contains(t, app.Status.LastTeardown.SavepointPath, "savepoint-", "green's state is recorded")
	assert.False(t, w.clusterExists(old, old.Status.DeployHash), "green's cluster is gone")
	_, err = w.kube.CoreV1().Services(ns).Get(ctx, "wc-green", metav1.GetOptions{})
	assert.Error(t, err, "green's Service is gone")
	generic, err = w.kube.CoreV1().Services(ns).Get(ctx, "wc", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, app.Status.DeployHash, generic.Spec.Selector[flink.HashLabel], "the application's Service moved at promotion")
	w.passes("wc", 5)
	assert.Equal(t, v1beta1.PhaseRunning, w.get("wc").Status.Phase, "the spec is deployed; nothing starts again")

	w.deleteApp("wc")
	gone := w.runUntil("wc", "finalized", finalized)
	assert.Contains(t, gone.Status.FinalSavepointPath, "savepoint-")
	w.assertAtMostTwoJobs(w.events())
}

func envVar(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// Tearing down the new version keeps the deployed one, and the spec that was torn down is not
// deployed again until the spec changes.
func TestBlueGreenTearingDownTheNewVersionKeepsTheDeployedOne(t *testing.T) {
	w := newWorld(t)
	old, dual := dualRunningAfterUpdate(t, w)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.TearDownVersionHash = dual.Status.UpdatingHash })
	app := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.passes("wc", 10)
	app = w.get("wc")
	assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)
	assert.Equal(t, old.Status.DeployHash, app.Status.DeployHash)
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID)
	assert.Equal(t, v1beta1.GreenFlinkApplication, app.Status.DeployVersion)
	assert.False(t, w.clusterExists(dual, dual.Status.UpdatingHash))
	assert.Len(t, w.timeline.Jobs(ns+"/wc"), 2)
	w.assertAtMostTwoJobs(w.events())
}

// A hash that names neither version is refused with a Warning that names the two.
func TestBlueGreenUnknownTeardownHashIsRefused(t *testing.T) {
	w := newWorld(t)
	old, dual := dualRunningAfterUpdate(t, w)
	w.events()
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.TearDownVersionHash = "deadbeef" })
	w.passes("wc", 5)
	app := w.get("wc")
	assert.Equal(t, v1beta1.PhaseDualRunning, app.Status.Phase)
	var warnings []string
	for _, e := range w.events() {
		if containsAll(e, "UnknownTeardownHash", old.Status.DeployHash, dual.Status.UpdatingHash) {
			warnings = append(warnings, e)
		}
	}
	assert.Len(t, warnings, 1, "one Warning naming both valid hashes")
}

// A new spec during DualRunning replaces the new version: it is torn down, and the newest spec
// starts beside the deployed version, which is never touched.
func TestBlueGreenNewSpecDuringDualRunningReplacesTheNewVersion(t *testing.T) {
	w := newWorld(t)
	old, dual := dualRunningAfterUpdate(t, w)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:3" })
	app := w.runUntil("wc", "third version beside the first", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseDualRunning && a.Status.UpdatingHash == flink.ClusterHash(a)
	})
	assert.Equal(t, old.Status.DeployHash, app.Status.DeployHash)
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID)
	assert.Equal(t, v1beta1.BlueFlinkApplication, app.Status.UpdatingVersion)
	assert.False(t, w.clusterExists(dual, dual.Status.UpdatingHash), "the replaced version's cluster is gone")
	oldJobs := w.jm(old, old.Status.DeployHash).Jobs()
	require.Len(t, oldJobs, 1)
	assert.Equal(t, "RUNNING", oldJobs[0].State)
	assert.Len(t, w.timeline.Jobs(ns+"/wc"), 3)
	w.assertAtMostTwoJobs(w.events())
}

// Deleting during DualRunning stops both jobs; the deployed version's final savepoint is recorded.
func TestBlueGreenDeleteDuringDualRunningStopsBoth(t *testing.T) {
	w := newWorld(t)
	_, _ = dualRunningAfterUpdate(t, w)
	w.deleteApp("wc")
	app := w.runUntil("wc", "finalized", finalized)
	assert.Contains(t, app.Status.FinalSavepointPath, "savepoint-")
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		_, ended := j.AliveUntil()
		assert.True(t, ended, "job %s stopped", j.JobID)
	}
	w.assertAtMostTwoJobs(w.events())
}

// A failed savepoint of the deployed job starts the new version from its newest checkpoint,
// without touching the deployed job.
func TestBlueGreenFailedSavepointStartsFromTheNewestCheckpointBesideTheDeployedJob(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", blueGreenSpec)
	w.jm(old, old.Status.DeployHash).SetFaults(flinksim.Faults{FailSavepoints: true})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
	assert.Contains(t, w.jm(app, app.Status.UpdatingHash).Jobs()[0].RestoredFrom, "/chk-")
	oldJobs := w.jm(old, old.Status.DeployHash).Jobs()
	require.Len(t, oldJobs, 1)
	assert.Equal(t, "RUNNING", oldJobs[0].State)
	w.assertAtMostTwoJobs(w.events())
}

// A new version whose job fails is rolled back: torn down, the deployed job untouched.
func TestBlueGreenFailingNewVersionRollsBackLeavingTheDeployedJob(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", blueGreenSpec)
	w.imageJars["flink-wordcount:bad"] = []string{"something-else.jar"}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:bad" })
	app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Equal(t, "RolledBack", app.Status.History[len(app.Status.History)-1].Reason, app.Status.Reason)
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID)
	oldJobs := w.jm(old, old.Status.DeployHash).Jobs()
	require.Len(t, oldJobs, 1)
	assert.Equal(t, "RUNNING", oldJobs[0].State)
	w.assertAtMostTwoJobs(w.events())
}

// playBlueGreenPromotion is the BlueGreen path of the crash tables: an update to DualRunning, then
// promotion by tearing the first version down. Whatever status write is lost, Flink sees one
// savepoint for the update and one for the teardown, two jobs, and never a third at once.
func playBlueGreenPromotion(t *testing.T, w *world) {
	old, dual := dualRunningAfterUpdate(t, w)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.TearDownVersionHash = old.Status.DeployHash })
	app := w.runUntil("wc", "promoted", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash == dual.Status.UpdatingHash
	})
	assert.Equal(t, 2, savepointsTaken(w), "savepoints taken")
	jobs := w.timeline.Jobs(ns + "/wc")
	require.Len(t, jobs, 2, "jobs Flink ran")
	assert.Contains(t, jobs[1].RestoredFrom, "savepoint-")
	require.NotNil(t, app.Status.LastTeardown)
	assert.Contains(t, app.Status.LastTeardown.SavepointPath, "savepoint-")
	w.assertAtMostTwoJobs(w.events())
}

func TestBlueGreenSurvivesCrashesBeforeStatusWrites(t *testing.T) {
	w := newWorld(t)
	writes := w.crashBeforeEveryOtherStatusWrite()
	playBlueGreenPromotion(t, w)
	assert.Greater(t, *writes, 10)
}

// Suspending during DualRunning tears the new version down, then suspends the deployed one with a
// savepoint; no job is left.
func TestBlueGreenSuspendDuringDualRunning(t *testing.T) {
	w := newWorld(t)
	old, dual := dualRunningAfterUpdate(t, w)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
	app := w.runUntilPhase("wc", v1beta1.PhaseSuspended)
	assert.Contains(t, app.Status.SavepointPath, "savepoint-")
	assert.Equal(t, dual.Status.UpdatingHash, app.Status.TeardownHash, "the new version went first")
	w.runUntil("wc", "clusters deleted", func(*v1beta1.FlinkApplication) bool {
		return !w.clusterExists(old, old.Status.DeployHash) && !w.clusterExists(dual, dual.Status.UpdatingHash)
	})
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		_, ended := j.AliveUntil()
		assert.True(t, ended, "job %s stopped", j.JobID)
	}
	w.assertAtMostTwoJobs(w.events())
}

func int32p(v int32) *int32 { return &v }

// Auto promotion tears the deployed version down once the new one has passed the health gate.
func TestBlueGreenAutoPromotionAfterTheHealthGate(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		blueGreenSpec(s)
		s.BlueGreen = &v1beta1.BlueGreenSpec{Promotion: v1beta1.PromotionAuto, PromoteAfterSeconds: int32p(15), MinCheckpoints: int32p(1)}
	})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	dual := w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
	app := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	assert.Equal(t, dual.Status.UpdatingHash, app.Status.DeployHash)
	assert.Equal(t, v1beta1.BlueFlinkApplication, app.Status.DeployVersion)
	assert.False(t, w.clusterExists(old, old.Status.DeployHash))
	require.NotNil(t, app.Status.LastTeardown)
	assert.Contains(t, app.Status.LastTeardown.SavepointPath, "savepoint-")
	w.assertAtMostTwoJobs(w.events())
}

// With a teardown delay the application's Service moves to the new version first; forceRollback
// within the delay moves it back and tears the new version down.
func TestBlueGreenForceRollbackWithinTheTeardownDelay(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		blueGreenSpec(s)
		s.BlueGreen = &v1beta1.BlueGreenSpec{Promotion: v1beta1.PromotionAuto, PromoteAfterSeconds: int32p(5), TeardownDelaySeconds: int32p(600)}
	})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	promoted := w.runUntil("wc", "promoted", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Deployments.Candidate != nil && a.Status.Deployments.Candidate.PromotedAt != nil
	})
	ctx := context.Background()
	generic, err := w.kube.CoreV1().Services(ns).Get(ctx, "wc", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, promoted.Status.UpdatingHash, generic.Spec.Selector[flink.HashLabel], "the Service serves the new version")
	assert.Equal(t, "RUNNING", w.jm(old, old.Status.DeployHash).Jobs()[0].State, "the previous version runs on")

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.ForceRollback = true })
	app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Equal(t, "RolledBack", app.Status.History[len(app.Status.History)-1].Reason)
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID)
	generic, err = w.kube.CoreV1().Services(ns).Get(ctx, "wc", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, old.Status.DeployHash, generic.Spec.Selector[flink.HashLabel], "the Service is back on the deployed version")
	assert.False(t, w.clusterExists(promoted, promoted.Status.UpdatingHash))
	w.assertAtMostTwoJobs(w.events())
}

// A new version whose job fails, or that does not pass the gate in time, is aborted: torn down,
// DeployFailed with reason BlueGreenAborted, and the deployed job never touched.
func TestBlueGreenAbort(t *testing.T) {
	cases := map[string]struct {
		bg     v1beta1.BlueGreenSpec
		faults flinksim.Faults
		cause  string
	}{
		"job fails": {v1beta1.BlueGreenSpec{Promotion: v1beta1.PromotionAuto, AbortAfterSeconds: int32p(600)},
			flinksim.Faults{FailJobsAfter: 20 * time.Second}, "is FAILING"},
		"gate not passed in time": {v1beta1.BlueGreenSpec{Promotion: v1beta1.PromotionAuto, MinCheckpoints: int32p(1000), AbortAfterSeconds: int32p(60)},
			flinksim.Faults{}, "did not pass the health gate within 1m0s"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
				blueGreenSpec(s)
				bg := c.bg
				s.BlueGreen = &bg
			})
			w.imageFaults["flink-wordcount:2"] = c.faults
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
			w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
			app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
			assert.Equal(t, "BlueGreenAborted", app.Status.History[len(app.Status.History)-1].Reason)
			assert.Contains(t, app.Status.Reason, c.cause)
			assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID)
			oldJobs := w.jm(old, old.Status.DeployHash).Jobs()
			require.Len(t, oldJobs, 1, "the deployed job was never restarted")
			assert.Equal(t, "RUNNING", oldJobs[0].State)
			w.passes("wc", 5)
			assert.Equal(t, v1beta1.PhaseDeployFailed, w.get("wc").Status.Phase, "the aborted spec is not deployed again")
			w.assertAtMostTwoJobs(w.events())
		})
	}
}

// A deployed BlueGreen version whose job is lost is restarted on its cluster and keeps its colour,
// so that the next update takes the other one.
func TestBlueGreenRestartKeepsTheVersionsColour(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", blueGreenSpec)
	w.jm(old, old.Status.DeployHash).Restart()
	restarted := w.runUntil("wc", "job running again", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != old.Status.JobStatus.JobID &&
			a.Status.JobStatus.State == v1beta1.JobRunning
	})
	assert.Equal(t, v1beta1.GreenFlinkApplication, restarted.Status.DeployVersion)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	dual := w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
	assert.Equal(t, v1beta1.BlueFlinkApplication, dual.Status.UpdatingVersion)
	w.assertAtMostTwoJobs(w.events())
}
