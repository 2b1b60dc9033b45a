package flinkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// The scenarios of the job-truth redesign: ordinary failures that used to run two jobs, restore the
// wrong state or leave a lost job reported as running. Each ends by checking that Flink never ran
// two jobs of the application at once and that no transition was refused.

// restartOperator replaces the operator process: a new Environment over the same clients, which
// remembers nothing of the old one.
func (w *world) restartOperator() {
	old := w.env
	w.env = &Environment{Environment: kindpass.Environment{
		Kube: old.Kube, Apps: old.Apps, Flink: old.Flink, FlinkURL: old.FlinkURL, Clock: old.Clock,
		Recorder: old.Recorder, Config: old.Config, Observer: old.Observer, Metrics: old.Metrics,
		Sessions: old.Sessions, Jars: old.Jars, ReadsInOrder: old.ReadsInOrder,
	}}
	if old.Book != nil {
		// What the old process noted and did not write yet is lost with it.
		w.env.Book = checkpointbook.New(old.Kube, nil)
	}
}

// downFor lets simulated time pass with no operator running, while Flink goes on.
func (w *world) downFor(d time.Duration) {
	for end := w.clock.Now().Add(d); w.clock.Now().Before(end); {
		w.clock.Step(maxStep)
		w.settle()
	}
}

// passes runs n reconciles.
func (w *world) passes(name string, n int) {
	for i := 0; i < n; i++ {
		_, _ = w.reconcile(name)
	}
}

// assertOneJobAtATime checks the invariants every scenario ends with.
func (w *world) assertOneJobAtATime(events []string) {
	w.t.Helper()
	assert.Empty(w.t, w.timeline.Overlaps(ns+"/wc"), "never two live jobs")
	assert.NotContains(w.t, eventReasons(events), "InvalidTransition")
}

func jobIDs(w *world) []string {
	var ids []string
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		ids = append(ids, j.JobID)
	}
	return ids
}

// A savepoint usually fails because a TaskManager is not ready. While the old JobManager also
// answers GET /jobs/:id with errors, the old job's state is unknown: nothing is submitted until it
// is known to be cancelled.
func TestUnreadyClusterAndRESTErrorsDuringRecoveryNeverStartASecondJob(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	oldJM := w.jm(old, old.Status.DeployHash)
	oldJM.SetFaults(flinksim.Faults{FailSavepoints: true, ErrorRate: map[string]float64{flinksim.EndpointJob: 1}})
	w.notReady[flink.TaskManagerName(old, old.Status.DeployHash)] = true

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	w.runUntilPhase("wc", v1beta1.PhaseRecovering)
	w.passes("wc", 4)
	require.Len(t, w.timeline.Jobs(ns+"/wc"), 1, "nothing submitted while the old job's state is unknown")

	oldJM.SetFaults(flinksim.Faults{FailSavepoints: true})
	w.notReady = map[string]bool{}
	app := w.runUntil("wc", "settled", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	if app.Status.Phase == v1beta1.PhaseRunning {
		jobs := w.timeline.Jobs(ns + "/wc")
		assert.Contains(t, jobs[len(jobs)-1].RestoredFrom, "/chk-")
	}
	w.assertOneJobAtATime(w.events())
}

// With Flink HA, a JobManager created again under the same cluster id recovers the job itself: the
// operator adopts it instead of submitting a second one.
func TestJobManagerRecoveryWithHAAdoptsTheRecoveredJob(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig["high-availability.type"] = "kubernetes"
		s.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/ha"
	})
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(old, old.Status.DeployHash), metav1.DeleteOptions{}))
	app := w.runUntil("wc", "recovered", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.State == v1beta1.JobRunning &&
			len(a.Status.History) > len(old.Status.History)
	})
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID, "the recovered job is adopted")
	for _, id := range jobIDs(w) {
		assert.Equal(t, old.Status.JobStatus.JobID, id, "no second job")
	}
	w.assertOneJobAtATime(w.events())
}

