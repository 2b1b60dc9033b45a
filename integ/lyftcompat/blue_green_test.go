package lyftcompat

import (
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// waitForUpdate is Lyft's WaitForUpdate (blue_green_deployment_test.go): update, wait until the
// version being deployed has a job, then for phase and all tasks running.
func (s *scenario) waitForUpdate(name string, edit func(*v1beta1.FlinkApplication), phase, failurePhase v1beta1.FlinkApplicationPhase) *v1beta1.FlinkApplication {
	s.t.Helper()
	app := s.update(name, edit)
	// keep trying until the new job is launched (Lyft indexes with the status the update returned)
	i := currentStatusIndex(app)
	s.waitFor(name, "the version's job launched", func(a *v1beta1.FlinkApplication) bool {
		return len(a.Status.VersionStatuses) > i && a.Status.VersionStatuses[i].JobStatus.JobID != ""
	}, nil)
	s.waitPhase(name, phase, failurePhase)
	s.waitForAllTasksRunning(name)
	return s.mustGet(name)
}

// From Lyft's TestUpdateWithBlueGreenDeploymentMode (blue_green_deployment_test.go): an image
// update under BlueGreen runs the new version (blue) beside the deployed one (green) in DualRunning;
// tearing down green's hash leaves blue deployed and Running; a delete cancels blue's job with a
// savepoint.
func TestUpdateWithBlueGreenDeploymentMode(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	const testName = "bluegreenupdate"

	// start a simple app
	config := s.readTestApp()
	config.Name = testName + "job"
	config.Spec.DeploymentMode = v1beta1.DeploymentModeBlueGreen
	config.Labels["integTest"] = testName
	config.Finalizers = append(config.Finalizers, testFinalizer)
	imageConfig(config)
	jarCheckpointing(config, false)
	s.createApp(config)
	name := config.Name

	s.waitPhase(name, v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed)
	s.waitForAllTasksRunning(name)
	s.assertPodImages("integTest="+testName, 2, config.Spec.Image)

	// test updating the app with a new image
	newApp := s.waitForUpdate(name, func(app *v1beta1.FlinkApplication) { app.Spec.Image = newImage },
		v1beta1.PhaseDualRunning, v1beta1.PhaseDeployFailed)
	if newApp.Spec.Image != newImage {
		t.Errorf("spec.image %s, want %s", newApp.Spec.Image, newImage)
	}
	// Lyft asserts status.savepointPath NotNil here, which holds for any Go string; the savepoint
	// blue started from is in versionStatuses[1].jobStatus.restorePath.
	if rp := newApp.Status.VersionStatuses[1].JobStatus.RestorePath; rp == "" {
		t.Errorf("blue's job restored nothing; want green's savepoint")
	}

	// We have 2 applications running
	if n := len(s.pods("integTest=" + testName)); n != 4 {
		t.Errorf("%d pods in DualRunning, want 4", n)
	}
	s.waitPhase(name, v1beta1.PhaseDualRunning, v1beta1.PhaseDeployFailed)
	if jobID(newApp) == "" {
		t.Errorf("no job id for the updating version")
	}
	if newApp.Status.UpdatingVersion != v1beta1.BlueFlinkApplication || newApp.Status.DeployVersion != v1beta1.GreenFlinkApplication {
		t.Errorf("updatingVersion %q, deployVersion %q; want blue, green", newApp.Status.UpdatingVersion, newApp.Status.DeployVersion)
	}

	// TearDownVersionHash
	teardownVersion := newApp.Status.DeployVersion
	hashToTeardown := newApp.Status.DeployHash
	oldHash := newApp.Status.DeployHash
	t.Logf("Tearing down version %s", teardownVersion)
	newApp = s.waitForUpdate(name, func(app *v1beta1.FlinkApplication) { app.Spec.TearDownVersionHash = hashToTeardown },
		v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed)

	// wait for the old cluster to be cleaned up
	s.waitOldPodsGone(name, oldHash)

	s.waitPhase(name, v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed)
	if newApp.Status.TeardownHash == "" {
		t.Errorf("status.teardownHash empty after the teardown")
	}
	if newApp.Status.DeployVersion != v1beta1.BlueFlinkApplication {
		t.Errorf("deployVersion %q, want blue", newApp.Status.DeployVersion)
	}
	if len(newApp.Status.VersionStatuses) == 0 || newApp.Status.VersionStatuses[0].JobStatus.JobID == "" {
		t.Errorf("versionStatuses[0] has no job: %+v", newApp.Status.VersionStatuses)
	}
	// Lyft reads versionStatuses[1].jobStatus as empty once green is gone: the entry is there, empty.
	if len(newApp.Status.VersionStatuses) < 2 {
		t.Errorf("versionStatuses has %d entries; Lyft's readers index [1]", len(newApp.Status.VersionStatuses))
	} else if newApp.Status.VersionStatuses[1].JobStatus != (v1beta1.FlinkJobStatus{}) {
		t.Errorf("versionStatuses[1].jobStatus %+v, want it empty", newApp.Status.VersionStatuses[1].JobStatus)
	}

	for _, pod := range s.pods(flink.HashLabel + "=" + oldHash) {
		t.Errorf("pod %s (version %s) of the torn-down hash is left", pod.Name, pod.Labels[flink.VersionLabel])
	}

	// cleanup
	s.deleteApp(name)
	app := s.waitOnlyTestFinalizer(name)
	if job := s.jobOverview(app); job["status"] != "CANCELED" {
		t.Errorf("job %s is %v after the delete, want CANCELED", jobID(app), job)
	}
	assertFinalSavepoint(s, app)

	// delete our finalizer
	s.releaseTestFinalizer(name)
	s.waitNoPods("integTest=" + testName)
}
