package lyftcompat

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// updateAndValidate is Lyft's updateAndValidate (simple_test.go): an update goes through
// Savepointing to Running with a new job restored from a savepoint, and the old cluster's pods go.
func (s *scenario) updateAndValidate(name string, edit func(*v1beta1.FlinkApplication), failurePhase v1beta1.FlinkApplicationPhase) *v1beta1.FlinkApplication {
	s.t.Helper()
	app := s.update(name, edit)
	s.waitPhase(name, v1beta1.PhaseSavepointing, failurePhase)
	s.waitNewJobRunning(name, app.Status.JobStatus.JobID, failurePhase)
	s.waitForAllTasksRunning(name)

	// check that it really updated
	newApp := s.mustGet(name)
	if newApp.Status.JobStatus.JobID == app.Status.JobStatus.JobID {
		s.t.Fatalf("job id %s did not change", app.Status.JobStatus.JobID)
	}
	// check that we savepointed and restored correctly
	restored := s.restoredFrom(newApp)
	if restored == nil || restored["is_savepoint"] != true {
		s.t.Errorf("new job %s restored %v, want a savepoint", newApp.Status.JobStatus.JobID, restored)
	}
	// wait for the old cluster to be cleaned up
	s.waitOldPodsGone(name, app.Status.DeployHash, app.Status.InPlaceUpdatedFromHash)
	return newApp
}

// waitNewJobRunning is Lyft's WaitForPhase(Running) after an update: Running with a job other
// than oldJob (the phase before the update was Running too).
func (s *scenario) waitNewJobRunning(name, oldJob string, failurePhase v1beta1.FlinkApplicationPhase) *v1beta1.FlinkApplication {
	s.t.Helper()
	return s.waitFor(name, "Running with a job other than "+oldJob, func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && jobID(a) != "" && jobID(a) != oldJob
	}, func(a *v1beta1.FlinkApplication) bool { return failurePhase != "" && a.Status.Phase == failurePhase })
}

