package e2e

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// An operator killed right after it triggered the update's savepoint resumes that savepoint when it
// comes back: no second savepoint, one new job, never two jobs at once.
func TestOperatorKilledWhileSavepointingResumes(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel: the other tests would lose their operator too. Parallel tests wait for this one.
	s := newScenario(t)
	t.Cleanup(func() { _ = env.StartOperator() }) // a no-op unless the test stopped half-way
	old := s.createRunning("wordcount", nil)
	oldJM := s.jobManager(old)
	oldJob := old.Status.JobStatus.JobID

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	// The savepoint takes a second in the simulator; the kill lands well inside it.
	s.pollUntil("savepoint triggered", 20*time.Millisecond, func() (bool, string) {
		return oldJM.SavepointTriggers() > 0, "no savepoint trigger yet"
	})
	env.KillOperator()
	killed, err := s.get(old.Name)
	if err != nil {
		t.Fatal(err)
	}
	if killed.Status.Phase != v1beta1.PhaseSavepointing || killed.Status.SavepointTriggerID == "" {
		t.Errorf("the kill did not land in Savepointing with a recorded trigger: %s", testkit.Describe(killed))
	}
	if err := env.StartOperator(); err != nil {
		t.Fatalf("restarting the operator: %v", err)
	}

	app := s.waitRunning(old.Name, old.Status.DeployHash)
	s.assertSavepointTriggers(oldJM, 1)
	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	s.assertSavepointOf(job.RestoredFrom, oldJob)
	if n := len(s.timeline(app.Name)); n != 2 {
		t.Errorf("the simulator saw %d jobs of %s, want the old one and one new one", n, app.Name)
	}
}

// An operator killed while it takes the final savepoint of a deleted application records that
// savepoint when it comes back, although the savepoint's cancel has ended the job meanwhile.
func TestOperatorKilledDuringFinalSavepointRecordsIt(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel, as above.
	s := newScenario(t)
	t.Cleanup(func() { _ = env.StartOperator() })
	app := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) { spec.DeleteMode = v1beta1.DeleteModeSavepoint })
	jm := s.jobManager(app)
	jobID := app.Status.JobStatus.JobID

	if err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Delete(s.ctx, app.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	s.pollUntil("final savepoint triggered", 20*time.Millisecond, func() (bool, string) {
		return jm.SavepointTriggers() > 0, "no savepoint trigger yet"
	})
	env.KillOperator()
	// With no operator watching, Flink completes the savepoint and the cancel that comes with it.
	s.eventually("job cancelled with its final savepoint", func() (bool, string) {
		r := s.record(app.Name, jobID)
		return reached(r, "CANCELED"), states(r)
	})
	if err := env.StartOperator(); err != nil {
		t.Fatalf("restarting the operator: %v", err)
	}

	s.waitGone(app.Name)
	s.assertSavepointTriggers(jm, 1)
	savepoints := savepointsOf(jobID)
	if len(savepoints) != 1 {
		t.Fatalf("job %s has %d savepoints in storage, want the final one", jobID, len(savepoints))
	}
	s.waitFinalSavepointEvent(app.Name, savepoints[0].Path)
}

// An operator killed while a Single-mode LastState update cancels the job comes back to a CANCELED
// job and a cluster it has not replaced yet: it reads the job's newest checkpoint, replaces the
// cluster and starts exactly one new job from that checkpoint.
func TestOperatorKilledWhileCancellingForLastStateResumes(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel, as above.
	s := newScenario(t)
	t.Cleanup(func() { _ = env.StartOperator() })
	old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
		checkpointing(spec)
		spec.UpgradeMode = v1beta1.UpgradeModeLastState
		spec.DeploymentMode = v1beta1.DeploymentModeSingle
	})
	oldJob := old.Status.JobStatus.JobID
	s.waitCheckpoints(oldJob, 2)

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	s.pollUntil("cancel issued", 20*time.Millisecond, func() (bool, string) {
		r := s.record(old.Name, oldJob)
		return reached(r, "CANCELLING"), states(r)
	})
	env.KillOperator()
	s.eventually("job cancelled with no operator watching", func() (bool, string) {
		r := s.record(old.Name, oldJob)
		return reached(r, "CANCELED"), states(r)
	})
	if err := env.StartOperator(); err != nil {
		t.Fatalf("restarting the operator: %v", err)
	}

	app := s.waitRunning(old.Name, old.Status.DeployHash)
	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	s.assertNewestCheckpointOf(job.RestoredFrom, oldJob)
	if n := len(s.timeline(app.Name)); n != 2 {
		t.Errorf("the simulator saw %d jobs of %s, want the old one and one new one", n, app.Name)
	}
	s.waitClusterGone(app.Name, old.Status.DeployHash)
}