// A JobManager process that restarts without HA (an OOMKill) loses the job while its Deployment
// stays. The job is reported lost, not running, and started again on the same cluster from its
// newest checkpoint.
func TestJobLostWithAJobManagerRestartIsRecoveredFromItsCheckpoint(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.jm(old, old.Status.DeployHash).Restart()
	w.reconcile("wc")
	assert.Equal(t, metav1.ConditionFalse, condition(w.get("wc"), v1beta1.ConditionReady).Status, "not ready while the JobManager has no leader")

	lost := w.runUntil("wc", "job lost", func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == v1beta1.PhaseSubmitting })
	assert.Equal(t, "JobLost", condition(lost, v1beta1.ConditionReady).Reason)
	app := w.runUntil("wc", "job running again", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != old.Status.JobStatus.JobID &&
			a.Status.JobStatus.State == v1beta1.JobRunning
	})
	events := w.events()
	assert.Contains(t, eventReasons(events), "JobLost")
	assert.Equal(t, old.Status.DeployHash, app.Status.DeployHash, "same cluster")
	jobs := w.timeline.Jobs(ns + "/wc")
	require.Len(t, jobs, 2)
	assert.Contains(t, jobs[1].RestoredFrom, "/chk-")
	w.assertOneJobAtATime(events)
}

// A submission whose answer is lost may still start the job. On each path that starts a job on a
// cluster that already ran one, the operator waits for it rather than calling it refused and
// starting another.
func TestUnansweredSubmissionOnTheInPlacePathsStartsOneJob(t *testing.T) {
	lostAnswers := flinksim.Faults{SubmitRegistersAfter: 3 * time.Second}
	cases := []struct {
		name string
		spec func(*v1beta1.FlinkApplicationSpec)
		// change starts the path, with submissions losing their answers from then on.
		change func(w *world, old *v1beta1.FlinkApplication)
		jobs   int
		// ends is the phase and the words of the reason the path ends with.
		ends   v1beta1.FlinkApplicationPhase
		reason string
	}{
		{"in-place rescale", func(s *v1beta1.FlinkApplicationSpec) { s.ScaleMode = v1beta1.ScaleModeInPlace },
			func(w *world, old *v1beta1.FlinkApplication) {
				w.jm(old, old.Status.DeployHash).SetFaults(lostAnswers)
				w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 6 })
			}, 2, v1beta1.PhaseRunning, "running on"},
		{"restartFailedJob", func(s *v1beta1.FlinkApplicationSpec) { s.RestartFailedJob = true },
			func(w *world, old *v1beta1.FlinkApplication) {
				jm := w.jm(old, old.Status.DeployHash)
				jm.SetFaults(lostAnswers)
				require.True(t, jm.FailJobNow(old.Status.JobStatus.JobID))
			}, 2, v1beta1.PhaseRunning, "running on"},
		{"rollback's restart", func(s *v1beta1.FlinkApplicationSpec) { s.DeploymentMode = v1beta1.DeploymentModeSingle },
			func(w *world, _ *v1beta1.FlinkApplication) {
				w.imageFaults["flink-wordcount:1"] = lostAnswers
				w.imageFaults["flink-wordcount:2"] = flinksim.Faults{FailJobsAfter: time.Second}
				w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
			}, 3, v1beta1.PhaseDeployFailed, "previous job restarted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			old := runningWith(t, w, "wc", c.spec)
			c.change(w, old)
			app := w.runUntil("wc", "a new job runs stable", func(a *v1beta1.FlinkApplication) bool {
				return (a.Status.Phase == v1beta1.PhaseRunning || a.Status.Phase == v1beta1.PhaseDeployFailed) &&
					a.Status.JobStatus.JobID != old.Status.JobStatus.JobID && a.Status.JobStatus.State == v1beta1.JobRunning
			})
			assert.Equal(t, c.ends, app.Status.Phase)
			assert.Contains(t, app.Status.Reason, c.reason)
			w.passes("wc", 20)
			assert.Len(t, w.timeline.Jobs(ns+"/wc"), c.jobs, "jobs Flink ran")
			w.assertOneJobAtATime(w.events())
		})
	}
}

