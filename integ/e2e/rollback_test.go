package e2e

import (
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A new job that fails right after starting is rolled back: the previous job runs again on the
// previous cluster, restored from the savepoint taken for the update, and the rollback counts as
// done only once that job's tasks run.
func TestFailingNewJobRollsBackToSavepoint(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", nil)
	oldJM := s.jobManager(old)
	oldHash, oldJob := old.Status.DeployHash, old.Status.JobStatus.JobID
	taskManagers := 2 // parallelism 3, 2 slots each

	// Jobs on clusters started from now on fail half a second after they run. The old cluster is
	// exempt, or the rollback's restarted job would fail too.
	env.Fleet.SetFaults(s.ns, old.Name, flinksim.Faults{FailJobsAfter: 500 * time.Millisecond})
	oldJM.SetFaults(flinksim.Faults{})
	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Parallelism = 4 })

	// Once the old job is cancelled for the update, its cluster loses its TaskManagers, so the job
	// the rollback restarts there is RUNNING without slots until they come back.
	s.pollUntil("old job cancelled for the update", 20*time.Millisecond, func() (bool, string) {
		r := s.record(old.Name, oldJob)
		return reached(r, "CANCELED"), states(r)
	})
	oldJM.SetTaskManagers(0)
	var restarted string
	s.pollUntil("the rollback restarts the job on the old cluster", 20*time.Millisecond, func() (bool, string) {
		if app, err := s.get(old.Name); err == nil && app.Status.Phase == v1beta1.PhaseRunning && app.Status.DeployHash != oldHash {
			t.Fatalf("the failing job was taken for a running one: %s", testkit.Describe(app))
		}
		for _, j := range oldJM.Jobs() {
			if j.ID != oldJob {
				restarted = j.ID
			}
		}
		return restarted != "", formatJobs(oldJM.Jobs())
	})
	for hold := time.Now().Add(jobStabilizationPeriod + time.Second); time.Now().Before(hold); time.Sleep(pollInterval) {
		if app, err := s.get(old.Name); err == nil && app.Status.Phase != v1beta1.PhaseRollingBack {
			t.Fatalf("left RollingBack while the restarted job %s could not run a task: %s", restarted, testkit.Describe(app))
		}
	}
	oldJM.SetTaskManagers(taskManagers)
	app := s.waitFor(old.Name, "DeployFailed after a rollback", inPhase(v1beta1.PhaseDeployFailed),
		func(a *v1beta1.FlinkApplication) bool {
			return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash != oldHash
		})

	if !testkit.HistoryHas(app, v1beta1.PhaseRollingBack) {
		t.Errorf("no RollingBack in the history: %s", testkit.Describe(app))
	}
	if app.Status.DeployHash != oldHash || app.Status.JobStatus.JobID != restarted {
		t.Errorf("after the rollback: deployHash %s, job %s; want %s, the restarted %s",
			app.Status.DeployHash, app.Status.JobStatus.JobID, oldHash, restarted)
	}
	job := s.jobByID(oldJM, restarted)
	s.assertRunningJob(job, 3)
	s.assertSavepointOf(job.RestoredFrom, oldJob)
	if j := s.jobByID(oldJM, oldJob); j.State != "CANCELED" {
		t.Errorf("original job %s is %s, want CANCELED", oldJob, j.State)
	}
	s.assertSavepointTriggers(oldJM, 1)
	var failedNew int
	for _, r := range s.timeline(app.Name) {
		if r.JobID != oldJob && r.JobID != restarted {
			failedNew++
			if !reached(r, "FAILED") || r.Parallelism != 4 {
				t.Errorf("new job %s (parallelism %d) went %s, want it FAILED", r.JobID, r.Parallelism, states(r))
			}
		}
	}
	if failedNew != 1 {
		t.Errorf("the simulator saw %d jobs of the failed update, want 1", failedNew)
	}
	s.waitClusterGone(app.Name, app.Status.FailedDeployHash)
}
