package e2e

import (
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A Dual update moves the job to a new cluster through exactly one savepoint: the new job restores
// the savepoint Flink took of the old one, never runs beside it, and the old cluster goes.
func TestImageUpdateRestoresFromSavepoint(t *testing.T) {
	for _, version := range coreVersions {
		t.Run(version, func(t *testing.T) { imageUpdateRestoresFromSavepoint(t, version) })
	}
}

func imageUpdateRestoresFromSavepoint(t *testing.T, version string) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) { onFlink(version, &spec.ClusterSpec) })
	oldJM := s.jobManager(old)
	oldJob := old.Status.JobStatus.JobID

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	app := s.waitRunning(old.Name, old.Status.DeployHash)
	runningSeen := time.Now()

	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	s.assertStableBefore(app.Name, job.ID, runningSeen)
	if job.ID == oldJob || job.ID != app.Status.JobStatus.JobID {
		t.Errorf("new cluster runs job %s; old job %s, status records %s", job.ID, oldJob, app.Status.JobStatus.JobID)
	}
	s.assertSavepointOf(job.RestoredFrom, oldJob)
	if job.RestoredFrom != app.Status.JobStatus.RestorePath {
		t.Errorf("Flink restored %q, status.jobStatus.restorePath says %q", job.RestoredFrom, app.Status.JobStatus.RestorePath)
	}
	s.assertSavepointTriggers(oldJM, 1)
	if r := s.record(app.Name, oldJob); !reached(r, "CANCELED") {
		t.Errorf("old job %s went %s, want it CANCELED", oldJob, states(r))
	}
	s.waitClusterGone(app.Name, old.Status.DeployHash)
}

// Changing restartNonce changes nothing about the job but still redeploys it, from a savepoint.
func TestRestartNonceRedeploysFromSavepoint(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", nil)
	oldJM := s.jobManager(old)
	oldJob := old.Status.JobStatus.JobID

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.RestartNonce = "restart-1" })
	app := s.waitRunning(old.Name, old.Status.DeployHash)

	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	if job.ID == oldJob {
		t.Errorf("the job kept its id %s across a restart", oldJob)
	}
	s.assertSavepointOf(job.RestoredFrom, oldJob)
	s.assertSavepointTriggers(oldJM, 1)
	s.waitClusterGone(app.Name, old.Status.DeployHash)
}

// forceRollback abandons an update whose cluster cannot start, before the old job is touched: no
// savepoint, no cancel, the same job keeps running.
func TestForceRollbackAbandonsUpdateBeforeSavepoint(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", nil)
	oldJM := s.jobManager(old)
	oldHash, oldJob := old.Status.DeployHash, old.Status.JobStatus.JobID

	// TaskManagers that no node accepts: the new cluster stays in ClusterStarting.
	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) {
		spec.TaskManagerConfig.NodeSelector = map[string]string{"kubernetes.io/hostname": "no-such-node"}
	})
	starting := s.waitFor(old.Name, "ClusterStarting of the update", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseClusterStarting && a.Status.UpdatingHash != "" && a.Status.UpdatingHash != oldHash
	}, nil)
	newHash := starting.Status.UpdatingHash

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.ForceRollback = true })
	rollbackAt := time.Now()
	app := s.waitPhase(old.Name, v1beta1.PhaseDeployFailed)
	// Nothing in a forced rollback waits for Flink or for a deadline.
	if took := time.Since(rollbackAt); took > 15*time.Second {
		t.Errorf("forceRollback took %s to reach DeployFailed", took.Round(time.Second))
	}

	if !testkit.HistoryHas(app, v1beta1.PhaseRollingBack) {
		t.Errorf("DeployFailed without RollingBack: %s", testkit.Describe(app))
	}
	if app.Status.DeployHash != oldHash || app.Status.JobStatus.JobID != oldJob {
		t.Errorf("after the rollback: deployHash %s, job %s; want %s, %s", app.Status.DeployHash, app.Status.JobStatus.JobID, oldHash, oldJob)
	}
	s.assertRunningJob(s.onlyJob(oldJM), 3)
	if j := s.onlyJob(oldJM); j.ID != oldJob || j.Restarts != 0 {
		t.Errorf("old JobManager runs %s (restarts %d), want the untouched job %s", j.ID, j.Restarts, oldJob)
	}
	s.assertSavepointTriggers(oldJM, 0)
	if n := len(s.timeline(app.Name)); n != 1 {
		t.Errorf("the simulator saw %d jobs of %s, want only the original one", n, app.Name)
	}
	s.waitClusterGone(app.Name, newHash)
}
