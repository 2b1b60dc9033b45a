package flinkapplication

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

func (w *world) taskManagerReplicas(app *v1beta1.FlinkApplication, hash string) int32 {
	d, err := w.kube.AppsV1().Deployments(ns).Get(context.Background(), flink.TaskManagerName(app, hash), metav1.GetOptions{})
	require.NoError(w.t, err)
	return replicas(d)
}

// A parallelism change with scaleMode InPlace keeps the cluster. Under the adaptive scheduler the
// same job rescales; otherwise, or on Flink before 1.18, which has no resource requirements to ask
// it through, a new job starts on the same cluster from a savepoint.
func TestInPlaceRescaleKeepsTheCluster(t *testing.T) {
	for _, tc := range []struct {
		name, version     string
		adaptive, sameJob bool
	}{
		{"adaptive scheduler", "1.20", true, true},
		{"default scheduler", "1.20", false, false},
		{"adaptive scheduler on Flink 1.17", "1.17", true, false},
	} {
		adaptive := tc.sameJob
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
				s.ScaleMode = v1beta1.ScaleModeInPlace
				s.FlinkVersion = tc.version
				if tc.adaptive {
					s.FlinkConfig[flink.SchedulerKey] = "adaptive"
				}
			})
			require.Equal(t, int32(2), w.taskManagerReplicas(old, old.Status.DeployHash))
			oldJob := old.Status.JobStatus.JobID

			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 6 })
			app := w.runUntil("wc", "rescaled", func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseRunning && a.Status.Deployments.Stable != nil &&
					a.Status.Deployments.Stable.SpecHash == flink.ClusterHash(a)
			})
			assert.Contains(t, phasesVisited(app), v1beta1.PhaseRescaling)
			assert.Equal(t, old.Status.DeployHash, app.Status.DeployHash, "same cluster")
			assert.Equal(t, int32(3), w.taskManagerReplicas(app, app.Status.DeployHash), "TaskManagers for 6 slots")
			assert.Equal(t, int32(6), app.Status.JobStatus.Parallelism)
			jobs := w.jm(app, app.Status.DeployHash).Jobs()
			if adaptive {
				require.Len(t, jobs, 1, "the same job, rescaled")
				assert.Equal(t, oldJob, app.Status.JobStatus.JobID)
				assert.Equal(t, 6, jobs[0].CurrentParallelism())
				assert.Equal(t, 0, w.jm(app, app.Status.DeployHash).SavepointTriggers())
			} else {
				require.Len(t, jobs, 2)
				assert.Equal(t, 6, jobs[1].Parallelism)
				assert.Contains(t, jobs[1].RestoredFrom, "savepoint-")
			}
			assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))

			// Another spec change is classified against the rescaled spec: none, then a real update.
			for i := 0; i < 5; i++ {
				_, _ = w.reconcile("wc")
			}
			assert.Equal(t, v1beta1.PhaseRunning, w.get("wc").Status.Phase)
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
			app = w.runUntil("wc", "upgraded", upgradedFrom(old))
			assert.Equal(t, int32(6), app.Status.JobStatus.Parallelism)
			w.runUntil("wc", "old cluster deleted", func(*v1beta1.FlinkApplication) bool { return !w.clusterExists(old, old.Status.DeployHash) })
		})
	}
}

// Without scaleMode InPlace a parallelism change is an upgrade to a new cluster.
func TestParallelismChangeWithoutInPlaceIsAnUpgrade(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 4 })
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))
	assert.NotContains(t, phasesVisited(app), v1beta1.PhaseRescaling)
}

