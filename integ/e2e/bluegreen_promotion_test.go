package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// blueGreenWith makes an application deploymentMode BlueGreen with these promotion knobs, checkpointing
// every second so that the health gate's checkpoints come quickly.
func blueGreenWith(bg v1beta1.BlueGreenSpec) func(*v1beta1.FlinkApplicationSpec) {
	return func(spec *v1beta1.FlinkApplicationSpec) {
		checkpointing(spec)
		spec.DeploymentMode = v1beta1.DeploymentModeBlueGreen
		spec.BlueGreen = &bg
	}
}

func int32p(v int32) *int32 { return &v }

// transitionInto is the reason of the last history entry into phase, and whether there is one.
func transitionInto(app *v1beta1.FlinkApplication, phase v1beta1.FlinkApplicationPhase) (string, bool) {
	for i := len(app.Status.History) - 1; i >= 0; i-- {
		if h := app.Status.History[i]; h.To == phase {
			return h.Reason, true
		}
	}
	return "", false
}

// lastRunningAt is when the job last began RUNNING, as the simulator recorded it.
func lastRunningAt(r flinksim.JobRecord) time.Time {
	var at time.Time
	for _, c := range r.States {
		if c.State == "RUNNING" {
			at = c.Time
		}
	}
	return at
}

// Auto promotion without any user action: an image change starts the new version (blue) beside the
// deployed one (green) from a savepoint taken without stopping it; once the new job has run with
// every task for promoteAfterSeconds and completed a checkpoint, green is torn down with a
// savepoint recorded in status.lastTeardown, its cluster deleted, and blue is deployed behind the
// application's Service. Two jobs in all, never more than those two at once.
func TestBlueGreenAutoPromotionPassesTheGateAndTearsDownTheOldVersion(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	const promoteAfter = 3
	old := s.createRunning("wordcount", blueGreenWith(v1beta1.BlueGreenSpec{
		Promotion: v1beta1.PromotionAuto, PromoteAfterSeconds: int32p(promoteAfter), MinCheckpoints: int32p(1)}))
	oldJM := s.jobManager(old)
	oldHash, oldJob := old.Status.DeployHash, old.Status.JobStatus.JobID
	if old.Status.DeployVersion != v1beta1.GreenFlinkApplication {
		t.Errorf("the first version is %q, want green", old.Status.DeployVersion)
	}

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	// DualRunning lasts only until the gate passes, a few seconds: the history says it was there.
	app := s.waitRunning(old.Name, oldHash)

	if !testkit.HistoryHas(app, v1beta1.PhaseDualRunning) {
		t.Errorf("the new version never ran beside the deployed one: %s", testkit.Describe(app))
	}
	if reason, _ := transitionInto(app, v1beta1.PhaseTeardown); reason != "Promoted" {
		t.Errorf("Teardown entered with reason %q, want Promoted: %s", reason, testkit.Describe(app))
	}
	st := app.Status
	if st.DeployVersion != v1beta1.BlueFlinkApplication || st.UpdatingVersion != "" || st.DeployHash != flink.ClusterHash(app) {
		t.Errorf("deployVersion %q, updatingVersion %q, deployHash %s; want blue alone, on the new spec's cluster %s",
			st.DeployVersion, st.UpdatingVersion, st.DeployHash, flink.ClusterHash(app))
	}
	s.waitClusterGone(app.Name, oldHash)
	generic, err := env.Kube.CoreV1().Services(s.ns).Get(s.ctx, app.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the application's Service: %v", err)
	}
	if got := generic.Spec.Selector[flink.HashLabel]; got != st.DeployHash {
		t.Errorf("the application's Service selects cluster %s, want the promoted %s", got, st.DeployHash)
	}

	// The old version stopped with a savepoint, recorded before its cluster went.
	lt := st.LastTeardown
	if lt == nil {
		t.Fatalf("no status.lastTeardown: %s", testkit.Describe(app))
	}
	if lt.Version != v1beta1.GreenFlinkApplication || lt.JobID != oldJob {
		t.Errorf("lastTeardown names version %q, job %s; want green, job %s", lt.Version, lt.JobID, oldJob)
	}
	s.assertSavepointOf(lt.SavepointPath, oldJob)
	s.assertSavepointTriggers(oldJM, 2) // one for the new version to start from, one at teardown

	jobs := s.assertJobCount(app.Name, 2)
	oldRec, newRec := jobs[0], jobs[1]
	if oldRec.JobID != oldJob || reached(oldRec, "RESTARTING") || reached(oldRec, "FAILED") {
		t.Errorf("old job %s went %s; want job %s, never restarted or failed", oldRec.JobID, states(oldRec), oldJob)
	}
	if _, ended := oldRec.AliveUntil(); !ended {
		t.Errorf("old job %s is still alive (%s) after the promotion", oldJob, states(oldRec))
	}
	if n := env.Fleet.Timeline().MostAlive(s.appKey(app.Name)); n != 2 {
		t.Errorf("at most %d jobs were alive at once; want the two versions side by side, never more", n)
	}

	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	if job.ID != newRec.JobID || job.ID != st.JobStatus.JobID {
		t.Errorf("the promoted cluster runs job %s; the timeline's new job is %s, status says %s", job.ID, newRec.JobID, st.JobStatus.JobID)
	}
	s.assertSavepointOf(job.RestoredFrom, oldJob)
	if job.RestoredFrom == lt.SavepointPath || job.RestoredFrom != st.JobStatus.RestorePath {
		t.Errorf("new job restored %q (status says %q); want the update's savepoint, not the teardown's %q",
			job.RestoredFrom, st.JobStatus.RestorePath, lt.SavepointPath)
	}
	// The gate held: the teardown savepoint, taken after the decision to promote, completed no sooner
	// than promoteAfterSeconds after the new job began running.
	teardownSavepoint, _ := env.Fleet.Storage().Get(lt.SavepointPath)
	if ran := teardownSavepoint.CreatedAt.Sub(lastRunningAt(newRec)); ran < promoteAfter*time.Second {
		t.Errorf("the old version was torn down %s after the new job began RUNNING (%s); want at least %ds",
			ran.Round(time.Millisecond), states(newRec), promoteAfter)
	}
}