// From Lyft's TestSimple (simple_test.go): job submission, an image update and a config update
// through savepoints, a bad jarName rolled back to the old job restored from the update's
// savepoint, a broken image abandoned with forceRollback, each followed by a roll forward, and a
// delete that takes a savepoint and cancels the job.
func TestSimple(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)

	// start a simple app
	config := s.readTestApp()
	config.Labels["integTest"] = "test_simple"
	// add a finalizer so that the flinkapplication won't be deleted until we've had a chance to look at it
	config.Finalizers = append(config.Finalizers, testFinalizer)
	imageConfig(config)
	jarCheckpointing(config, false)
	s.createApp(config)
	name := config.Name

	s.waitPhase(name, v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed)
	s.waitForAllTasksRunning(name)
	s.assertPodImages("integTest=test_simple", 2, config.Spec.Image)

	// test updating the app with a new image
	newApp := s.updateAndValidate(name, func(app *v1beta1.FlinkApplication) { app.Spec.Image = newImage }, v1beta1.PhaseDeployFailed)
	if newApp.Spec.Image != newImage {
		t.Errorf("spec.image %s, want %s", newApp.Spec.Image, newImage)
	}
	s.assertPodImages("integTest=test_simple", 2, newImage)

	// test updating the app with a config change
	newApp = s.updateAndValidate(name, func(app *v1beta1.FlinkApplication) {
		app.Spec.FlinkConfig["akka.client.timeout"] = "23 s"
	}, v1beta1.PhaseDeployFailed)
	// validate the config has been applied
	var value interface{}
	for _, e := range s.flinkGet(newApp, "/jobmanager/config").([]interface{}) {
		if kv := e.(map[string]interface{}); kv["key"] == "akka.client.timeout" {
			value = kv["value"]
		}
	}
	if value != "23 s" {
		t.Errorf("/jobmanager/config has akka.client.timeout %v, want \"23 s\"", value)
	}

	// Test updating the app with a bad jar name -- this should cause a failed deploy and roll back.
	// The test images bundle only the test jar (declareTestImages), so Flink refuses the job.
	{
		newApp := s.update(name, func(app *v1beta1.FlinkApplication) {
			app.Spec.JarName = "nonexistent.jar"
			app.Spec.RestartNonce = "rollback"
		})
		s.waitPhase(name, v1beta1.PhaseSavepointing)
		// we should end up in the DeployFailed phase
		s.waitPhase(name, v1beta1.PhaseDeployFailed)
		// but the job should have been resubmitted
		s.waitForAllTasksRunning(name)

		// the job id should have changed
		jobBefore := newApp.Status.JobStatus.JobID
		newApp = s.mustGet(name)
		if newApp.Status.JobStatus.JobID == jobBefore {
			t.Errorf("after the rollback the job is still %s, want a resubmitted one", jobBefore)
		}
		// we should have restored from our savepoint
		if restored := s.restoredFrom(newApp); restored == nil || restored["is_savepoint"] != true {
			t.Errorf("resubmitted job %s restored %v, want the update's savepoint", newApp.Status.JobStatus.JobID, restored)
		}

		// and we should be able to roll forward by resubmitting with a fixed config
		s.updateAndValidate(name, func(app *v1beta1.FlinkApplication) {
			app.Spec.JarName = config.Spec.JarName
			app.Spec.RestartNonce = "rollback2"
		}, "")
	}

	// Test force rollback of an active deploy
	{
		// Lyft updates to lyft/badimage:latest, whose pods never start. kwok starts any image, so
		// the broken image is fault injection: every JobManager of the application started from
		// now on answers every REST call with an error, as one that never comes up; the running
		// cluster's is exempted.
		running := s.mustGet(name)
		env.Fleet.SetFaults(s.ns, name, flinksim.Faults{ErrorRate: map[string]float64{flinksim.AnyEndpoint: 1}})
		s.jobManager(name, running.Status.DeployHash).SetFaults(flinksim.Faults{})

		s.update(name, func(app *v1beta1.FlinkApplication) { app.Spec.Image = "lyft/badimage:latest" })
		s.waitPhase(name, v1beta1.PhaseClusterStarting)

		// User realizes error and cancels the deploy
		newApp := s.update(name, func(app *v1beta1.FlinkApplication) { app.Spec.ForceRollback = true })

		// we should end up in the DeployFailed phase
		s.waitPhase(name, v1beta1.PhaseDeployFailed)
		if !newApp.Spec.ForceRollback {
			t.Errorf("spec.forceRollback not set")
		}
		// but the job should still be running
		newApp = s.mustGet(name)
		if newApp.Status.JobStatus.State != v1beta1.JobRunning || newApp.Status.JobStatus.JobID != running.Status.JobStatus.JobID {
			t.Errorf("after forceRollback: job %s is %s, want %s RUNNING", newApp.Status.JobStatus.JobID,
				newApp.Status.JobStatus.State, running.Status.JobStatus.JobID)
		}

		// Fixing update: the fixed image starts.
		env.Fleet.SetFaults(s.ns, name, flinksim.Faults{})
		// and we should be able to roll forward by resubmitting with a fixed config
		s.updateAndValidate(name, func(app *v1beta1.FlinkApplication) {
			app.Spec.Image = newImage
			app.Spec.RestartNonce = "rollback3"
			app.Spec.ForceRollback = false
		}, "")
	}

	// delete the application and ensure everything is cleaned up successfully
	s.deleteApp(name)
	// validate that a savepoint was taken and the job was cancelled
	app := s.waitOnlyTestFinalizer(name)
	assertFinalSavepoint(s, app)
	if job := s.jobOverview(app); job["status"] != "CANCELED" {
		t.Errorf("job %s is %v after the delete, want CANCELED", jobID(app), job)
	}
	// delete our finalizer
	s.releaseTestFinalizer(name)
	// wait until all pods are gone
	s.waitNoPods("integTest=test_simple")
}

