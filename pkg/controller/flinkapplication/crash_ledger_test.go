package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Crash paths for the ledger: they are played by TestCrashAtEachStatusWriteAlongTheCrashPaths with
// the operator killed at each status write that records a decision.

// playSavepointsAcrossStops takes a manual savepoint that is still in flight when an update starts,
// then suspends and resumes. No savepoint Flink completed is lost from the ledger, the stops take
// their own savepoints, one job runs at a time, and the resumed job starts from the suspend's
// savepoint.
func playSavepointsAcrossStops(t *testing.T, w *world) {
	old := running(t, w, "wc")
	jm := w.jm(old, old.Status.DeployHash)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "1" })
	w.runUntil("wc", "manual savepoint asked", func(a *v1beta1.FlinkApplication) bool { return a.Status.SavepointTriggerNonce == "1" })
	for i := 0; i < 50 && jm.SavepointTriggers() == 0; i++ {
		_, _ = w.reconcile("wc")
	}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	updated := w.runUntil("wc", "updated", upgradedFrom(old))
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
	suspended := w.runUntilPhase("wc", v1beta1.PhaseSuspended)
	require.Contains(t, suspended.Status.SavepointPath, "savepoint-", "the suspend took its own savepoint")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateRunning })
	resumed := w.runUntil("wc", "resumed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.State == v1beta1.JobRunning &&
			a.Status.JobStatus.JobID != updated.Status.JobStatus.JobID
	})
	assert.Equal(t, suspended.Status.SavepointPath, resumed.Status.JobStatus.RestorePath, "resumed from the suspend's savepoint")

	recorded := map[string]bool{}
	for _, e := range resumed.Status.Ledger {
		recorded[e.Path] = e.Result == v1beta1.StateCompleted
	}
	for _, sp := range ledgerSavepoints(w) {
		assert.True(t, recorded[sp.Path], "savepoint %s that Flink completed is in the ledger: %+v", sp.Path, resumed.Status.Ledger)
	}
	for _, e := range resumed.Status.Ledger {
		assert.NotEqual(t, v1beta1.StatePending, e.Result, "nothing is left pending: %+v", e)
	}
	require.NotEmpty(t, ledgerRecords(resumed, v1beta1.SavepointManual), "the manual savepoint is listed")
	w.assertOneJobAtATime(w.events())
}

// playAutoPromotionThenDelete promotes a BlueGreen version automatically, keeps the demoted one for
// its teardown delay, and deletes the application meanwhile: the final savepoint is the serving
// version's, and no job is left running.
func playAutoPromotionThenDelete(t *testing.T, w *world) {
	runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		blueGreenSpec(s)
		s.BlueGreen = &v1beta1.BlueGreenSpec{Promotion: v1beta1.PromotionAuto, PromoteAfterSeconds: int32p(5), TeardownDelaySeconds: int32p(600)}
	})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	promoted := w.runUntil("wc", "promoted", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Deployments.Candidate != nil && a.Status.Deployments.Candidate.PromotedAt != nil
	})
	serving := promoted.Status.Deployments.Candidate.JobID
	w.deleteApp("wc")
	got := w.runUntil("wc", "finalizer removed", finalized)
	final, ok := w.storage.Get(got.Status.FinalSavepointPath)
	require.True(t, ok, "finalSavepointPath %q names a savepoint that exists", got.Status.FinalSavepointPath)
	assert.Equal(t, serving, final.JobID, "the final savepoint is the serving version's")
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		_, ended := j.AliveUntil()
		assert.True(t, ended, "job %s stopped", j.JobID)
	}
	w.assertAtMostTwoJobs(w.events())
}
