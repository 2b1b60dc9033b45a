package flinkapplication

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
)

// manualSavepoint takes a savepoint of the running job through savepointTriggerNonce and returns
// its path.
func manualSavepoint(t *testing.T, w *world, name, nonce string) string {
	t.Helper()
	w.update(name, func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = v1beta1.Nonce(nonce) })
	app := w.runUntil(name, "savepoint "+nonce, func(a *v1beta1.FlinkApplication) bool {
		return a.Status.SavepointTriggerNonce == v1beta1.Nonce(nonce) && len(a.Status.Savepoints) > 0 &&
			a.Status.Savepoints[len(a.Status.Savepoints)-1].Result == "Completed"
	})
	return app.Status.Savepoints[len(app.Status.Savepoints)-1].Path
}

// A new savepointRedeployNonce redeploys a running application from the savepoint spec.savepointPath
// names: the running job is stopped per its upgradeMode first, and the savepoint that stop took
// stays in the ledger; the new job starts from the named savepoint, which the ledger records; the
// same nonce never redeploys again.
func TestARedeployNonceRestartsFromTheNamedSavepointKeepingTheStopsState(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	named := manualSavepoint(t, w, "wc", "before")

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = named, "r1"
	})
	app := w.runUntil("wc", "redeployed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != old.Status.JobStatus.JobID &&
			a.Status.JobStatus.State == v1beta1.JobRunning
	})
	assert.Equal(t, named, app.Status.JobStatus.RestorePath, "the new job starts from the named savepoint")
	assert.Equal(t, v1beta1.Nonce("r1"), app.Status.SavepointRedeployNonce)
	var stop, recorded *v1beta1.StateEntry
	for i, e := range app.Status.Ledger {
		switch {
		case e.Purpose == v1beta1.SavepointUpgrade && e.JobID == old.Status.JobStatus.JobID:
			stop = &app.Status.Ledger[i]
		case e.Path == named && e.Result == v1beta1.StateCompleted:
			// The manual savepoint's own entry: a path the ledger knows is not recorded twice.
			recorded = &app.Status.Ledger[i]
		}
	}
	require.NotNil(t, stop, "the stop took its savepoint: %+v", app.Status.Ledger)
	assert.Equal(t, v1beta1.StateCompleted, stop.Result)
	assert.NotEqual(t, named, stop.Path)
	require.NotNil(t, recorded, "the named savepoint is in the ledger")
	assert.Contains(t, eventReasons(w.events()), "RedeployFromSavepoint")

	jobID := app.Status.JobStatus.JobID
	for i := 0; i < 20; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Equal(t, jobID, w.get("wc").Status.JobStatus.JobID, "one redeploy per nonce")
}

// A suspended application given a new nonce resumes from the named savepoint, not from the
// savepoint its suspend took.
func TestARedeployNonceOnASuspendedApplicationResumesFromTheNamedSavepoint(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	named := manualSavepoint(t, w, "wc", "before")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
	suspended := w.runUntilPhase("wc", v1beta1.PhaseSuspended)
	require.NotEmpty(t, suspended.Status.SavepointPath)
	require.NotEqual(t, named, suspended.Status.SavepointPath)

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce, a.Spec.State = named, "r1", v1beta1.JobStateRunning
	})
	app := w.runUntil("wc", "resumed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	assert.Equal(t, named, app.Status.JobStatus.RestorePath)
}

