package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// runningWith creates an application shaped by edit and waits until its job has run long enough
// to complete two checkpoints.
func runningWith(t *testing.T, w *world, name string, edit func(*v1beta1.FlinkApplicationSpec)) *v1beta1.FlinkApplication {
	t.Helper()
	app := wordcount(name)
	if edit != nil {
		edit(&app.Spec)
	}
	w.create(app)
	w.runUntilPhase(name, v1beta1.PhaseRunning)
	w.clock.Step(25 * time.Second)
	for i := 0; i < 3; i++ {
		_, _ = w.reconcile(name)
	}
	return w.get(name)
}

func (w *world) clusterExists(app *v1beta1.FlinkApplication, hash string) bool {
	return w.clusterOfOwnerExists(app.Name, hash)
}

// clusterOfOwnerExists tells whether the JobManager of the named object's cluster with this hash exists.
func (w *world) clusterOfOwnerExists(owner, hash string) bool {
	_, err := w.kube.AppsV1().Deployments(ns).Get(context.Background(), flink.JobManagerNameOf(owner, hash), metav1.GetOptions{})
	return err == nil
}

// Each upgrade mode carries the job's state its own way, in Dual and in Single mode, and never runs
// two jobs at once.
func TestUpgradeModesCarryStateAsDeclared(t *testing.T) {
	cases := []struct {
		mode      v1beta1.UpgradeMode
		single    bool
		stopPhase v1beta1.FlinkApplicationPhase
		// restored is what the new job's restore path contains; empty means none.
		restored string
		triggers int
	}{
		{v1beta1.UpgradeModeSavepoint, false, v1beta1.PhaseSavepointing, "savepoint-", 1},
		{v1beta1.UpgradeModeLastState, false, v1beta1.PhaseCancelling, "/chk-", 0},
		{v1beta1.UpgradeModeStateless, false, v1beta1.PhaseCancelling, "", 0},
		{v1beta1.UpgradeModeSavepoint, true, v1beta1.PhaseSavepointing, "savepoint-", 1},
		{v1beta1.UpgradeModeLastState, true, v1beta1.PhaseCancelling, "/chk-", 0},
		{v1beta1.UpgradeModeStateless, true, v1beta1.PhaseCancelling, "", 0},
	}
	for _, c := range cases {
		name := string(c.mode) + "/Dual"
		if c.single {
			name = string(c.mode) + "/Single"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
				s.UpgradeMode = c.mode
				if c.single {
					s.DeploymentMode = v1beta1.DeploymentModeSingle
				}
			})
			assert.Equal(t, c.mode, old.Status.UpgradeMode)
			oldJM := w.jm(old, old.Status.DeployHash)
			oldJob := oldJM.Jobs()[0]

			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
			app := w.runUntil("wc", "upgraded", upgradedFrom(old))

			visited := phasesVisited(app)
			assert.Contains(t, visited, c.stopPhase)
			assert.Equal(t, c.triggers, oldJM.SavepointTriggers())
			jobs := w.jm(app, app.Status.DeployHash).Jobs()
			require.Len(t, jobs, 1)
			if c.restored == "" {
				assert.Empty(t, jobs[0].RestoredFrom)
			} else {
				assert.Contains(t, jobs[0].RestoredFrom, c.restored)
				snap, ok := w.storage.Get(jobs[0].RestoredFrom)
				require.True(t, ok, "restored from a path that exists")
				assert.Equal(t, oldJob.ID, snap.JobID, "the old job's state")
			}
			assert.Equal(t, jobs[0].RestoredFrom, app.Status.JobStatus.RestorePath)
			assert.Empty(t, w.timeline.Overlaps(ns+"/wc"), "never two live jobs")
			require.NotNil(t, app.Status.Deployments.Stable)
			assert.Equal(t, app.Status.DeployHash, app.Status.Deployments.Stable.SpecHash)
			assert.Equal(t, jobs[0].ID, app.Status.Deployments.Stable.JobID)
			if c.single {
				// One cluster only: the job stopped before its cluster was replaced.
				assert.Less(t, lastIndexOf(visited, c.stopPhase), lastIndexOf(visited, v1beta1.PhaseClusterStarting))
				assert.False(t, w.clusterExists(old, old.Status.DeployHash), "the old cluster is gone")
			}
		})
	}
}

