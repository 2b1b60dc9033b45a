package portable

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/cli"
)

// Every test here sees the operator only through the Kubernetes API: status, Events, the objects it
// owns, and `kubectl flink`. What Flink itself did is checked where the simulator can tell
// (integ/e2e); here the same story must hold on any cluster.

// A new application runs its job: `kubectl flink wait` returns when it does, status names the job
// and says Ready, and the cluster's Deployments and Services belong to the application. The exit
// codes a CI pipeline reads: a timeout, and an application that is not there.
func TestCreateRunsTheJob(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	s.create("statemachine", nil)
	if code, _, errOut := s.plugin("wait", "statemachine", "--timeout", target.WaitTimeout.String()); code != cli.ExitOK {
		t.Fatalf("kubectl flink wait: exit %d, want %d: %s", code, cli.ExitOK, errOut)
	}
	app, err := s.get("statemachine")
	if err != nil {
		t.Fatal(err)
	}
	st := app.Status
	if st.Phase != v1beta1.PhaseRunning || st.JobStatus.JobID == "" || st.JobStatus.State != v1beta1.JobRunning {
		t.Errorf("after wait: %s", testkit.Describe(app))
	}
	if ready(app) != metav1.ConditionTrue {
		t.Errorf("Running with Ready %s: %+v", ready(app), st.Conditions)
	}
	if st.JobStatus.JarName != target.Jar {
		t.Errorf("status.jobStatus.jarName %q, want %q", st.JobStatus.JarName, target.Jar)
	}

	// The cluster is the application's: garbage collection takes it with the application.
	deploys, err := s.c.Kube.AppsV1().Deployments(s.ns).List(s.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	services, err := s.c.Kube.CoreV1().Services(s.ns).List(s.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(deploys.Items) < 2 || len(services.Items) < 1 {
		t.Errorf("%d Deployments and %d Services, want a JobManager's and a TaskManager's and a Service", len(deploys.Items), len(services.Items))
	}
	owned := func(kind, name string, refs []metav1.OwnerReference) {
		for _, r := range refs {
			if r.UID == app.UID && r.Kind == "FlinkApplication" && r.Controller != nil && *r.Controller {
				return
			}
		}
		t.Errorf("%s %s is not controlled by FlinkApplication %s: owners %+v", kind, name, app.Name, refs)
	}
	for _, d := range deploys.Items {
		owned("Deployment", d.Name, d.OwnerReferences)
	}
	for _, svc := range services.Items {
		owned("Service", svc.Name, svc.OwnerReferences)
	}

	if code, _, _ := s.plugin("wait", "statemachine", "--for", "Suspended", "--timeout", "2s"); code != cli.ExitTimeout {
		t.Errorf("waiting for a phase that does not come: exit %d, want %d", code, cli.ExitTimeout)
	}
	if code, _, _ := s.plugin("status", "nothing-here"); code != cli.ExitError {
		t.Errorf("status of a missing application: exit %d, want %d", code, cli.ExitError)
	}
}

// A spec update (the parallelism) replaces the job with one restored from the savepoint the update
// took, as status records it, and the old cluster goes.
func TestSpecUpdateRestoresTheNewJobFromItsSavepoint(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	s.needsSharedState()
	old := s.createRunning("statemachine", nil)

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Parallelism = 2 })
	app := s.waitRunning(old.Name, old.Status.DeployHash)
	st := app.Status
	if st.JobStatus.JobID == old.Status.JobStatus.JobID {
		t.Errorf("the job kept its id %s across the update", st.JobStatus.JobID)
	}
	sp := savepointRecord(app, v1beta1.SavepointUpgrade)
	if sp == nil || sp.Result != "Completed" || sp.Path == "" {
		t.Fatalf("status.savepoints has no completed Upgrade savepoint: %+v", st.Savepoints)
	}
	if st.JobStatus.RestorePath != sp.Path {
		t.Errorf("the new job restored %q, the update's savepoint is %q", st.JobStatus.RestorePath, sp.Path)
	}
	if stable := st.Deployments.Stable; stable == nil || stable.JobID != st.JobStatus.JobID || stable.RestorePath != sp.Path {
		t.Errorf("the stable deployment is %+v, want job %s restored from %s", stable, st.JobStatus.JobID, sp.Path)
	}
	s.waitClusterGone(app.Name, old.Status.DeployHash)
}

