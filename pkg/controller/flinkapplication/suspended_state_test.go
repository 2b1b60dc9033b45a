package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A suspended LastState job shows the state it will resume from (status.deployments.nextRestorePath
// and the phase's message), as a Savepoint one does: the Apache operator's users read it there
// before they resume, and an empty field reads as "starts empty".
func TestASuspendedLastStateApplicationNamesTheStateItResumesFrom(t *testing.T) {
	w := newWorld(t)
	runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.UpgradeMode = v1beta1.UpgradeModeLastState })
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
	app := w.runUntilPhase("wc", v1beta1.PhaseSuspended)
	next := app.Status.Deployments.NextRestorePath
	require.Contains(t, next, "/chk-", "suspended with its newest checkpoint")
	assert.Contains(t, app.Status.Reason, next)

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateRunning })
	app = w.runUntil("wc", "resumed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	assert.Equal(t, next, app.Status.JobStatus.RestorePath, "resumed from the state status named")
}

func TestASuspendedLastStateSessionJobNamesTheStateItResumesFrom(t *testing.T) {
	t.Run("without HA", func(t *testing.T) {
		w, _ := runningJobs(t)
		w.clock.Step(30 * time.Second)
		w.reconcileSessions()
		suspendAndResumeSessionJob(t, w, "b")
	})
	// Under Flink HA a LastState stop cancels the job and keeps its newest checkpoint: status names
	// that checkpoint, not the HA store the next job could otherwise be taken to read.
	t.Run("with Flink HA", func(t *testing.T) {
		w, _, _ := haSessionJobRunning(t)
		suspendAndResumeSessionJob(t, w, "a")
	})
}

func suspendAndResumeSessionJob(t *testing.T, w *world, name string) {
	w.updateSessionJob(name, func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.State = v1beta1.JobStateSuspended })
	w.runSessionsUntil(name+" suspended", func() bool { return w.sessionJobIn(name, v1beta1.SessionJobSuspended) })
	b := w.sessionJob(name)
	next := b.Status.Deployments.NextRestorePath
	require.Contains(t, next, "/chk-", "suspended with its newest checkpoint; status: %+v", b.Status.Deployments)
	assert.Contains(t, b.Status.Reason, next)

	w.updateSessionJob(name, func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.State = v1beta1.JobStateRunning })
	w.runSessionsUntil(name+" resumed", func() bool {
		j := w.sessionJob(name)
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.State == v1beta1.JobRunning
	})
	assert.Equal(t, next, w.sessionJob(name).Status.JobStatus.RestorePath, "resumed from the state status named")
}