func lastIndexOf(phases []v1beta1.FlinkApplicationPhase, p v1beta1.FlinkApplicationPhase) int {
	for i := len(phases) - 1; i >= 0; i-- {
		if phases[i] == p {
			return i
		}
	}
	return -1
}

// savepointDisabled from Lyft manifests means what it meant there: cancel, and start the new job
// without state (Lyft's integration tests assert status.savepointPath "" and no restore).
func TestSavepointDisabledMeansStateless(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointDisabled = true
		a.Spec.Image = "flink-wordcount:2"
	})
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))
	assert.Equal(t, v1beta1.UpgradeModeStateless, app.Status.UpgradeMode)
	assert.Contains(t, phasesVisited(app), v1beta1.PhaseCancelling)
	assert.Equal(t, 0, w.jm(old, old.Status.DeployHash).SavepointTriggers())
	assert.Empty(t, w.jm(app, app.Status.DeployHash).Jobs()[0].RestoredFrom, "the new job starts without state")
	assert.Empty(t, app.Status.SavepointPath)
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))

	// LastState is one field away.
	w.clock.Step(30 * time.Second) // the new job checkpoints
	w.passes("wc", 2)
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.UpgradeMode = v1beta1.UpgradeModeLastState
		a.Spec.Image = "flink-wordcount:3"
	})
	again := w.runUntil("wc", "upgraded", upgradedFrom(app))
	assert.Contains(t, w.jm(again, again.Status.DeployHash).Jobs()[0].RestoredFrom, "/chk-")
}

// LastState never cancels a job whose newest checkpoint is older than
// maxCheckpointRestoreAgeSeconds: it takes a savepoint with cancel instead, and says so.
func TestLastStateTakesASavepointWhenTheCheckpointIsTooOld(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.UpgradeMode = v1beta1.UpgradeModeLastState })
	age := int32(1)
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.Image = "flink-wordcount:2"
		a.Spec.MaxCheckpointRestoreAgeSeconds = &age
	})
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))
	assert.Contains(t, eventReasons(w.events()), "LastStateViaSavepoint")
	assert.Equal(t, 1, savepointsTaken(w))
	assert.Contains(t, w.jm(app, app.Status.DeployHash).Jobs()[0].RestoredFrom, "savepoint-")
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

// A job started without checkpointing can be given it by a LastState update: the update itself
// finds no checkpoint and takes a savepoint, instead of failing on every attempt.
func TestLastStateJobWithoutCheckpointingCanBeGivenIt(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.UpgradeMode = v1beta1.UpgradeModeLastState
		delete(s.FlinkConfig, "execution.checkpointing.interval")
	})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig["execution.checkpointing.interval"] = "10s" })
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))
	assert.Contains(t, w.jm(app, app.Status.DeployHash).Jobs()[0].RestoredFrom, "savepoint-")
}

// LastState fails only when neither a checkpoint nor a savepoint can carry the state, and then the
// job keeps running.
func TestLastStateFailsOnlyWhenNeitherCheckpointNorSavepointWorks(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.UpgradeMode = v1beta1.UpgradeModeLastState })
	w.jm(old, old.Status.DeployHash).SetFaults(flinksim.Faults{FailSavepoints: true})
	age := int32(1)
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.Image = "flink-wordcount:2"
		a.Spec.MaxCheckpointRestoreAgeSeconds = &age
	})
	app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Contains(t, app.Status.Reason, "maxCheckpointRestoreAgeSeconds")
	jobs := w.jm(old, old.Status.DeployHash).Jobs()
	require.Len(t, jobs, 1)
	assert.Equal(t, "RUNNING", jobs[0].State, "the job was never cancelled")
}

// A spec changed back while the job is cancelling still resumes the job, from its checkpoint, on
// the cluster it ran on.
func TestSpecChangedBackWhileCancellingResumesTheJob(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.UpgradeMode = v1beta1.UpgradeModeLastState })
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	w.runUntil("wc", "cancel issued", func(a *v1beta1.FlinkApplication) bool {
		jobs := w.jm(old, old.Status.DeployHash).Jobs()
		return a.Status.Phase == v1beta1.PhaseCancelling && len(jobs) == 1 && jobs[0].State != "RUNNING"
	})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = old.Spec.Image })
	app := w.runUntil("wc", "resumed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != old.Status.JobStatus.JobID
	})
	assert.Equal(t, old.Status.DeployHash, app.Status.DeployHash)
	jobs := w.jm(app, app.Status.DeployHash).Jobs()
	require.Len(t, jobs, 2)
	assert.Equal(t, "RUNNING", jobs[1].State)
	assert.Contains(t, jobs[1].RestoredFrom, "/chk-")
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

