package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// checkpointing makes the job complete a checkpoint every second and keep a few of them, so that
// "the newest checkpoint" is a choice the operator can get wrong.
func checkpointing(spec *v1beta1.FlinkApplicationSpec) {
	spec.FlinkConfig["execution.checkpointing.interval"] = "1s"
	spec.FlinkConfig["state.checkpoints.num-retained"] = "3"
}

func (s *scenario) waitCheckpoints(jobID string, n int) {
	s.t.Helper()
	s.eventually("retained checkpoints of "+jobID, func() (bool, string) {
		got := len(checkpointsOf(jobID))
		return got >= n, "retained checkpoints: " + strconv.Itoa(got)
	})
}

// assertNewestCheckpointOf checks that path is the newest checkpoint the job retained.
func (s *scenario) assertNewestCheckpointOf(path, jobID string) {
	s.t.Helper()
	snap, ok := env.Fleet.Storage().Get(path)
	if !strings.Contains(path, "/chk-") || !ok || snap.Savepoint || snap.JobID != jobID {
		s.t.Fatalf("%q: in storage %v, savepoint %v, job %s; want a retained checkpoint of job %s", path, ok, snap.Savepoint, snap.JobID, jobID)
	}
	for _, c := range checkpointsOf(jobID) {
		if c.CheckpointID > snap.CheckpointID {
			s.t.Errorf("restored checkpoint %d (%s), but checkpoint %d (%s) is newer", snap.CheckpointID, path, c.CheckpointID, c.Path)
		}
	}
}

// A LastState update cancels the job, waits until it is CANCELED and starts the new job from its
// newest checkpoint: no savepoint, never two jobs, in Dual and in Single mode, on the oldest and the
// newest Flink release.
func TestLastStateUpdateRestoresTheNewestCheckpoint(t *testing.T) {
	for i, mode := range []v1beta1.DeploymentMode{v1beta1.DeploymentModeDual, v1beta1.DeploymentModeSingle} {
		// Dual on the oldest release and Single on the newest keep the suite's time; the other
		// scenarios run on both.
		version := coreVersions[i]
		t.Run(string(mode)+"/"+version, func(t *testing.T) {
			defer stopEnvOnPanic()
			t.Parallel()
			s := newScenario(t)
			old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
				onFlink(version, &spec.ClusterSpec)
				checkpointing(spec)
				spec.UpgradeMode = v1beta1.UpgradeModeLastState
				spec.DeploymentMode = mode
			})
			oldJM := s.jobManager(old)
			oldJob := old.Status.JobStatus.JobID
			s.waitCheckpoints(oldJob, 2)

			s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
			app := s.waitRunning(old.Name, old.Status.DeployHash)

			if !testkit.HistoryHas(app, v1beta1.PhaseCancelling) || testkit.HistoryHas(app, v1beta1.PhaseSavepointing) {
				t.Errorf("want Cancelling and no Savepointing in the history: %s", testkit.Describe(app))
			}
			s.assertSavepointTriggers(oldJM, 0)
			if r := s.record(app.Name, oldJob); !reached(r, "CANCELED") {
				t.Errorf("old job %s went %s, want it CANCELED", oldJob, states(r))
			}
			job := s.onlyJob(s.jobManager(app))
			s.assertRunningJob(job, 3)
			s.assertNewestCheckpointOf(job.RestoredFrom, oldJob)
			if job.RestoredFrom != app.Status.JobStatus.RestorePath {
				t.Errorf("Flink restored %q, status.jobStatus.restorePath says %q", job.RestoredFrom, app.Status.JobStatus.RestorePath)
			}
			if app.Status.UpgradeMode != v1beta1.UpgradeModeLastState {
				t.Errorf("status.upgradeMode %q, want LastState", app.Status.UpgradeMode)
			}
			s.waitClusterGone(app.Name, old.Status.DeployHash)
		})
	}
}

// A Stateless update cancels the job and starts the new one from nothing.
func TestStatelessUpdateStartsWithoutState(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
		checkpointing(spec)
		spec.UpgradeMode = v1beta1.UpgradeModeStateless
	})
	oldJM := s.jobManager(old)
	s.waitCheckpoints(old.Status.JobStatus.JobID, 1)

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	app := s.waitRunning(old.Name, old.Status.DeployHash)

	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	if job.RestoredFrom != "" || app.Status.JobStatus.RestorePath != "" {
		t.Errorf("Stateless update restored %q (status says %q), want nothing", job.RestoredFrom, app.Status.JobStatus.RestorePath)
	}
	s.assertSavepointTriggers(oldJM, 0)
}

// Suspend takes a savepoint, records it and deletes the cluster; resume starts a cluster and the job
// from exactly that savepoint.
func TestSuspendDeletesTheClusterAndResumeRestoresTheRecordedState(t *testing.T) {
	for _, version := range coreVersions {
		t.Run(version, func(t *testing.T) { suspendAndResume(t, version) })
	}
}

