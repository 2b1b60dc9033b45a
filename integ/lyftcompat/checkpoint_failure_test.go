package lyftcompat

import (
	"net/http"
	"testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// failingJobTest is Lyft's failingJobTest (checkpoint_failure_test.go): with its savepoints failing,
// an update ends in DeployFailed and the old job runs on untouched.
func failingJobTest(t *testing.T, testName string, causeFailure func(s *scenario, name string)) {
	s := newScenario(t)
	// create a Flink app
	config := s.readTestApp()
	config.Name = testName + "job"
	config.Spec.DeleteMode = v1beta1.DeleteModeForceCancel
	config.Labels["integTest"] = testName
	imageConfig(config)
	name := config.Name

	// Cause it to fail
	causeFailure(s, name)

	s.createApp(config)
	s.waitPhase(name, v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed)

	// Try to update it
	app := s.update(name, func(app *v1beta1.FlinkApplication) { app.Spec.Image = newImage })

	// because the checkpoint will fail, the app should move to deploy failed
	s.waitPhase(name, v1beta1.PhaseDeployFailed)

	// And the job should not have been updated
	newApp := s.mustGet(name)
	if newApp.Status.JobStatus.JobID != app.Status.JobStatus.JobID {
		t.Errorf("job %s, want the old job %s", newApp.Status.JobStatus.JobID, app.Status.JobStatus.JobID)
	}
	if _, err := s.flinkAPI(http.MethodGet, newApp, "jobs/"+app.Status.JobStatus.JobID); err != nil {
		t.Errorf("GET jobs/%s: %v", app.Status.JobStatus.JobID, err)
	}
	// Beyond Lyft's assertions: the old job was never stopped, and it is the only job there was.
	if state := s.lastState(name, app.Status.JobStatus.JobID); state != "RUNNING" {
		t.Errorf("old job %s is %s, want it RUNNING untouched", app.Status.JobStatus.JobID, state)
	}
	if n := len(env.Fleet.Timeline().Jobs(s.ns + "/" + name)); n != 1 {
		t.Errorf("the simulator ran %d jobs of %s, want only the old one", n, name)
	}

	// delete the application and ensure everything is cleaned up successfully
	s.deleteApp(name)
	s.waitNoPods("integTest=" + testName)
}

// From Lyft's TestCheckpointTimeout (checkpoint_failure_test.go). Lyft makes the test jar's
// checkpoints take 120 s (checkpoint_delay) against the jar's 10 s checkpoint timeout, so the
// update's savepoint expires and no checkpoint ever completes. The simulator runs no jar code: the
// savepoint's failure is fault injection (FailSavepoints: it completes with a failure, as the
// expired one does, without the 10 s), and no checkpoint completing is shown by checkpointing off.
func TestCheckpointTimeout(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	failingJobTest(t, "checkpointtimeout", func(s *scenario, name string) {
		env.Fleet.SetFaults(s.ns, name, flinksim.Faults{FailSavepoints: true})
	})
}

// appUpdate is Lyft's appUpdate: a new image whose jobs skip the induced failure, and
// maxCheckpointRestoreAgeSeconds 1.
func appUpdate(app *v1beta1.FlinkApplication) {
	app.Spec.Image = newImage
	addEnv(app, "SKIP_INDUCED_FAILURE", "true")
	maxAge := int32(1)
	app.Spec.MaxCheckpointRestoreAgeSeconds = &maxAge
}

// failingTaskTest is Lyft's failingTaskTest (checkpoint_failure_test.go): a job whose tasks keep
// failing and whose checkpoints never complete (checkpoint_delay of 120 s, so that no externalized
// checkpoint is there to recover from; here: checkpointing off, as in TestCheckpointTimeout) is
// updated. Without fallbackWithoutState the update fails and the old job stays; with it the new
// job starts without state.
func failingTaskTest(t *testing.T, testName string, fallbackWithoutState, deployShouldFail bool) {
	s := newScenario(t)
	config := s.readTestApp()
	config.Name = testName + "job"
	config.Spec.DeleteMode = v1beta1.DeleteModeForceCancel
	config.Spec.FallbackWithoutState = fallbackWithoutState
	config.Labels["integTest"] = testName
	imageConfig(config)
	name := config.Name

	s.createApp(config)
	s.waitPhase(name, v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed)

	// Cause it to fail (Lyft's /checkpoints/fail; see failingTasks)
	stopFailing := s.failingTasks(name)
	defer stopFailing()
	// wait a bit for it to start failing
	running := s.mustGet(name)
	jm := s.jobManager(name, running.Status.DeployHash)
	// A job failing on every record never completes a savepoint; the simulator's could, between
	// two of the injected failures, if they came late on a loaded machine.
	jm.SetFaults(flinksim.Faults{FailSavepoints: true})
	s.eventually("the job failing", func() (bool, string) {
		for _, j := range jm.Jobs() {
			if j.ID == running.Status.JobStatus.JobID && j.Restarts >= 2 {
				return true, ""
			}
		}
		return false, "fewer than 2 restarts"
	})

	// get app details
	app := s.mustGet(name)

	if deployShouldFail {
		// Try to update it
		s.update(name, appUpdate)

		// because the checkpoint will fail, the app should move to deploy failed
		s.waitPhase(name, v1beta1.PhaseDeployFailed)

		// And the job should not have been updated
		newApp := s.mustGet(name)
		if newApp.Status.JobStatus.JobID != app.Status.JobStatus.JobID {
			t.Errorf("job %s, want the old job %s", newApp.Status.JobStatus.JobID, app.Status.JobStatus.JobID)
		}
		if n := len(env.Fleet.Timeline().Jobs(s.ns + "/" + name)); n != 1 {
			t.Errorf("the simulator ran %d jobs of %s, want only the old one", n, name)
		}
	} else {
		// Try to update it with app that does not fail on checkpoint
		newApp := s.waitUpdateAndValidate(name, appUpdate, v1beta1.PhaseDeployFailed)

		// Check job updated and started without savepointPath
		if newApp.Status.JobStatus.JobID == app.Status.JobStatus.JobID {
			t.Errorf("job %s did not change", app.Status.JobStatus.JobID)
		}
		if newApp.Spec.SavepointPath != "" {
			t.Errorf("spec.savepointPath %q, want empty", newApp.Spec.SavepointPath)
		}
		// Check new app has no failures
		if _, err := s.flinkAPI(http.MethodGet, newApp, "jobs/"+newApp.Status.JobStatus.JobID); err != nil {
			t.Errorf("GET jobs/%s: %v", newApp.Status.JobStatus.JobID, err)
		}
		// Beyond Lyft's assertions: Flink started the new job from nothing.
		if restored := s.restoredFrom(newApp); restored != nil {
			t.Errorf("new job restored %v, want no state", restored)
		}
	}

	// delete the application and ensure everything is cleaned up successfully
	s.deleteApp(name)
	s.waitNoPods("integTest=" + testName)
}

// From Lyft's TestJobWithTaskFailures (checkpoint_failure_test.go).
func TestJobWithTaskFailures(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	failingTaskTest(t, "taskfailure", false, true)
}

// From Lyft's TestSavepointCheckpointFailureFallback (checkpoint_failure_test.go).
func TestSavepointCheckpointFailureFallback(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	failingTaskTest(t, "recoveryfallback", true, false)
}