// Suspend stops the job per upgradeMode, records its state and deletes the cluster; resume starts
// a cluster and restores exactly that state.
func TestSuspendAndResume(t *testing.T) {
	for _, mode := range []v1beta1.UpgradeMode{v1beta1.UpgradeModeSavepoint, v1beta1.UpgradeModeLastState, v1beta1.UpgradeModeStateless} {
		t.Run(string(mode), func(t *testing.T) {
			w := newWorld(t)
			old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.UpgradeMode = mode })
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
			app := w.runUntilPhase("wc", v1beta1.PhaseSuspended)
			w.runUntil("wc", "cluster deleted", func(*v1beta1.FlinkApplication) bool { return !w.clusterExists(old, old.Status.DeployHash) })
			recorded := app.Status.Deployments.NextRestorePath
			switch mode {
			case v1beta1.UpgradeModeSavepoint:
				assert.Contains(t, recorded, "savepoint-")
				assert.Equal(t, recorded, app.Status.SavepointPath, "savepointPath shows the savepoint to resume from")
			case v1beta1.UpgradeModeLastState:
				assert.Contains(t, recorded, "/chk-")
				assert.Empty(t, app.Status.SavepointPath, "savepointPath never names a checkpoint")
			default:
				assert.Empty(t, recorded)
			}
			assert.Empty(t, app.Status.JobStatus.JobID)

			// Resting: nothing happens however long it stays suspended.
			for i := 0; i < 10; i++ {
				_, _ = w.reconcile("wc")
			}
			assert.Equal(t, v1beta1.PhaseSuspended, w.get("wc").Status.Phase)

			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateRunning })
			app = w.runUntil("wc", "resumed", func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != ""
			})
			jobs := w.jm(app, app.Status.DeployHash).Jobs()
			require.Len(t, jobs, 1)
			assert.Equal(t, recorded, jobs[0].RestoredFrom)
			assert.Equal(t, recorded, app.Status.JobStatus.RestorePath)
			assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
		})
	}
}

// A suspended application is deleted without anything asked of Flink: its deleteMode (Savepoint by
// default) has no job to take a final savepoint of, and no cluster is started for one. The state it
// was suspended with is named in finalSavepointPath and an Event, so it outlives the object.
func TestDeletingASuspendedApplicationLeavesFlinkAloneAndKeepsTheStateAddress(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
	w.runUntilPhase("wc", v1beta1.PhaseSuspended)
	w.runUntil("wc", "cluster deleted", func(*v1beta1.FlinkApplication) bool { return !w.clusterExists(old, old.Status.DeployHash) })
	suspendedWith := w.get("wc").Status.SavepointPath
	require.Contains(t, suspendedWith, "savepoint-")
	savepoints, jobs := savepointsTaken(w), len(w.timeline.Jobs(ns+"/wc"))
	w.events()

	w.deleteApp("wc")
	var recorded string
	app := w.runUntil("wc", "finalized", func(a *v1beta1.FlinkApplication) bool {
		if a.Status.FinalSavepointPath != "" {
			recorded = a.Status.FinalSavepointPath
		}
		return finalized(a)
	})
	assert.Equal(t, suspendedWith, recorded, "finalSavepointPath persisted before the finalizer went")
	assert.Equal(t, suspendedWith, app.Status.FinalSavepointPath)
	assert.Contains(t, eventReasons(w.events()), "StateKept")
	assert.Equal(t, savepoints, savepointsTaken(w), "no final savepoint")
	assert.Len(t, w.timeline.Jobs(ns+"/wc"), jobs, "no job started")
	deploys, err := w.kube.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, deploys.Items, "no cluster started")
}

