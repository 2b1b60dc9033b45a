package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A BlueGreen job started again on its own cluster from the checkpoint of the job before it there
// (lost with its JobManager, without Flink HA) and lost in turn before a checkpoint of its own
// starts again from that checkpoint: the job that took it had ended, and nothing subsumes it. Only
// a checkpoint of the other version's job, which ran on beside, is left to the user
// (startBorrowedBeside; a first draft of it blocked this restart too).
func TestABlueGreenJobLostBeforeItsFirstCheckpointStartsAgainFromTheCheckpointBeforeIt(t *testing.T) {
	w := newWorld(t)
	jm, recorded, started := jobLostAndStartedAgain(t, w, blueGreenSpec)
	second := started.Status.JobStatus.JobID
	jm.Crash() // before a checkpoint of its own
	third := w.runUntil("wc", "the job started again, or given up", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != second || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	require.Equal(t, v1beta1.PhaseRunning, third.Status.Phase, third.Status.Reason)
	var from string
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		if j.JobID == third.Status.JobStatus.JobID {
			from = j.RestoredFrom
		}
	}
	assert.Equal(t, recorded, from)
}
