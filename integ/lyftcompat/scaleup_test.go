package lyftcompat

import (
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// From Lyft's TestInPlaceScaleUp (scaleup_test.go; skipped in Lyft's CI for memory, which kwok
// does not need): with scaleMode InPlace, parallelism 2 → 4 goes through Rescaling and Savepointing
// to Running on the same TaskManager Deployment, now with two TaskManagers, the job restored from
// the savepoint; a normal deploy follows, then a delete with a savepoint.
func TestInPlaceScaleUp(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	const testName = "test_in_place_scale_up"
	const name = "inplace"

	// start a simple app
	config := s.readTestApp()
	config.Spec.ScaleMode = v1beta1.ScaleModeInPlace
	config.Spec.Parallelism = 2
	config.Name = name
	config.Labels["integTest"] = testName
	// add a finalizer so that the flinkapplication won't be deleted until we've had a chance to look at it
	config.Finalizers = append(config.Finalizers, testFinalizer)
	imageConfig(config)
	jarCheckpointing(config, false)
	s.createApp(config)

	s.waitPhase(name, v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed)
	s.waitForAllTasksRunning(name)
	s.assertPodImages("integTest="+testName, 2, config.Spec.Image)

	taskManagers := func() []string {
		deployments, err := env.Kube.AppsV1().Deployments(s.ns).List(s.ctx,
			metav1.ListOptions{LabelSelector: "flink-app=inplace,flink-deployment-type=taskmanager"})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range deployments.Items {
			names = append(names, d.Name)
		}
		return names
	}
	before := taskManagers()
	if len(before) != 1 {
		t.Fatalf("TaskManager Deployments %v, want 1", before)
	}
	oldJob := s.mustGet(name).Status.JobStatus.JobID

	// test updating the app with a new scale
	s.update(name, func(app *v1beta1.FlinkApplication) { app.Spec.Parallelism = 4 })
	s.waitPhase(name, v1beta1.PhaseRescaling, v1beta1.PhaseDeployFailed)
	s.waitPhase(name, v1beta1.PhaseSavepointing, v1beta1.PhaseDeployFailed)
	s.waitNewJobRunning(name, oldJob, v1beta1.PhaseDeployFailed)
	s.waitForAllTasksRunning(name)

	newApp := s.mustGet(name)
	// check that we savepointed and restored correctly
	if restored := s.restoredFrom(newApp); restored == nil || restored["is_savepoint"] != true {
		t.Errorf("rescaled job restored %v, want a savepoint", restored)
	}
	// check that we have the correct number of total pods
	s.eventually("3 pods", func() (bool, string) {
		n := len(s.pods("integTest=" + testName))
		return n == 3, "pods: " + strconv.Itoa(n)
	})
	// check that we are still using the same deployment
	if after := taskManagers(); len(after) != 1 || after[0] != before[0] {
		t.Errorf("TaskManager Deployments %v after the rescale, want still %v", after, before)
	}

	// ensure that we can now proceed to a normal deployment
	newApp = s.updateAndValidate(name, func(app *v1beta1.FlinkApplication) { app.Spec.Image = newImage }, v1beta1.PhaseDeployFailed)
	if newApp.Spec.Image != newImage {
		t.Errorf("spec.image %s, want %s", newApp.Spec.Image, newImage)
	}
	s.assertPodImages("integTest="+testName, 3, newImage)

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
	s.waitNoPods("integTest=" + testName)
}