// Flink finished the savepoint with cancel while nobody was looking, and the phase's deadline
// passed meanwhile (status keeps times in whole seconds, so deadlines here are seconds long). The completed savepoint is what the next job restores, not an older checkpoint.
func TestSavepointCompletedAfterTheDeadlineIsUsed(t *testing.T) {
	for _, restart := range []bool{false, true} {
		name := "operator kept running"
		if restart {
			name = "operator restarted"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.env.Config.SavepointTimeout.Duration = 2 * time.Second
			old := running(t, w, "wc")
			oldJM := w.jm(old, old.Status.DeployHash)
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
			w.runUntil("wc", "savepoint triggered", func(*v1beta1.FlinkApplication) bool { return oldJM.SavepointTriggers() > 0 })
			w.downFor(5 * time.Second)
			if restart {
				w.restartOperator()
			}
			app := w.runUntil("wc", "upgraded", upgradedFrom(old))
			jobs := w.jm(app, app.Status.DeployHash).Jobs()
			require.Len(t, jobs, 1)
			assert.Contains(t, jobs[0].RestoredFrom, "savepoint-", "the savepoint Flink completed")
			assert.Equal(t, 1, savepointsTaken(w))
			w.assertOneJobAtATime(w.events())
		})
	}
}

// The operator is down for longer than the cancel deadline of a Single LastState update, and of
// the savepoint deadline of a suspend, while Flink finishes what it was asked. When it comes back
// it carries on with the state Flink completed.
func TestOperatorDownPastTheDeadlinesCarriesOnWithWhatFlinkCompleted(t *testing.T) {
	t.Run("Single LastState update", func(t *testing.T) {
		w := newWorld(t)
		w.env.Config.CancelTimeout.Duration = 2 * time.Second
		old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
			s.DeploymentMode = v1beta1.DeploymentModeSingle
			s.UpgradeMode = v1beta1.UpgradeModeLastState
		})
		oldJM := w.jm(old, old.Status.DeployHash)
		w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
		w.runUntil("wc", "cancel issued", func(*v1beta1.FlinkApplication) bool {
			jobs := oldJM.Jobs()
			return len(jobs) == 1 && jobs[0].State != "RUNNING"
		})
		w.downFor(10 * time.Second)
		w.restartOperator()
		app := w.runUntil("wc", "upgraded", upgradedFrom(old))
		jobs := w.timeline.Jobs(ns + "/wc")
		require.Len(t, jobs, 2)
		assert.Contains(t, jobs[1].RestoredFrom, "/chk-")
		assert.Equal(t, app.Status.JobStatus.JobID, jobs[1].JobID)
		w.assertOneJobAtATime(w.events())
	})
	t.Run("suspend", func(t *testing.T) {
		w := newWorld(t)
		w.env.Config.SavepointTimeout.Duration = 2 * time.Second
		old := running(t, w, "wc")
		oldJM := w.jm(old, old.Status.DeployHash)
		w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
		w.runUntil("wc", "savepoint triggered", func(*v1beta1.FlinkApplication) bool { return oldJM.SavepointTriggers() > 0 })
		w.downFor(10 * time.Second)
		w.restartOperator()
		app := w.runUntilPhase("wc", v1beta1.PhaseSuspended)
		assert.Contains(t, app.Status.SavepointPath, "savepoint-", "suspended with the savepoint Flink completed")
		assert.Equal(t, 1, savepointsTaken(w))
		w.passes("wc", 10)
		assert.Equal(t, 1, savepointsTaken(w), "no savepoint triggered again")
		w.assertOneJobAtATime(w.events())
	})
}

// Flink before 1.15 has no trigger id, refuses a savepoint request that names one, and answers with
// an id of its own: the operator leaves the id out and follows Flink's, so an update takes one
// savepoint and restores it.
func TestSavepointOnFlinkBefore115FollowsFlinksRequestID(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.FlinkVersion = "1.14" })
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))
	assert.Equal(t, 1, savepointsTaken(w))
	assert.True(t, strings.Contains(w.jm(app, app.Status.DeployHash).Jobs()[0].RestoredFrom, "savepoint-"))
	w.assertOneJobAtATime(w.events())
}

