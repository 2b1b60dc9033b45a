package lyftcompat

import (
	"net/http"
	"testing"

	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// waitUpdateAndValidate is Lyft's WaitUpdateAndValidate (job_cancellation_test.go): after an update
// a new job runs, status.savepointPath is empty, and the old cluster's pods go.
func (s *scenario) waitUpdateAndValidate(name string, edit func(*v1beta1.FlinkApplication), failurePhase v1beta1.FlinkApplicationPhase) *v1beta1.FlinkApplication {
	s.t.Helper()
	app := s.update(name, edit)
	oldJob := app.Status.JobStatus.JobID
	// keep trying until the new job is launched
	s.waitFor(name, "a new job launched", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.JobID != "" && a.Status.JobStatus.JobID != oldJob
	}, nil)
	s.waitNewJobRunning(name, oldJob, failurePhase)
	s.waitForAllTasksRunning(name)

	// check that the new job started from an empty savepoint.
	newApp := s.mustGet(name)
	if newApp.Status.JobStatus.JobID == oldJob {
		s.t.Errorf("job %s did not change", oldJob)
	}
	if newApp.Status.SavepointPath != "" {
		s.t.Errorf("status.savepointPath %q once the new job runs, want empty", newApp.Status.SavepointPath)
	}
	// wait for the old cluster to be cleaned up
	s.waitOldPodsGone(name, app.Status.DeployHash)
	return newApp
}

// From Lyft's TestJobCancellationWithoutSavepoint (job_cancellation_test.go): with
// savepointDisabled an update cancels the job without a savepoint and the new job starts without
// state; a delete with deleteMode ForceCancel cancels the job.
func TestJobCancellationWithoutSavepoint(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	const testName = "cancelsuccess"

	// start a simple app
	config := s.readTestApp()
	config.Name = testName + "job"
	config.Spec.DeleteMode = v1beta1.DeleteModeForceCancel
	config.Spec.SavepointDisabled = true
	config.Labels["integTest"] = testName
	config.Finalizers = append(config.Finalizers, testFinalizer)
	imageConfig(config)
	jarCheckpointing(config, false)
	s.createApp(config)
	name := config.Name

	s.waitPhase(name, v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed)
	s.waitForAllTasksRunning(name)
	s.assertPodImages("integTest="+testName, 2, config.Spec.Image)
	oldJM := s.jobManager(name, s.mustGet(name).Status.DeployHash)

	// test updating the app with a new image
	newApp := s.waitUpdateAndValidate(name, func(app *v1beta1.FlinkApplication) { app.Spec.Image = newImage }, v1beta1.PhaseDeployFailed)
	if newApp.Spec.Image != newImage {
		t.Errorf("spec.image %s, want %s", newApp.Spec.Image, newImage)
	}
	if newApp.Status.SavepointPath != "" {
		t.Errorf("status.savepointPath %q, want empty", newApp.Status.SavepointPath)
	}
	s.assertPodImages("integTest="+testName, 2, newImage)
	// Beyond Lyft's assertions: savepointDisabled without an upgradeMode is Stateless
	// (docs/migrating-from-lyft.md): through Cancelling, no savepoint asked, no state restored.
	if newApp.Status.UpgradeMode != v1beta1.UpgradeModeStateless || !testkit.HistoryHas(newApp, v1beta1.PhaseCancelling) {
		t.Errorf("upgradeMode %q; want Stateless through Cancelling: %s", newApp.Status.UpgradeMode, testkit.Describe(newApp))
	}
	if n := oldJM.SavepointTriggers(); n != 0 {
		t.Errorf("the old JobManager was asked for %d savepoints, want none", n)
	}
	if restored := s.restoredFrom(newApp); restored != nil {
		t.Errorf("new job restored %v, want no state", restored)
	}

	// cleanup
	s.deleteApp(name)
	app := s.waitOnlyTestFinalizer(name)
	if job := s.jobOverview(app); job["status"] != "CANCELED" {
		t.Errorf("job %s is %v after the delete, want CANCELED", jobID(app), job)
	}
	// delete our finalizer
	s.releaseTestFinalizer(name)
	s.waitNoPods("integTest=" + testName)
}

