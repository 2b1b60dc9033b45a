package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The way back after a restart at a new parallelism whose job fails starts from the savepoint the
// stop took, the newest completed state of the job it replaces, never from the state that job had
// itself started from (minutes older).
func TestTheWayBackStartsFromTheStopsSavepointNotFromWhatTheStoppedJobStartedFrom(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = bottleneck()
	app := restartScaledApp()
	w.create(app)
	first := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	// An update moves the job onto a savepoint, so that the job the autoscaler stops started from state.
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.RestartNonce = "1" })
	updated := w.runUntil("wc", "updated", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != first.Status.JobStatus.JobID &&
			a.Status.JobStatus.JobID != "" && a.Status.JobStatus.RestorePath != ""
	})
	startedFrom := updated.Status.JobStatus.RestorePath
	jm := w.jm(updated, updated.Status.DeployHash)
	w.runUntilPhase("wc", v1beta1.PhaseSavepointing)
	jm.SetFaults(flinksim.Faults{FailJobsAfter: 2 * time.Second}) // the job submitted at the target fails
	w.runUntil("wc", "going back", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Autoscaler != nil && a.Status.Autoscaler.Target != nil && a.Status.Autoscaler.Target.WayBack
	})
	jm.SetFaults(flinksim.Faults{})
	back := w.runUntil("wc", "gone back", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.Autoscaler.Target == nil && lastChange(a) == "WentBack"
	})
	stop := ""
	for _, e := range back.Status.Ledger {
		if e.JobID == updated.Status.JobStatus.JobID && e.Purpose == v1beta1.SavepointUpgrade && e.Result == v1beta1.StateCompleted {
			stop = e.Path
		}
	}
	require.NotEmpty(t, stop, "the autoscaler's stop took a savepoint: %+v", back.Status.Ledger)
	assert.NotEqual(t, startedFrom, back.Status.JobStatus.RestorePath, "not the state the stopped job started from")
	assert.Equal(t, stop, back.Status.JobStatus.RestorePath, "the stop's savepoint")
}