// Changes to fields that do not shape the cluster or the job never restart it.
func TestIgnoredSpecChangesNeverRestartTheJob(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	age := int32(60)
	changes := map[string]func(*v1beta1.FlinkApplication){
		"forceRollback":       func(a *v1beta1.FlinkApplication) { a.Spec.ForceRollback = true },
		"tearDownVersionHash": func(a *v1beta1.FlinkApplication) { a.Spec.TearDownVersionHash = "abc" },
		"deleteMode":          func(a *v1beta1.FlinkApplication) { a.Spec.DeleteMode = v1beta1.DeleteModeForceCancel },
		"upgradeMode":         func(a *v1beta1.FlinkApplication) { a.Spec.UpgradeMode = v1beta1.UpgradeModeLastState },
		"scaleMode":           func(a *v1beta1.FlinkApplication) { a.Spec.ScaleMode = v1beta1.ScaleModeInPlace },
		"restartFailedJob":    func(a *v1beta1.FlinkApplication) { a.Spec.RestartFailedJob = true },
		"maxCheckpointAge":    func(a *v1beta1.FlinkApplication) { a.Spec.MaxCheckpointRestoreAgeSeconds = &age },
		"readinessTimeout":    func(a *v1beta1.FlinkApplication) { a.Spec.ReadinessTimeoutSeconds = &age },
		"labels":              func(a *v1beta1.FlinkApplication) { a.Labels = map[string]string{"team": "x"} },
		"annotations":         func(a *v1beta1.FlinkApplication) { a.Annotations = map[string]string{"note": "y"} },
		"ingressAnnotations":  func(a *v1beta1.FlinkApplication) { a.Spec.IngressAnnotations = map[string]string{"a": "b"} },
	}
	for name, change := range changes {
		w.update("wc", change)
		for i := 0; i < 5; i++ {
			_, _ = w.reconcile("wc")
		}
		app := w.get("wc")
		assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase, name)
		assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID, "%s restarted the job", name)
	}
	assert.Len(t, w.jm(old, old.Status.DeployHash).Jobs(), 1)
}

// A JobManager Deployment that disappears takes its job with it (no HA); the operator creates the
// cluster again and restores the job from its newest checkpoint.
func TestDeletedJobManagerIsRecoveredWithItsState(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	lastCheckpoint := old.Status.JobStatus.LastCheckpointPath
	require.Contains(t, lastCheckpoint, "/chk-")
	err := w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(old, old.Status.DeployHash), metav1.DeleteOptions{})
	require.NoError(t, err)

	app := w.runUntil("wc", "recovered", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != old.Status.JobStatus.JobID
	})
	assert.Contains(t, eventReasons(w.events()), "RecoverDeployment")
	jobs := w.jm(app, app.Status.DeployHash).Jobs()
	require.Len(t, jobs, 1)
	assert.Equal(t, "RUNNING", jobs[0].State)
	assert.Contains(t, jobs[0].RestoredFrom, "/chk-")
	snap, ok := w.storage.Get(jobs[0].RestoredFrom)
	require.True(t, ok)
	assert.Equal(t, old.Status.JobStatus.JobID, snap.JobID)
	assert.Equal(t, jobs[0].RestoredFrom, app.Status.JobStatus.RestorePath)
}

// A job that ends FAILED while Running is restarted from its newest checkpoint only when asked to;
// otherwise it is reported Red with the exception Flink gives.
func TestFailedJobIsRestartedOnlyWhenAskedTo(t *testing.T) {
	for _, restart := range []bool{false, true} {
		name := "reported"
		if restart {
			name = "restarted"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.RestartFailedJob = restart })
			jm := w.jm(old, old.Status.DeployHash)
			require.True(t, jm.FailJobNow(old.Status.JobStatus.JobID))
			if !restart {
				app := w.runUntil("wc", "reported", func(a *v1beta1.FlinkApplication) bool {
					return a.Status.JobStatus.State == v1beta1.JobFailed
				})
				assert.Equal(t, v1beta1.Red, app.Status.JobStatus.Health)
				assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)
				assert.Contains(t, eventReasons(w.events()), "JobFailing")
				for i := 0; i < 10; i++ {
					_, _ = w.reconcile("wc")
				}
				assert.Len(t, jm.Jobs(), 1, "not restarted")
				return
			}
			app := w.runUntil("wc", "restarted", func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != old.Status.JobStatus.JobID
			})
			assert.Equal(t, old.Status.DeployHash, app.Status.DeployHash)
			jobs := jm.Jobs()
			require.Len(t, jobs, 2)
			assert.Contains(t, jobs[1].RestoredFrom, "/chk-")
			assert.Equal(t, v1beta1.Green, w.get("wc").Status.JobStatus.Health)
		})
	}
}
