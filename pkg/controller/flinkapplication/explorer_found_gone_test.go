package flinkapplication

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Jobs the explorer (explorer_test.go) saw started from a checkpoint that was already gone, each
// reduced to a world test of its own; the comment names the seeds that found it.

// firstRestoreAfter is the first job of the application after jobID that started from state, and
// what Storage holds at its path (ok false when it holds nothing there).
func firstRestoreAfter(w *world, name, jobID string) (flinksim.JobRecord, flinksim.Snapshot, bool) {
	after := false
	for _, j := range w.timeline.Jobs(ns + "/" + name) {
		if j.JobID == jobID {
			after = true
			continue
		}
		if after && j.RestoredFrom != "" {
			s, ok := w.storage.Get(j.RestoredFrom)
			return j, s, ok
		}
	}
	return flinksim.JobRecord{}, flinksim.Snapshot{}, false
}

// lastStateInPlace is a Single-mode LastState application that rescales in place (a new job on
// its own cluster, the cluster running the default scheduler), keeping Flink's three newest
// checkpoints: the explorer's beta.
func lastStateInPlace(name string) *v1beta1.FlinkApplication {
	app := wordcount(name)
	app.Spec.DeploymentMode = v1beta1.DeploymentModeSingle
	app.Spec.UpgradeMode = v1beta1.UpgradeModeLastState
	app.Spec.ScaleMode = v1beta1.ScaleModeInPlace
	app.Spec.FlinkConfig["state.checkpoints.num-retained"] = "3"
	return app
}

// The pass that sees a changed parallelism after the operator looked away for longer than Flink
// keeps the recorded checkpoint (explorer seed 1006, object beta: its passes a minute and a half
// apart behind slow JobManagers) records the job's newest checkpoint before it leaves Running.
// The JobManager is lost right after it: without HA the job starts again from what was recorded
// last, which must be a checkpoint Flink still has, not the one it subsumed while nobody looked.
func TestAJobLeavingRunningAfterAQuietSpellHasItsNewestCheckpointRecorded(t *testing.T) {
	w := newWorld(t)
	w.create(lastStateInPlace("wc"))
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.passes("wc", 10)
	app := w.get("wc")
	jobID := app.Status.JobStatus.JobID
	before := w.recordedCheckpoint("wc")
	require.NotEmpty(t, before)
	w.downFor(time.Minute)
	require.False(t, w.storage.Exists(before), "Flink subsumed %s meanwhile", before)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 1 })
	_, _ = w.reconcile("wc")
	require.Equal(t, v1beta1.PhaseRescaling, w.get("wc").Status.Phase)
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(app, app.Status.DeployHash), metav1.DeleteOptions{}))
	w.runUntil("wc", "a job started again from state", func(*v1beta1.FlinkApplication) bool {
		j, _, _ := firstRestoreAfter(w, "wc", jobID)
		return j.JobID != ""
	})
	j, restored, ok := firstRestoreAfter(w, "wc", jobID)
	require.True(t, ok, "job %s started from %s, which exists", j.JobID, j.RestoredFrom)
	assert.Equal(t, jobID, restored.JobID)
}

// The same for a session job: the pass that sees its changed spec records its newest checkpoint
// before it leaves Running, and a JobManager that crashes before the next pass loses nothing Flink
// still keeps.
func TestASessionJobLeavingRunningAfterAQuietSpellHasItsNewestCheckpointRecorded(t *testing.T) {
	w, _ := runningJobs(t)
	for i := 0; i < 10; i++ {
		w.reconcileSessions()
	}
	jobID := w.sessionJob("b").Status.JobStatus.JobID
	before := w.sessionJob("b").Status.JobStatus.LastCheckpointPath
	require.NotEmpty(t, before)
	w.downFor(time.Minute)
	require.False(t, w.storage.Exists(before), "Flink subsumed %s meanwhile", before)
	w.updateSessionJob("b", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "c d"} })
	_, _ = w.reconcileSessionJob(context.Background(), ns, "b")
	require.Equal(t, v1beta1.SessionJobUpdating, w.sessionJob("b").Status.Phase)
	w.jms["session-"+w.sessionCluster("session").Status.DeployHash].Crash()
	var restored flinksim.JobRecord
	w.runSessionsUntil("job b started again from state", func() bool {
		for _, j := range w.jobsOf("session", "b") {
			if j.JobID != jobID && j.RestoredFrom != "" {
				restored = j
				return true
			}
		}
		return false
	})
	s, ok := w.storage.Get(restored.RestoredFrom)
	require.True(t, ok, "job %s started from %s, which exists", restored.JobID, restored.RestoredFrom)
	assert.Equal(t, jobID, s.JobID)
}