// From Lyft's TestCancelledJobWithoutSavepoint (job_cancellation_test.go): a job cancelled by hand
// through Flink's REST API is followed by an update that starts a new job without a savepoint.
func TestCancelledJobWithoutSavepoint(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	const testName = "invalidcancel"

	config := s.readTestApp()
	config.Name = testName + "job"
	config.Spec.DeleteMode = v1beta1.DeleteModeForceCancel
	config.Spec.SavepointDisabled = true
	config.Labels["integTest"] = testName
	imageConfig(config)
	jarCheckpointing(config, false)
	s.createApp(config)
	name := config.Name

	s.waitPhase(name, v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed)
	s.waitForAllTasksRunning(name)

	currApp := s.mustGet(name)
	if currApp.Status.SavepointPath != "" {
		t.Errorf("status.savepointPath %q, want empty", currApp.Status.SavepointPath)
	}
	if job := s.jobOverview(currApp); job["status"] != "RUNNING" {
		t.Errorf("job %v, want RUNNING", job)
	}

	// trigger a cancel on the existing job
	if _, err := s.flinkAPI(http.MethodPatch, currApp, "jobs/"+currApp.Status.JobStatus.JobID+"?mode=cancel"); err != nil {
		t.Fatalf("cancelling job %s: %v", currApp.Status.JobStatus.JobID, err)
	}
	// Lyft waits 5 s and then expects CANCELED; the simulator cancels in 0.3 s.
	s.eventually("job cancelled", func() (bool, string) {
		job := s.jobOverview(currApp)
		return job["status"] == "CANCELED", "job " + job["status"].(string)
	})

	newApp := s.update(name, func(app *v1beta1.FlinkApplication) { app.Spec.Image = newImage })
	// wait until the new job is launched
	s.waitFor(name, "a new job launched", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.JobID != "" && a.Status.JobStatus.JobID != currApp.Status.JobStatus.JobID
	}, nil)

	// we should end up in the Running of the new job
	s.waitNewJobRunning(name, currApp.Status.JobStatus.JobID, v1beta1.PhaseDeployFailed)
	newApp = s.mustGet(newApp.Name)
	if job := s.jobOverview(newApp); job["status"] != "RUNNING" {
		t.Errorf("new job %v, want RUNNING", job)
	}
	if newApp.Status.SavepointPath != "" {
		t.Errorf("status.savepointPath %q, want empty", newApp.Status.SavepointPath)
	}

	// start deleting
	s.deleteApp(name)
	s.waitNoPods("integTest=" + testName)
}

// From Lyft's TestJobRecoveryWithoutSavepoint (job_cancellation_test.go): with savepointDisabled, a
// bad jarName fails the update, and the old spec's job is started again without state on the old
// cluster; a roll forward then succeeds, and a ForceCancel delete leaves no savepoint.
func TestJobRecoveryWithoutSavepoint(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	const testName = "cancelrecovery"

	config := s.readTestApp()
	config.Name = testName
	config.Labels["integTest"] = testName
	config.Finalizers = append(config.Finalizers, testFinalizer)
	config.Spec.DeleteMode = v1beta1.DeleteModeForceCancel
	config.Spec.SavepointDisabled = true
	imageConfig(config)
	jarCheckpointing(config, false)
	s.createApp(config)
	name := config.Name

	s.waitPhase(name, v1beta1.PhaseRunning, v1beta1.PhaseSavepointing)
	s.waitForAllTasksRunning(name)
	currApp := s.mustGet(name)
	if currApp.Status.SavepointPath != "" {
		t.Errorf("status.savepointPath %q, want empty", currApp.Status.SavepointPath)
	}

	// Test updating the app with a bad jar name -- this should cause a failed deploy and roll back
	s.update(name, func(app *v1beta1.FlinkApplication) {
		app.Spec.JarName = "nonexistent.jar"
		app.Spec.RestartNonce = "rollback"
	})
	s.waitPhase(name, v1beta1.PhaseDeployFailed)
	s.waitForAllTasksRunning(name)

	// assert the restart of the job with a new job id and old deploy hash.
	newApp := s.mustGet(name)
	if newApp.Status.JobStatus.JobID == currApp.Status.JobStatus.JobID {
		t.Errorf("job %s was not restarted", currApp.Status.JobStatus.JobID)
	}
	if newApp.Status.SavepointPath != "" || newApp.Status.SavepointTriggerID != "" {
		t.Errorf("status.savepointPath %q, savepointTriggerId %q; want both empty", newApp.Status.SavepointPath, newApp.Status.SavepointTriggerID)
	}
	if newApp.Status.DeployHash != currApp.Status.DeployHash {
		t.Errorf("deployHash %s, want the old %s", newApp.Status.DeployHash, currApp.Status.DeployHash)
	}
	// assert that the restarted job wasn't restored from a savepoint.
	if restored := s.restoredFrom(newApp); restored != nil {
		t.Errorf("restarted job restored %v, want no state", restored)
	}

	// roll forward with the right config.
	s.waitUpdateAndValidate(name, func(app *v1beta1.FlinkApplication) {
		app.Spec.JarName = config.Spec.JarName
		app.Spec.RestartNonce = "rollback2"
		app.Spec.Image = newImage
	}, "")
	// assert the pods have the new image
	for _, pod := range s.pods("integTest=" + testName) {
		if pod.Spec.Containers[0].Image != newImage {
			t.Errorf("pod %s runs %s, want %s", pod.Name, pod.Spec.Containers[0].Image, newImage)
		}
	}

	// delete the application and ensure everything is cleaned up successfully
	s.deleteApp(name)
	app := s.waitOnlyTestFinalizer(name)
	if app.Status.SavepointPath != "" || app.Status.SavepointTriggerID != "" {
		t.Errorf("after a ForceCancel delete: status.savepointPath %q, savepointTriggerId %q; want both empty",
			app.Status.SavepointPath, app.Status.SavepointTriggerID)
	}
	s.releaseTestFinalizer(name)
	// wait until all pods are deleted
	s.waitNoPods("integTest=" + testName)
}