func suspendAndResume(t *testing.T, version string) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) { onFlink(version, &spec.ClusterSpec) })
	oldJob := old.Status.JobStatus.JobID

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.State = v1beta1.JobStateSuspended })
	suspended := s.waitPhase(old.Name, v1beta1.PhaseSuspended)
	s.waitClusterGone(old.Name, old.Status.DeployHash)
	recorded := suspended.Status.SavepointPath
	s.assertSavepointOf(recorded, oldJob)
	if suspended.Status.JobStatus.JobID != "" {
		t.Errorf("a suspended application records job %s", suspended.Status.JobStatus.JobID)
	}
	if r := s.record(old.Name, oldJob); !reached(r, "CANCELED") {
		t.Errorf("suspended job %s went %s, want it CANCELED", oldJob, states(r))
	}

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.State = v1beta1.JobStateRunning })
	app := s.waitFor(old.Name, "Running after resume", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != "" && a.Status.JobStatus.State == v1beta1.JobRunning
	}, inPhase(v1beta1.PhaseDeployFailed))
	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	if job.RestoredFrom != recorded || app.Status.JobStatus.RestorePath != recorded {
		t.Errorf("resumed job restored %q (status says %q), want the recorded %q", job.RestoredFrom, app.Status.JobStatus.RestorePath, recorded)
	}
}

// An update whose job keeps failing over never becomes stable; within the readiness timeout the
// application rolls back to the last stable spec and ends in DeployFailed with reason RolledBack.
func TestUnstableUpdateRollsBackToTheLastStableSpec(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	const readiness = 8
	old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
		checkpointing(spec)
		timeout := int32(readiness)
		spec.ReadinessTimeoutSeconds = &timeout
	})
	oldHash, oldJob := old.Status.DeployHash, old.Status.JobStatus.JobID
	if s := old.Status.Deployments.Stable; s == nil || s.SpecHash != oldHash || s.JobID != oldJob {
		t.Fatalf("the running job's spec is not recorded as the stable deployment: %+v", old.Status.Deployments.Stable)
	}

	// Jobs submitted while the fault is set fail over every 700 ms: only the update's new job.
	env.Fleet.SetFaults(s.ns, old.Name, flinksim.Faults{RestartJobsEvery: 700 * time.Millisecond})
	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	updating := time.Now()
	s.eventually("the update's job is submitted", func() (bool, string) {
		jobs := s.timeline(old.Name)
		return len(jobs) == 2, "jobs: " + strconv.Itoa(len(jobs))
	})
	env.Fleet.SetFaults(s.ns, old.Name, flinksim.Faults{})

	app := s.waitFor(old.Name, "DeployFailed after a rollback", inPhase(v1beta1.PhaseDeployFailed),
		func(a *v1beta1.FlinkApplication) bool {
			return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash != oldHash
		})
	if took := time.Since(updating); took > readiness*time.Second+40*time.Second {
		t.Errorf("the rollback took %s with a %ds readiness timeout", took.Round(time.Second), readiness)
	}
	last := app.Status.History[len(app.Status.History)-1]
	if last.Reason != "RolledBack" || !testkit.HistoryHas(app, v1beta1.PhaseRollingBack) {
		t.Errorf("want RollingBack then DeployFailed with reason RolledBack: %s", testkit.Describe(app))
	}
	if app.Status.DeployHash != oldHash || app.Status.FailedDeployHash != flink.ClusterHash(app) {
		t.Errorf("deployHash %s, failedDeployHash %s; want %s and the new spec's hash", app.Status.DeployHash, app.Status.FailedDeployHash, oldHash)
	}
	job := s.jobByID(s.jobManager(app), app.Status.JobStatus.JobID)
	s.assertRunningJob(job, 3)
	if job.ID == oldJob || job.RestoredFrom == "" {
		t.Errorf("rollback job %s restored %q; want a new job from the newest state", job.ID, job.RestoredFrom)
	}
	if s := app.Status.Deployments.Stable; s == nil || s.SpecHash != oldHash {
		t.Errorf("deployments.stable %+v, want the original spec %s", s, oldHash)
	}
	for _, r := range s.timeline(app.Name) {
		if r.JobID != oldJob && r.JobID != job.ID && !reached(r, "RESTARTING") {
			t.Errorf("the update's job %s never failed over (%s)", r.JobID, states(r))
		}
	}
}

