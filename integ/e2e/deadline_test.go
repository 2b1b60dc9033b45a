package e2e

import (
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// An operator that was down for longer than a phase's deadline carries on with what Flink completed
// meanwhile: time before its first pass does not count against the deadline. The suite's deadlines
// (a minute for a savepoint) are too long to wait out, and shortening them for every test would
// make the tests with flaky REST calls miss them; so these tests start the operator again with
// deadlines far shorter than their downtime.

// shortDeadline is the savepoint and cancel deadline of the operator these tests restart.
const shortDeadline = 3 * time.Second

var shortDeadlines = map[string]string{
	"savepointTimeout": shortDeadline.String(),
	"cancelTimeout":    shortDeadline.String(),
}

// restoreOperatorAtEnd puts the suite's operator back when the test ends, however it ended.
func restoreOperatorAtEnd(t *testing.T) {
	t.Cleanup(func() {
		env.KillOperator()
		if err := env.StartOperator(); err != nil {
			t.Errorf("restarting the operator: %v", err)
		}
	})
}

// killInPhase kills the operator and checks that the kill landed while the application was in phase.
func (s *scenario) killInPhase(name string, phase v1beta1.FlinkApplicationPhase) time.Time {
	s.t.Helper()
	env.KillOperator()
	killedAt := time.Now()
	app, err := s.get(name)
	if err != nil {
		s.t.Fatal(err)
	}
	if app.Status.Phase != phase {
		s.t.Fatalf("the kill did not land in %s: %s", phase, testkit.Describe(app))
	}
	return killedAt
}

// restartPastTheDeadlines keeps the operator down until well past shortDeadline and starts it with
// that deadline.
func (s *scenario) restartPastTheDeadlines(killedAt time.Time) {
	s.t.Helper()
	time.Sleep(time.Until(killedAt.Add(shortDeadline + 1500*time.Millisecond)))
	if err := env.StartOperatorWith(shortDeadlines); err != nil {
		s.t.Fatalf("restarting the operator: %v", err)
	}
}

// A Dual update whose operator dies right after it triggered the savepoint, and stays down past the
// savepoint deadline, restores the savepoint Flink completed meanwhile: no failed savepoint, no
// second savepoint, no fallback to a checkpoint.
func TestOperatorDownPastTheSavepointDeadlineRestoresTheSavepoint(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel: the other tests would lose their operator too.
	s := newScenario(t)
	restoreOperatorAtEnd(t)
	old := s.createRunning("wordcount", nil)
	oldJM := s.jobManager(old)
	oldJob := old.Status.JobStatus.JobID

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	s.pollUntil("savepoint triggered", 20*time.Millisecond, func() (bool, string) {
		return oldJM.SavepointTriggers() > 0, "no savepoint trigger yet"
	})
	killedAt := s.killInPhase(old.Name, v1beta1.PhaseSavepointing)
	s.eventually("job cancelled with its savepoint", func() (bool, string) {
		r := s.record(old.Name, oldJob)
		return reached(r, "CANCELED"), states(r)
	})
	s.restartPastTheDeadlines(killedAt)

	app := s.waitRunning(old.Name, old.Status.DeployHash)
	if testkit.HistoryHas(app, v1beta1.PhaseRecovering) {
		t.Errorf("the savepoint was given up: %s", testkit.Describe(app))
	}
	s.assertSavepointTriggers(oldJM, 1)
	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	s.assertSavepointOf(job.RestoredFrom, oldJob)
	if sps := savepointsOf(oldJob); len(sps) != 1 || sps[0].Path != job.RestoredFrom || job.RestoredFrom != app.Status.JobStatus.RestorePath {
		t.Errorf("new job restored %q (status says %q); want the one savepoint Flink completed: %v",
			job.RestoredFrom, app.Status.JobStatus.RestorePath, sps)
	}
	s.assertJobCount(app.Name, 2)
	s.waitClusterGone(app.Name, old.Status.DeployHash)
}

// A Single LastState update whose operator dies right after it cancelled the job, and stays down
// past the cancel deadline, starts exactly one new job from the newest checkpoint of the cancelled one.
func TestOperatorDownPastTheCancelDeadlineRestoresTheNewestCheckpoint(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel, as above.
	s := newScenario(t)
	restoreOperatorAtEnd(t)
	old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
		checkpointing(spec)
		spec.UpgradeMode = v1beta1.UpgradeModeLastState
		spec.DeploymentMode = v1beta1.DeploymentModeSingle
	})
	oldJM := s.jobManager(old)
	oldJob := old.Status.JobStatus.JobID
	s.waitCheckpoints(oldJob, 2)

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	s.pollUntil("cancel issued", 20*time.Millisecond, func() (bool, string) {
		r := s.record(old.Name, oldJob)
		return reached(r, "CANCELLING"), states(r)
	})
	killedAt := s.killInPhase(old.Name, v1beta1.PhaseCancelling)
	s.eventually("job cancelled with no operator watching", func() (bool, string) {
		r := s.record(old.Name, oldJob)
		return reached(r, "CANCELED"), states(r)
	})
	s.restartPastTheDeadlines(killedAt)

	app := s.waitRunning(old.Name, old.Status.DeployHash)
	if testkit.HistoryHas(app, v1beta1.PhaseRollingBack) || testkit.HistoryHas(app, v1beta1.PhaseSavepointing) {
		t.Errorf("want Cancelling straight to the new job: %s", testkit.Describe(app))
	}
	s.assertSavepointTriggers(oldJM, 0)
	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	s.assertNewestCheckpointOf(job.RestoredFrom, oldJob)
	if job.RestoredFrom != app.Status.JobStatus.RestorePath {
		t.Errorf("Flink restored %q, status.jobStatus.restorePath says %q", job.RestoredFrom, app.Status.JobStatus.RestorePath)
	}
	s.assertJobCount(app.Name, 2)
	s.waitClusterGone(app.Name, old.Status.DeployHash)
}