// A rescale in place under the adaptive scheduler waits in Rescaling for the slots it asked for,
// while the job runs on: the pass records its checkpoints as Running does. Lost meanwhile without
// HA, the job starts again from one Flink still has.
func TestAJobWaitingInRescalingHasItsCheckpointsRecorded(t *testing.T) {
	w := newWorld(t)
	app := lastStateInPlace("wc")
	app.Spec.FlinkConfig[flink.SchedulerKey] = "adaptive"
	w.taskManagerCap["wc"] = 2 // no room for the TaskManagers the new parallelism needs
	w.create(app)
	app = w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.passes("wc", 10)
	jobID := app.Status.JobStatus.JobID
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 6 })
	for end := w.clock.Now().Add(2 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, v1beta1.PhaseRescaling, w.get("wc").Status.Phase)
	w.jm(app, app.Status.DeployHash).Crash()
	w.runUntil("wc", "a job started again from state", func(*v1beta1.FlinkApplication) bool {
		j, _, _ := firstRestoreAfter(w, "wc", jobID)
		return j.JobID != ""
	})
	j, restored, ok := firstRestoreAfter(w, "wc", jobID)
	require.True(t, ok, "job %s started from %s, which exists", j.JobID, j.RestoredFrom)
	assert.Equal(t, jobID, restored.JobID)
}

// A look at the job's checkpoints that Flink fails to answer is tried again at the next pass, not a
// record window later (explorer seeds 1058, object delta, and 1070, object alpha: JobManagers that
// failed the first requests of each endpoint). The window is what the recorded checkpoint
// outlives by Flink's retention when each look records a newer one; a look that records nothing
// leaves the record to be subsumed before the look after. Lost then without HA, the job starts
// again from a checkpoint Flink still has.
func TestAFailedLookAtTheCheckpointsIsMadeAgainAtTheNextPass(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jobID := app.Status.JobStatus.JobID
	var reads atomic.Int32
	w.answerTime = func(r *http.Request) time.Duration {
		if strings.HasSuffix(r.URL.Path, "/jobs/"+jobID+"/checkpoints") {
			reads.Add(1)
		}
		return 0
	}
	// Past the first looks of a new job, to the look of every record window.
	for end := w.clock.Now().Add(2 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	jm := w.jm(app, app.Status.DeployHash)
	jm.SetFaults(flinksim.Faults{FailFirst: map[string]int{flinksim.EndpointCheckpoints: 1}})
	for before := reads.Load(); reads.Load() == before; {
		_, _ = w.reconcile("wc")
	}
	failed := w.clock.Now()
	// Past the time Flink keeps the checkpoint recorded before the failed look (90 s after it was
	// recorded, the look a window of 60 s later), short of the look after next.
	for w.clock.Now().Before(failed.Add(45 * time.Second)) {
		_, _ = w.reconcile("wc")
	}
	jm.Crash()
	w.runUntil("wc", "a job started again from state", func(*v1beta1.FlinkApplication) bool {
		j, _, _ := firstRestoreAfter(w, "wc", jobID)
		return j.JobID != ""
	})
	j, restored, ok := firstRestoreAfter(w, "wc", jobID)
	require.True(t, ok, "job %s started from %s, which exists", j.JobID, j.RestoredFrom)
	assert.Equal(t, jobID, restored.JobID)
}

// Explorer seed 1075, object gamma: a new process's first look at a job, after an outage longer
// than Flink keeps the recorded checkpoint, recorded the newest checkpoint in the checkpoint book
// only (a takeover writes no status: TestATakeoversFirstPassOfASteadyApplicationMakesOneRESTCallAndNoWrite).
// A process that died before the book's next write left as the only record of the job's state a
// checkpoint Flink no longer had, and the job lost with its JobManager started again from it. A
// record past the age rule goes to status, takeover or not.
func TestATakeoversLateRecordOutlivesTheProcessThatMadeIt(t *testing.T) {
	w := newWorld(t)
	// A name whose slots for status's own records (jobstate.CheckpointRecords.StatusRecordDue) would not take this record.
	name := "late"
	app := running(t, w, name)
	jobID := app.Status.JobStatus.JobID
	for end := w.clock.Now().Add(2 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile(name)
	}
	before := w.recordedCheckpoint(name)
	w.downFor(150 * time.Second)
	require.False(t, w.storage.Exists(before), "Flink subsumed %s meanwhile", before)
	w.restartOperator()
	_, _ = w.reconcile(name)
	require.NotEqual(t, before, w.recordedCheckpoint(name), "the new process's first look records the newest checkpoint")
	w.restartOperator()
	w.jm(app, app.Status.DeployHash).Crash()
	w.runUntil(name, "a job started again from state", func(*v1beta1.FlinkApplication) bool {
		j, _, _ := firstRestoreAfter(w, name, jobID)
		return j.JobID != ""
	})
	j, restored, ok := firstRestoreAfter(w, name, jobID)
	require.True(t, ok, "job %s started from %s, which exists", j.JobID, j.RestoredFrom)
	assert.Equal(t, jobID, restored.JobID)
}

// A new BlueGreen version that starts from the newest checkpoint of the deployed version's job
// starts from a checkpoint that job goes on to subsume while it keeps running beside the new one
// (explorer seed 1087, object gamma, whose teardown of the deployed version took minutes). The new
// version's own checkpoints are recorded while the two run, and a new version lost before it
// became the deployed one starts again from one of them.
func TestANewBlueGreenVersionHasItsCheckpointsRecordedWhileTheOldOneRuns(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	blueGreenSpec(&app.Spec)
	app.Spec.UpgradeMode = v1beta1.UpgradeModeLastState
	app.Spec.BlueGreen = &v1beta1.BlueGreenSpec{LastStateFrom: v1beta1.LastStateFromCheckpoint}
	app.Spec.FlinkConfig["state.checkpoints.num-retained"] = "3"
	w.create(app)
	old := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.passes("wc", 10)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	dual := w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
	c := dual.Status.Deployments.Candidate
	require.NotEmpty(t, c.RestorePath, "the new version starts from the deployed job's checkpoint")
	for end := w.clock.Now().Add(time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	require.False(t, w.storage.Exists(c.RestorePath), "the deployed job subsumed %s meanwhile", c.RestorePath)
	w.jm(old, c.ClusterHash).Crash()
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.TearDownVersionHash = dual.Status.Deployments.Stable.SpecHash
	})
	w.runUntil("wc", "the new version's job started again from state", func(*v1beta1.FlinkApplication) bool {
		j, _, _ := firstRestoreAfter(w, "wc", c.JobID)
		return j.JobID != ""
	})
	j, restored, ok := firstRestoreAfter(w, "wc", c.JobID)
	require.True(t, ok, "job %s started from %s, which exists", j.JobID, j.RestoredFrom)
	assert.Equal(t, c.JobID, restored.JobID)
}

