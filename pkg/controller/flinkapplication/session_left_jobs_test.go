package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// jobLeftByDeleteModeNone runs a session job from an older savepoint of application wc, deletes it
// with deleteMode None, and returns the world, the savepoint and the job left running. faults are
// the session cluster's JobManager's.
func jobLeftByDeleteModeNone(t *testing.T, faults flinksim.Faults) (w *world, older, shown string, left flinksim.JobRecord) {
	w = newWorld(t)
	jar := w.withSessions()
	runningWith(t, w, "wc", nil)
	older, shown = takeSavepoint(t, w, "wc", "s1")
	takeSavepoint(t, w, "wc", "s2")

	w.faults = faults
	w.createSessionCluster(sessionCluster("session"))
	j := sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState)
	j.Spec.DeleteMode = v1beta1.DeleteModeNone
	j.Spec.Job.InitialSavepointPath = older
	w.createSessionJob(j)
	w.runSessionsUntil("the job submitted", func() bool { return len(w.jobsOf("session", "a")) > 0 })
	require.Equal(t, older, w.jobsOf("session", "a")[0].RestoredFrom)

	w.deleteSessionJob("a")
	w.runSessionsUntil("a gone", func() bool { return w.sessionGone("a") })
	w.reconcileSessions()
	left = w.jobsOf("session", "a")[0]
	_, ended := left.AliveUntil()
	require.False(t, ended, "deleteMode None leaves the job running")
	return w, older, shown, left
}

// disposeThroughItsSnapshot is wc's user letting a savepoint go: its FlinkSnapshot, set to
// disposeOnDelete, deleted.
func disposeThroughItsSnapshot(w *world, name string) {
	s := w.snapshot(name)
	s.Spec.DisposeOnDelete = true
	_, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).Update(context.Background(), s, metav1.UpdateOptions{})
	require.NoError(w.t, err)
	for i := 0; i < 3; i++ {
		_, _ = w.reconcile("wc")
	}
	w.deleteSnapshot(name)
	for i := 0; i < 5; i++ {
		_, _ = w.reconcile("wc")
		w.reconcileSessions()
	}
}

// A session job started from another object's savepoint and deleted with deleteMode None leaves its
// job running; until that job completes a checkpoint, a restart of it restores the savepoint. The
// savepoint's owner must not dispose of it meanwhile (explorer seed 27000113), and may once the job
// ended.
func TestASavepointAJobLeftByDeleteModeNoneRunsFromIsKept(t *testing.T) {
	// The session job's tasks fail before any checkpoint completes.
	w, older, shown, left := jobLeftByDeleteModeNone(t, flinksim.Faults{RestartJobsEvery: 5 * time.Second})

	disposeThroughItsSnapshot(w, shown)
	assert.True(t, w.storage.Exists(older), "the savepoint job %s, left running by deleteMode None, restarts from was disposed of; events: %v",
		left.JobID, w.events())
	leftJobs := w.sessionCluster("session").Status.LeftJobs
	require.Len(t, leftJobs, 1, "the session cluster names the job left on it")
	assert.Equal(t, v1beta1.LeftJob{JobID: left.JobID, ClusterHash: w.sessionCluster("session").Status.DeployHash, SessionJob: "a",
		RestorePath: older, Since: leftJobs[0].Since}, leftJobs[0])

	// The job fails for good: nothing restarts from the savepoint any more.
	require.True(t, w.jms["session-"+w.sessionCluster("session").Status.DeployHash].FailJobNow(left.JobID))
	w.runSessionsUntil("the left job settled", func() bool { return len(w.sessionCluster("session").Status.LeftJobs) == 0 })
	w.createSnapshot("grab", func(s *v1beta1.FlinkSnapshotSpec) { s.Path, s.DisposeOnDelete = older, true })
	disposeThroughItsSnapshot(w, "grab")
	assert.False(t, w.storage.Exists(older), "the savepoint goes once no job needs it: %v", w.events())
}

// A job left by deleteMode None that completes a checkpoint restarts from it: the savepoint it
// started from is then no longer kept for it.
func TestAJobLeftByDeleteModeNoneLetsItsStartStateGoOnceItCompletesACheckpoint(t *testing.T) {
	w, older, shown, _ := jobLeftByDeleteModeNone(t, flinksim.Faults{})
	w.runSessionsUntil("the left job settled", func() bool { return len(w.sessionCluster("session").Status.LeftJobs) == 0 })
	assert.Contains(t, eventReasons(w.events()), "LeftJobSettled")
	disposeThroughItsSnapshot(w, shown)
	assert.False(t, w.storage.Exists(older), "the savepoint goes once the job left running completed a checkpoint: %v", w.events())
}