// A suspend whose operator dies right after it triggered the savepoint, and stays down past the
// savepoint deadline, ends Suspended with the savepoint Flink completed recorded, and no job.
func TestOperatorDownPastTheSavepointDeadlineSuspendsWithTheSavepoint(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel, as above.
	s := newScenario(t)
	restoreOperatorAtEnd(t)
	old := s.createRunning("wordcount", nil)
	oldJM := s.jobManager(old)
	oldJob := old.Status.JobStatus.JobID

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.State = v1beta1.JobStateSuspended })
	s.pollUntil("savepoint triggered", 20*time.Millisecond, func() (bool, string) {
		return oldJM.SavepointTriggers() > 0, "no savepoint trigger yet"
	})
	killedAt := s.killInPhase(old.Name, v1beta1.PhaseSavepointing)
	s.eventually("job cancelled with its savepoint", func() (bool, string) {
		r := s.record(old.Name, oldJob)
		return reached(r, "CANCELED"), states(r)
	})
	s.restartPastTheDeadlines(killedAt)

	app := s.waitFor(old.Name, string(v1beta1.PhaseSuspended), inPhase(v1beta1.PhaseSuspended), inPhase(v1beta1.PhaseDeployFailed))
	s.waitClusterGone(app.Name, old.Status.DeployHash)
	if testkit.HistoryHas(app, v1beta1.PhaseRecovering) {
		t.Errorf("the savepoint was given up: %s", testkit.Describe(app))
	}
	s.assertSavepointTriggers(oldJM, 1)
	sps := savepointsOf(oldJob)
	if len(sps) != 1 || app.Status.SavepointPath != sps[0].Path {
		t.Errorf("status.savepointPath %q; want the one savepoint Flink completed: %v", app.Status.SavepointPath, sps)
	}
	s.assertSavepointOf(app.Status.SavepointPath, oldJob)
	if js := app.Status.JobStatus; js.JobID != "" || (js.State != "" && !isTerminal(js.State)) {
		t.Errorf("a suspended application with no job alive records job %q in state %s", js.JobID, js.State)
	}
	if r := s.assertJobCount(app.Name, 1)[0]; !reached(r, "CANCELED") {
		t.Errorf("suspended job %s went %s, want it CANCELED", oldJob, states(r))
	}
}

// A Single LastState update whose cancel takes longer than the cancel deadline is rolled back. The
// job was cancelled meanwhile, so the rollback starts it again: from its newest checkpoint, as
// every path that starts a job after its predecessor stopped does, never without state. (A cancel
// deadline shorter than the simulator's 300 ms cancel stands in for a slow cancel.)
func TestCancelOutlastingTheDeadlineRollsBackFromTheNewestCheckpoint(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel: the operator runs with a deadline the other tests could not meet.
	s := newScenario(t)
	restoreOperatorAtEnd(t)
	env.KillOperator()
	if err := env.StartOperatorWith(map[string]string{"cancelTimeout": "100ms", "waitPollInterval": "50ms"}); err != nil {
		t.Fatalf("restarting the operator: %v", err)
	}
	old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
		checkpointing(spec)
		spec.UpgradeMode = v1beta1.UpgradeModeLastState
		spec.DeploymentMode = v1beta1.DeploymentModeSingle
	})
	oldHash, oldJob := old.Status.DeployHash, old.Status.JobStatus.JobID
	s.waitCheckpoints(oldJob, 2)

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	app := s.waitFor(old.Name, "DeployFailed after a rollback", inPhase(v1beta1.PhaseDeployFailed),
		func(a *v1beta1.FlinkApplication) bool {
			return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash != oldHash
		})

	if !testkit.HistoryHas(app, v1beta1.PhaseRollingBack) {
		t.Errorf("no RollingBack in the history: %s", testkit.Describe(app))
	}
	if r := s.record(app.Name, oldJob); !reached(r, "CANCELED") {
		t.Fatalf("old job %s went %s, want it CANCELED", oldJob, states(r))
	}
	if app.Status.DeployHash != oldHash {
		t.Errorf("rolled back to cluster %s, want %s", app.Status.DeployHash, oldHash)
	}
	job := s.jobByID(s.jobManager(app), app.Status.JobStatus.JobID)
	s.assertRunningJob(job, 3)
	if job.RestoredFrom == "" {
		t.Errorf("the rollback restarted job %s without state, although job %s left checkpoints %v", job.ID, oldJob, checkpointsOf(oldJob))
	} else {
		s.assertNewestCheckpointOf(job.RestoredFrom, oldJob)
	}
	s.assertJobCount(app.Name, 2)
}

// isTerminal tells whether a job state is globally terminal: the job runs no more.
func isTerminal(state v1beta1.JobState) bool {
	return state == v1beta1.JobCanceled || state == v1beta1.JobFailed || state == v1beta1.JobFinished
}