// An application deleted in the middle of an update, after its job was stopped with a savepoint and
// before the new job ran, keeps the address of that savepoint: in finalSavepointPath and an Event.
func TestDeletedMidUpdateKeepsTheUpdatesSavepoint(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.imageFaults["flink-wordcount:2"] = flinksim.Faults{SubmitRegistersAfter: time.Hour}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	mid := w.runUntil("wc", "new job submitted", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseSubmitting && strings.Contains(a.Status.SavepointPath, "savepoint-") &&
			a.Status.JobStatus.JobID != "" && a.Status.JobStatus.JobID != old.Status.JobStatus.JobID
	})
	w.passes("wc", 2)
	w.events()
	w.deleteApp("wc")
	app := w.runUntil("wc", "finalized", finalized)
	assert.Equal(t, mid.Status.SavepointPath, app.Status.FinalSavepointPath)
	assert.Contains(t, eventReasons(w.events()), "StateKept")
	assert.Equal(t, 1, savepointsTaken(w))
}

// A JobManager lost with no state to restore (the job never checkpointed) is not started again
// silently without state: the application fails with the reason, unless fallbackWithoutState.
func TestJobManagerRecoveryNeverStartsSilentlyWithoutState(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		t.Run(map[bool]string{false: "refused", true: "fallbackWithoutState"}[fallback], func(t *testing.T) {
			w := newWorld(t)
			old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
				s.FlinkConfig["execution.checkpointing.interval"] = "24h"
				s.FallbackWithoutState = fallback
			})
			require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(old, old.Status.DeployHash), metav1.DeleteOptions{}))
			if !fallback {
				app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
				assert.Contains(t, app.Status.Reason, "no savepoint or retained checkpoint was found")
				assert.Len(t, w.timeline.Jobs(ns+"/wc"), 1, "nothing started")
				return
			}
			w.runUntil("wc", "restarted", func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != old.Status.JobStatus.JobID
			})
			assert.Contains(t, eventReasons(w.events()), "RestoringWithoutState")
			w.assertOneJobAtATime(nil)
		})
	}
}

// A handler that asks for a transition the phase table does not declare changes nothing: only the
// refusal is written and announced.
func TestRefusedTransitionWritesOnlyTheRefusal(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	saved := phaseTable[PhaseRunning]
	t.Cleanup(func() { phaseTable[PhaseRunning] = saved })
	broken := saved
	broken.Handle = func(rc *Context) Outcome {
		rc.App.Status.SavepointPath = "file:///somewhere-else"
		jobstate.Stable(rc.Job).JobID = ""
		rc.Event(false, "Decided", "a decision that must not be kept")
		return moveTo(PhaseRollingBack, "NotDeclared", "Running may not go to RollingBack")
	}
	phaseTable[PhaseRunning] = broken
	w.events()
	w.reconcile("wc")
	app := w.get("wc")
	assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)
	assert.Equal(t, old.Status.SavepointPath, app.Status.SavepointPath)
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID)
	assert.Equal(t, []string{"InvalidTransition"}, eventReasons(w.events()))
}

// An update gives up while the stable job is still cancelling. Once the cancel completes, the
// rollback starts the stable spec again from the newest checkpoint the job left, never without state.
func TestRollbackAfterACancelThatOutlastedItsDeadlineRestoresTheNewestCheckpoint(t *testing.T) {
	w := newWorld(t)
	w.timings.Cancel = 5 * time.Second
	w.env.Config.CancelTimeout.Duration = time.Second
	runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.DeploymentMode = v1beta1.DeploymentModeSingle
		s.UpgradeMode = v1beta1.UpgradeModeLastState
	})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Equal(t, "RolledBack", app.Status.History[len(app.Status.History)-1].Reason, app.Status.Reason)
	jobs := w.timeline.Jobs(ns + "/wc")
	require.Len(t, jobs, 2)
	assert.Contains(t, jobs[1].RestoredFrom, "/chk-", "the restarted stable job keeps its state")
	w.assertOneJobAtATime(w.events())
}

// A suspended application's status names no job and no job state.
func TestSuspendedStatusNamesNoJob(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
	app := w.runUntilPhase("wc", v1beta1.PhaseSuspended)
	assert.Empty(t, app.Status.JobStatus.JobID)
	assert.Empty(t, app.Status.JobStatus.State)
}