// A job that FAILED under a retention policy that discards its checkpoints as it ends (here
// NO_EXTERNALIZED_CHECKPOINTS) has none left; the operator saw it FAILED and wrote so in status.
// Its JobManager then crashed without Flink HA and forgot the job, so that the pass that starts it
// again once the user sets restartFailedJob cannot read its end from Flink any more: the job starts
// from what is left, the savepoint taken before, never from a recorded checkpoint Flink discarded (explorer seed
// 32000603: Flink refused the discarded checkpoint, and the application rested in DeployFailed
// naming a state that was gone).
func TestAFailedJobsDiscardedCheckpointsAreNotRestoredOnceItsJobManagerForgetsIt(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig[flink.CheckpointRetentionKey] = "NO_EXTERNALIZED_CHECKPOINTS"
	})
	saved := manualSavepoint(t, w, "wc", "n1")
	w.clock.Step(20 * time.Second)
	w.passes("wc", 10)
	jobID := w.get("wc").Status.JobStatus.JobID
	recorded := w.recordedCheckpoint("wc")
	require.NotEmpty(t, recorded)
	jm := w.jm(app, app.Status.DeployHash)
	require.True(t, jm.FailJobNow(jobID))
	w.runUntil("wc", "the job shown FAILED", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.State == v1beta1.JobFailed
	})
	require.False(t, w.storage.Exists(recorded), "Flink discarded %s as the job failed", recorded)
	jm.Crash()
	j, exists := w.restartFailedJob("wc", jobID)
	got := w.get("wc")
	require.NotEmpty(t, j.JobID, "phase %s, reason %q", got.Status.Phase, got.Status.Reason)
	assert.True(t, exists, "job %s started from %s, which Flink discarded", j.JobID, j.RestoredFrom)
	assert.Equal(t, saved, j.RestoredFrom, "what is left of the job's state")
}

// restartFailedJob lets the object's passes find the failed job jobID gone with its JobManager, then
// sets restartFailedJob and runs until a job starts again or the object gives up: the first job
// after jobID that started from state, and whether Storage holds what it started from.
func (w *world) restartFailedJob(name, jobID string) (flinksim.JobRecord, bool) {
	w.passes(name, 5)
	w.update(name, func(a *v1beta1.FlinkApplication) { a.Spec.RestartFailedJob = true })
	w.runUntil(name, "a job started again, or the application given up", func(a *v1beta1.FlinkApplication) bool {
		j, _, _ := firstRestoreAfter(w, name, jobID)
		return j.JobID != "" || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	j, _, exists := firstRestoreAfter(w, name, jobID)
	return j, exists
}