// assertFinalSavepoint is Lyft's c.Assert(app.Status.SavepointPath, NotNil) after a delete with
// deleteMode Savepoint. A Go string is never nil; what Lyft means, and flinkfsm documents
// (docs/migrating-from-lyft.md), is that status.savepointPath names the final savepoint: it is
// checked to be a savepoint of the deleted job, in storage.
func assertFinalSavepoint(s *scenario, app *v1beta1.FlinkApplication) {
	s.t.Helper()
	path := app.Status.SavepointPath
	snap, ok := env.Fleet.Storage().Get(path)
	if path == "" || !ok || !snap.Savepoint || snap.JobID != jobID(app) {
		s.t.Errorf("status.savepointPath %q after the delete: in storage %v, savepoint %v of job %s; want the final savepoint of job %s",
			path, ok, snap.Savepoint, snap.JobID, jobID(app))
	}
	if app.Status.FinalSavepointPath != path {
		s.t.Errorf("status.savepointPath %q, status.finalSavepointPath %q; want the same final savepoint", path, app.Status.FinalSavepointPath)
	}
}

// From Lyft's TestRecovery (simple_test.go): a job with externalized checkpoints starts failing;
// an update cannot take a savepoint, so the operator recovers from the externalized checkpoint and
// the new job reaches Running (Lyft's behaviour, which jobStabilizationPeriod 0 gives: the new job
// fails too until the failure is removed).
func TestRecovery(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)

	config := s.readTestApp()
	config.Name = "testrecoveryjob"
	config.Labels["integTest"] = "test_recovery"
	addEnv(config, "EXTERNAL_CHECKPOINT", "1")
	imageConfig(config)
	jarCheckpointing(config, true)
	s.createApp(config)
	name := config.Name

	// wait for it to be running
	s.waitPhase(name, v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed)
	s.waitForAllTasksRunning(name)

	// wait for checkpoints
	app := s.mustGet(name)
	s.eventually("a completed checkpoint", func() (bool, string) {
		res, err := s.flinkAPI(http.MethodGet, app, "jobs/"+app.Status.JobStatus.JobID+"/checkpoints")
		if err != nil {
			return false, err.Error()
		}
		latest, _ := res.(map[string]interface{})["latest"].(map[string]interface{})
		completed, _ := latest["completed"].(map[string]interface{})
		if completed == nil {
			return false, "none completed yet"
		}
		t.Logf("Checkpoint created %v", completed["external_path"])
		return true, ""
	})

	// cause the app to start failing. A job failing on every record never completes a savepoint;
	// the simulator's could, between two of the injected failures, if they came late.
	stopFailing := s.failingTasks(name)
	s.jobManager(name, app.Status.DeployHash).SetFaults(flinksim.Faults{FailSavepoints: true})
	defer stopFailing()
	time.Sleep(time.Second)

	// try to update the job
	app = s.update(name, func(app *v1beta1.FlinkApplication) { app.Spec.Image = newImage })
	oldJob := app.Status.JobStatus.JobID
	s.waitFor(name, "a new job launched", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.JobID != "" && a.Status.JobStatus.JobID != oldJob
	}, nil)
	newApp := s.waitNewJobRunning(name, oldJob, v1beta1.PhaseDeployFailed)

	// stop it from failing
	stopFailing()
	s.waitForAllTasksRunning(name)

	// Beyond Lyft's assertions: the new job started from the old job's externalized checkpoint,
	// as Flink saw it, after the failed savepoint sent the update through Recovering.
	if !testkit.HistoryHas(newApp, v1beta1.PhaseRecovering) {
		t.Errorf("no Recovering in the history: %s", testkit.Describe(newApp))
	}
	for _, r := range env.Fleet.Timeline().Jobs(s.ns + "/" + name) {
		if r.JobID != newApp.Status.JobStatus.JobID {
			continue
		}
		snap, ok := env.Fleet.Storage().Get(r.RestoredFrom)
		if !strings.Contains(r.RestoredFrom, "/chk-") || !ok || snap.Savepoint || snap.JobID != oldJob {
			t.Errorf("new job %s restored %q (in storage %v, of job %s); want a retained checkpoint of %s",
				r.JobID, r.RestoredFrom, ok, snap.JobID, oldJob)
		}
	}

	// delete the application
	s.deleteApp(name)
	s.waitNoPods("integTest=test_recovery")
}