// Suspending stops the job with a savepoint, records it and deletes the cluster; `kubectl flink
// wait` for Running then fails at once rather than time out; resuming starts a job from exactly the
// recorded savepoint.
func TestSuspendAndResumeFromTheRecordedSavepoint(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	s.needsSharedState()
	old := s.createRunning("statemachine", nil)

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.State = v1beta1.JobStateSuspended })
	suspended := s.waitFor(old.Name, "Suspended", inPhase(v1beta1.PhaseSuspended), inPhase(v1beta1.PhaseDeployFailed))
	recorded := suspended.Status.SavepointPath
	if sp := savepointRecord(suspended, v1beta1.SavepointSuspend); recorded == "" || sp == nil || sp.Result != "Completed" || sp.Path != recorded {
		t.Fatalf("suspended with savepointPath %q and savepoints %+v, want a completed Suspend savepoint there", recorded, suspended.Status.Savepoints)
	}
	if suspended.Status.JobStatus.JobID != "" {
		t.Errorf("a suspended application records job %s", suspended.Status.JobStatus.JobID)
	}
	s.waitClusterGone(old.Name, old.Status.DeployHash)
	if code, _, _ := s.plugin("wait", old.Name, "--timeout", "10s"); code != cli.ExitFailed {
		t.Errorf("waiting for Running while Suspended: exit %d, want %d", code, cli.ExitFailed)
	}

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.State = v1beta1.JobStateRunning })
	app := s.waitRunning(old.Name, "")
	if app.Status.JobStatus.RestorePath != recorded {
		t.Errorf("the resumed job restored %q, want the recorded %q", app.Status.JobStatus.RestorePath, recorded)
	}
	if app.Status.JobStatus.JobID == old.Status.JobStatus.JobID {
		t.Errorf("the resumed job has the suspended one's id %s", app.Status.JobStatus.JobID)
	}
}

// Deleting an application with deleteMode Savepoint stops its job with a final savepoint, reported
// in a FinalSavepoint Event that outlives the application, before the application goes.
func TestDeleteWithSavepointReportsTheFinalSavepoint(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	app := s.createRunning("statemachine", func(spec *v1beta1.FlinkApplicationSpec) { spec.DeleteMode = v1beta1.DeleteModeSavepoint })
	jobID := app.Status.JobStatus.JobID
	if err := s.c.Apps.FlinkV1beta1().FlinkApplications(s.ns).Delete(s.ctx, app.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	// While it is deleted, status names the final savepoint before the finalizer goes.
	var final string
	s.eventually(app.Name+" deleted", func() (bool, string) {
		a, err := s.get(app.Name)
		if err != nil {
			return strings.Contains(err.Error(), "not found"), err.Error()
		}
		if a.Status.FinalSavepointPath != "" {
			final = a.Status.FinalSavepointPath
		}
		return false, testkit.Describe(a)
	})
	// Events are recorded asynchronously, possibly after the application is gone; the last one
	// about a deletion is Deleted.
	s.eventually("a FinalSavepoint Event", func() (bool, string) {
		var reasons []string
		for _, e := range s.events(app.Name) {
			if e.Reason == "FinalSavepoint" && strings.Contains(e.Message, jobID) && strings.Contains(e.Message, "savepoint-") {
				if final != "" && !strings.Contains(e.Message, final) {
					t.Errorf("the FinalSavepoint Event says %q, status said %q", e.Message, final)
				}
				return true, ""
			}
			reasons = append(reasons, e.Reason)
		}
		if len(reasons) > 0 && reasons[len(reasons)-1] == "Deleted" {
			t.Fatalf("the deletion finished without a FinalSavepoint Event about job %s; events: %s", jobID, strings.Join(reasons, ", "))
		}
		return false, fmt.Sprintf("events so far: %s", strings.Join(reasons, ", "))
	})
}