// A new version whose job fails, or keeps restarting so that it never passes the health gate, is
// aborted within abortAfterSeconds of running beside the deployed one: its cluster is torn down and
// the application ends DeployFailed with reason BlueGreenAborted, while the deployed job runs on as
// the same job, never restarted.
func TestBlueGreenAbortedNewVersionLeavesTheDeployedJobUntouched(t *testing.T) {
	cases := []struct {
		name string
		// faults apply to jobs submitted after the old version runs: only the new version's.
		faults flinksim.Faults
		bg     v1beta1.BlueGreenSpec
		// cause is in status.reason: the job's failure, or the gate it did not pass in time.
		cause, notCause string
	}{
		{
			// It fails well after the jobStabilizationPeriod, so that the failure comes in DualRunning
			// (earlier it is a plain rollback), and long before abortAfterSeconds.
			name:   "NewJobFails",
			faults: flinksim.Faults{FailJobsAfter: 8 * time.Second},
			bg:     v1beta1.BlueGreenSpec{Promotion: v1beta1.PromotionAuto, AbortAfterSeconds: int32p(20)},
			cause:  "FAIL", notCause: "did not pass the health gate",
		},
		{
			// Each run lasts long enough to count as started, never as long as the gate asks.
			name:   "NewJobKeepsRestarting",
			faults: flinksim.Faults{RestartJobsEvery: 4 * time.Second},
			bg: v1beta1.BlueGreenSpec{Promotion: v1beta1.PromotionAuto, PromoteAfterSeconds: int32p(6),
				AbortAfterSeconds: int32p(8)},
			cause: "did not pass the health gate within 8s",
		},
	}
	// The cases run beside each other and beside the other tests, not before them.
	t.Parallel()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer stopEnvOnPanic()
			t.Parallel()
			s := newScenario(t)
			old := s.createRunning("wordcount", blueGreenWith(c.bg))
			oldJM := s.jobManager(old)
			oldHash, oldJob := old.Status.DeployHash, old.Status.JobStatus.JobID

			// The fleet's faults reach the JobManager started for the new version. FailJobsAfter and
			// RestartJobsEvery are taken by each job at its submission, so the running old job is
			// exempt anyway; clearing the old JobManager's copy keeps it so even if it got a job.
			env.Fleet.SetFaults(s.ns, old.Name, c.faults)
			oldJM.SetFaults(flinksim.Faults{})
			s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })

			dual := s.waitFor(old.Name, "DualRunning", inPhase(v1beta1.PhaseDualRunning), inPhase(v1beta1.PhaseDeployFailed))
			dualSince := time.Now()
			newHash := dual.Status.UpdatingHash
			if newHash == "" || newHash == oldHash {
				t.Fatalf("DualRunning with updatingHash %q beside %s: %s", newHash, oldHash, testkit.Describe(dual))
			}
			app := s.waitFor(old.Name, "DeployFailed after an abort", inPhase(v1beta1.PhaseDeployFailed),
				func(a *v1beta1.FlinkApplication) bool {
					return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash != oldHash
				})
			// Aborted within abortAfterSeconds of DualRunning, give or take a status poll and the
			// teardown itself.
			if took, limit := time.Since(dualSince), time.Duration(*c.bg.AbortAfterSeconds)*time.Second+10*time.Second; took > limit {
				t.Errorf("DeployFailed %s after DualRunning, want within %s", took.Round(100*time.Millisecond), limit)
			}

			st := app.Status
			if last := st.History[len(st.History)-1]; last.Reason != "BlueGreenAborted" {
				t.Errorf("last transition %s -> %s with reason %q, want BlueGreenAborted: %s", last.From, last.To, last.Reason, testkit.Describe(app))
			}
			if !strings.Contains(st.Reason, c.cause) || (c.notCause != "" && strings.Contains(st.Reason, c.notCause)) {
				t.Errorf("status.reason %q; want the cause %q", st.Reason, c.cause)
			}
			if st.DeployHash != oldHash || st.JobStatus.JobID != oldJob || st.DeployVersion != v1beta1.GreenFlinkApplication {
				t.Errorf("deployHash %s, job %s, version %q; want the untouched %s, job %s, green",
					st.DeployHash, st.JobStatus.JobID, st.DeployVersion, oldHash, oldJob)
			}
			if st.FailedDeployHash != newHash {
				t.Errorf("failedDeployHash %q, want the aborted %s", st.FailedDeployHash, newHash)
			}
			s.waitClusterGone(app.Name, newHash)

			// The deployed job is the same job, never restarted, and still RUNNING with all its tasks.
			s.assertRunningJob(s.onlyJob(oldJM), 3)
			s.assertSavepointTriggers(oldJM, 1) // the new version's state, taken without cancelling
			jobs := s.assertJobCount(app.Name, 2)
			oldRec, newRec := jobs[0], jobs[1]
			if oldRec.JobID != oldJob || reached(oldRec, "RESTARTING") || oldRec.States[len(oldRec.States)-1].State != "RUNNING" {
				t.Errorf("old job %s went %s; want job %s RUNNING, never restarted", oldRec.JobID, states(oldRec), oldJob)
			}
			if _, ended := newRec.AliveUntil(); !ended {
				t.Errorf("the aborted version's job %s is still alive (%s)", newRec.JobID, states(newRec))
			}
			if c.faults.RestartJobsEvery > 0 && !reached(newRec, "RESTARTING") || c.faults.FailJobsAfter > 0 && !reached(newRec, "FAILED") {
				t.Errorf("the new job %s went %s; the fault did not take", newRec.JobID, states(newRec))
			}
			if n := env.Fleet.Timeline().MostAlive(s.appKey(app.Name)); n != 2 {
				t.Errorf("at most %d jobs were alive at once; want the two versions side by side, never more", n)
			}
			if again, err := s.get(app.Name); err != nil {
				t.Errorf("reading %s again: %v", app.Name, err)
			} else if again.Status.Phase != v1beta1.PhaseDeployFailed {
				t.Errorf("the aborted spec is deployed again: %s", testkit.Describe(again))
			}
		})
	}
}