// A savepoint the ledger does not know (taken by another application, or by hand) is recorded as the
// redeploy's, shown nowhere as one the operator took, and never disposed of by retention.
func TestARedeployFromAnUnknownSavepointRecordsItAsTheUsers(t *testing.T) {
	w := newWorld(t)
	running(t, w, "other")
	named := manualSavepoint(t, w, "other", "theirs")
	running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = named, "r1"
		a.Spec.SavepointRetention = &v1beta1.SavepointRetention{Keep: 1, DisposeOlder: true}
	})
	app := w.runUntil("wc", "redeployed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.RestorePath == named &&
			a.Status.JobStatus.State == v1beta1.JobRunning
	})
	var redeploy *v1beta1.StateEntry
	for i, e := range app.Status.Ledger {
		if e.Purpose == v1beta1.SavepointRedeploy {
			redeploy = &app.Status.Ledger[i]
		}
	}
	require.NotNil(t, redeploy, "%+v", app.Status.Ledger)
	assert.Equal(t, named, redeploy.Path)
	for _, r := range app.Status.Savepoints {
		assert.NotEqual(t, named, r.Path, "status.savepoints lists what the operator took")
	}
	for i := 0; i < 5; i++ {
		manualSavepoint(t, w, "wc", fmt.Sprintf("later-%d", i))
	}
	assert.True(t, w.storage.Exists(named), "retention never disposes of the user's savepoint")
}

// A session job resubmits from spec.job.initialSavepointPath when its redeploy nonce changes, after
// stopping its running job per its upgradeMode; the other job on the cluster is not touched.
func TestASessionJobRedeploysFromItsNamedSavepoint(t *testing.T) {
	w, _ := runningJobs(t)
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.State = v1beta1.JobStateSuspended })
	w.runSessionsUntil("a suspended", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobSuspended) })
	named := w.sessionJob("a").Status.SavepointPath
	require.NotEmpty(t, named)
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.State = v1beta1.JobStateRunning })
	w.runSessionsUntil("a resumed", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	resumed, other := w.sessionJob("a").Status.JobStatus.JobID, w.sessionJob("b").Status.JobStatus.JobID

	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) {
		j.Spec.Job.InitialSavepointPath, j.Spec.Job.SavepointRedeployNonce = named, "r1"
	})
	w.runSessionsUntil("a redeployed", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.JobID != resumed && j.Status.SavepointRedeployNonce == "r1"
	})
	a := w.sessionJob("a")
	assert.Equal(t, named, a.Status.JobStatus.RestorePath)
	stopped := false
	for _, e := range a.Status.Ledger {
		if e.JobID == resumed && e.Purpose == v1beta1.SavepointUpgrade && e.Result == v1beta1.StateCompleted {
			stopped = true
		}
	}
	assert.True(t, stopped, "the resumed job was stopped with its own savepoint first: %+v", a.Status.Ledger)
	assert.Equal(t, other, w.sessionJob("b").Status.JobStatus.JobID, "the other job keeps running")
	w.assertOneJobEach("a", "b")
}

// Adding the redeploy nonce to a session job's hash changes no hash of a job without one: the
// operator's upgrade redeploys nothing.
func TestASessionJobsHashIsUnchangedWithoutARedeployNonce(t *testing.T) {
	one := int32(2)
	job := &v1beta1.FlinkSessionJob{Spec: v1beta1.FlinkSessionJobSpec{ClusterName: "s",
		Job:         v1beta1.JobSpec{JarURI: "https://jars.example.com/a.jar", EntryClass: "A", Args: []string{"x"}, Parallelism: &one},
		FlinkConfig: v1beta1.FlinkConfig{"k": "v"}}}
	// The hash as the version before the nonce computed it.
	j := job.Spec.Job
	b, _ := json.Marshal(struct {
		JarURI, JarSHA256, EntryClass, RestartNonce string
		Args                                        []string
		Parallelism                                 *int32
		AllowNonRestoredState                       bool
		FlinkConfig                                 v1beta1.FlinkConfig
	}{j.JarURI, j.JarSHA256, j.EntryClass, string(j.RestartNonce), j.Args, j.Parallelism, j.AllowNonRestoredState, job.Spec.FlinkConfig})
	sum := sha256.Sum256(b)
	assert.Equal(t, hex.EncodeToString(sum[:])[:8], sessionjob.Hash(job))
	job.Spec.Job.SavepointRedeployNonce = "r1"
	assert.NotEqual(t, hex.EncodeToString(sum[:])[:8], sessionjob.Hash(job))
}