// A parallelism change with scaleMode InPlace keeps the cluster: the adaptive scheduler rescales
// the same job; otherwise a new job starts on the same cluster from a savepoint.
func TestInPlaceParallelismChangeKeepsTheCluster(t *testing.T) {
	for _, adaptive := range []bool{false, true} {
		name := "DefaultScheduler"
		if adaptive {
			name = "AdaptiveScheduler"
		}
		t.Run(name, func(t *testing.T) {
			defer stopEnvOnPanic()
			t.Parallel()
			s := newScenario(t)
			old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
				spec.ScaleMode = v1beta1.ScaleModeInPlace
				if adaptive {
					checkpointing(spec)
					spec.FlinkConfig[flink.SchedulerKey] = "adaptive"
					// Flink waits 30s by default before rescaling a job that just started.
					spec.FlinkConfig["jobmanager.adaptive-scheduler.scaling-interval.min"] = "0s"
				}
			})
			oldJM := s.jobManager(old)
			oldHash, oldJob := old.Status.DeployHash, old.Status.JobStatus.JobID

			s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Parallelism = 5 })
			app := s.waitFor(old.Name, "Running at parallelism 5", func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.Parallelism == 5 &&
					a.Status.JobStatus.State == v1beta1.JobRunning
			}, inPhase(v1beta1.PhaseDeployFailed))

			if app.Status.DeployHash != oldHash || !testkit.HistoryHas(app, v1beta1.PhaseRescaling) || countHistory(app, v1beta1.PhaseClusterStarting) != 1 {
				t.Errorf("want a rescale of cluster %s in place: %s", oldHash, testkit.Describe(app))
			}
			if jm := s.jobManager(app); jm != oldJM {
				t.Errorf("the JobManager changed: %s, was %s", jm.Name(), oldJM.Name())
			}
			tm, err := env.Kube.AppsV1().Deployments(s.ns).Get(s.ctx, flink.TaskManagerName(app, oldHash), metav1.GetOptions{})
			if err != nil || tm.Spec.Replicas == nil || *tm.Spec.Replicas != 3 {
				t.Errorf("TaskManager Deployment %v (err %v), want 3 replicas for parallelism 5 with 2 slots each", tm.Spec.Replicas, err)
			}
			jobs := oldJM.Jobs()
			if adaptive {
				job := s.onlyJob(oldJM)
				if job.ID != oldJob || job.CurrentParallelism() != 5 || app.Status.JobStatus.JobID != oldJob {
					t.Errorf("adaptive rescale: job %s at parallelism %d (status %s); want job %s at 5", job.ID, job.CurrentParallelism(), app.Status.JobStatus.JobID, oldJob)
				}
				s.assertSavepointTriggers(oldJM, 0)
				return
			}
			if len(jobs) != 2 {
				t.Fatalf("want the old job and its restart on the same JobManager: %s", formatJobs(jobs))
			}
			job := s.jobByID(oldJM, app.Status.JobStatus.JobID)
			s.assertRunningJob(job, 5)
			s.assertSavepointOf(job.RestoredFrom, oldJob)
		})
	}
}

func countHistory(app *v1beta1.FlinkApplication, phase v1beta1.FlinkApplicationPhase) int {
	n := 0
	for _, h := range app.Status.History {
		if h.To == phase {
			n++
		}
	}
	return n
}

// A deleted JobManager Deployment takes its job with it (no HA); the operator creates the cluster
// again and restores the job from its newest checkpoint, saying so with a RecoverDeployment Event.
func TestDeletedJobManagerDeploymentIsRecoveredWithItsState(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", checkpointing)
	oldJob := old.Status.JobStatus.JobID
	s.waitCheckpoints(oldJob, 2)
	seen := s.waitFor(old.Name, "a checkpoint in status", func(a *v1beta1.FlinkApplication) bool {
		return strings.Contains(a.Status.JobStatus.LastCheckpointPath, "/chk-")
	}, nil)

	bg := metav1.DeletePropagationBackground
	err := env.Kube.AppsV1().Deployments(s.ns).Delete(s.ctx, flink.JobManagerName(old, old.Status.DeployHash),
		metav1.DeleteOptions{PropagationPolicy: &bg})
	if err != nil {
		t.Fatal(err)
	}
	app := s.waitFor(old.Name, "Running a recovered job", func(a *v1beta1.FlinkApplication) bool {
		st := a.Status
		return st.Phase == v1beta1.PhaseRunning && st.JobStatus.JobID != "" && st.JobStatus.JobID != oldJob &&
			st.JobStatus.State == v1beta1.JobRunning
	}, inPhase(v1beta1.PhaseDeployFailed))

	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	snap, ok := env.Fleet.Storage().Get(job.RestoredFrom)
	if !ok || snap.JobID != oldJob || !strings.Contains(job.RestoredFrom, "/chk-") {
		t.Errorf("recovered job restored %q (in storage %v, of job %s); want a checkpoint of %s", job.RestoredFrom, ok, snap.JobID, oldJob)
	}
	if prev, _ := env.Fleet.Storage().Get(seen.Status.JobStatus.LastCheckpointPath); snap.CheckpointID < prev.CheckpointID {
		t.Errorf("restored checkpoint %d, older than %d seen before the loss", snap.CheckpointID, prev.CheckpointID)
	}
	if job.RestoredFrom != app.Status.JobStatus.RestorePath {
		t.Errorf("Flink restored %q, status says %q", job.RestoredFrom, app.Status.JobStatus.RestorePath)
	}
	found := false
	for _, e := range s.events(app.Name) {
		found = found || e.Reason == "RecoverDeployment"
	}
	if !found {
		t.Errorf("no RecoverDeployment Event")
	}
}