// A job that keeps failing over never becomes stable; the update rolls back to the last stable spec
// within the readiness timeout, and ends in DeployFailed with reason RolledBack.
func TestUnstableUpdateRollsBackToTheLastStableSpec(t *testing.T) {
	for _, single := range []bool{false, true} {
		name := "Dual"
		if single {
			name = "Single"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			timeout := int32(40)
			old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
				s.ReadinessTimeoutSeconds = &timeout
				if single {
					s.DeploymentMode = v1beta1.DeploymentModeSingle
				}
			})
			// The new image's job keeps failing over; the old one is fine.
			w.imageFaults["flink-wordcount:2"] = flinksim.Faults{RestartJobsEvery: 3 * time.Second}
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
			started := w.clock.Now()
			app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)

			assert.Contains(t, phasesVisited(app), v1beta1.PhaseRollingBack)
			assert.Less(t, w.clock.Since(started), 3*time.Minute)
			last := app.Status.History[len(app.Status.History)-1]
			assert.Equal(t, "RolledBack", last.Reason)
			assert.Equal(t, old.Status.DeployHash, app.Status.DeployHash)
			assert.Equal(t, flink.ClusterHash(app), app.Status.FailedDeployHash)
			jobs := w.jm(old, old.Status.DeployHash).Jobs()
			require.NotEmpty(t, jobs)
			restarted := jobs[len(jobs)-1]
			assert.Equal(t, "RUNNING", restarted.State)
			assert.Equal(t, "flink-wordcount:2", w.get("wc").Spec.Image, "the spec is the user's; only the job went back")
			assert.NotEmpty(t, restarted.RestoredFrom, "restored from the newest state the attempt left")
			assert.Equal(t, restarted.ID, app.Status.Deployments.Stable.JobID)
			assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
			if single {
				assert.True(t, w.clusterExists(old, old.Status.DeployHash), "the stable cluster is created again")
			}
		})
	}
}

// A spec changed during a rollback takes over once the failed attempt has ended: the new spec is
// deployed from the newest state instead of the stable one being restarted.
func TestNewSpecDuringRollbackTakesOver(t *testing.T) {
	w := newWorld(t)
	timeout := int32(30)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.ReadinessTimeoutSeconds = &timeout
		s.DeploymentMode = v1beta1.DeploymentModeSingle
	})
	w.imageFaults["flink-wordcount:2"] = flinksim.Faults{RestartJobsEvery: 3 * time.Second}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	w.runUntilPhase("wc", v1beta1.PhaseRollingBack)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:3" })

	app := w.runUntil("wc", "the newest spec runs", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash == flink.ClusterHash(a)
	})
	visited := phasesVisited(app)
	assert.Equal(t, v1beta1.PhaseUpdating, visited[lastIndexOf(visited, v1beta1.PhaseRollingBack)+1], "RollingBack hands over to Updating")
	assert.NotContains(t, visited[lastIndexOf(visited, v1beta1.PhaseRollingBack):], v1beta1.PhaseDeployFailed)
	jobs := w.timeline.Jobs(ns + "/wc")
	require.Len(t, jobs, 3, "the original job, the failed attempt, the newest spec's job")
	assert.NotEmpty(t, jobs[2].RestoredFrom)
	assert.Equal(t, "flink-wordcount:3", w.get("wc").Spec.Image)
	assert.False(t, w.clusterExists(old, old.Status.DeployHash))
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

// An application whose status was written by an operator version that kept no last stable spec
// still rolls back on its own cluster, with the job parameters status recorded.
func TestRollbackWithoutARecordedStableSpecReusesTheLiveCluster(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	legacy := old.DeepCopy()
	legacy.Status.Deployments = v1beta1.Deployments{}
	_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).UpdateStatus(context.Background(), legacy, metav1.UpdateOptions{})
	require.NoError(t, err)

	w.imageJars["flink-wordcount:bad"] = []string{"something-else.jar"}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:bad" })
	app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Equal(t, "RolledBack", app.Status.History[len(app.Status.History)-1].Reason, app.Status.Reason)
	jobs := w.jm(old, old.Status.DeployHash).Jobs()
	require.Len(t, jobs, 2, "the old job, and its restart")
	assert.Equal(t, "RUNNING", jobs[1].State)
	assert.Equal(t, 3, jobs[1].Parallelism)
	assert.Contains(t, jobs[1].RestoredFrom, "savepoint-")
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}
