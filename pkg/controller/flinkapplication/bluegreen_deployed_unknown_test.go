package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Explorer seed 20000000: a new BlueGreen version was to start from a savepoint of the deployed
// job, which went on completing checkpoints beside it. Its JobManager stopped telling the job's
// status, then crashed without Flink HA and lost the job. The new version's job was sent from the
// savepoint all the same, as if the deployed job still ran beside it: it replaced a job that was over
// and went back behind the checkpoints the operator had recorded of it. Whether the deployed job
// still runs decides what the new version starts from; while Flink does not say, it is not sent.
func TestANewBlueGreenVersionIsNotSentWhileFlinkCannotSayWhetherTheDeployedJobRuns(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", blueGreenSpec)
	deployed := old.Status.JobStatus.JobID
	require.NotEmpty(t, deployed)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	sub := w.runUntilPhase("wc", v1beta1.PhaseSubmitting)
	chosen := sub.Status.Deployments.NextRestorePath
	require.NotEmpty(t, chosen)
	require.Nil(t, sub.Status.Deployments.Candidate.SubmittedAt, "the new version's job is not sent yet")

	jm := w.jm(old, old.Status.DeployHash)
	jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointJob: 1}})
	// The deployed job completes checkpoints after the savepoint, which the operator records, and
	// is then lost with its JobManager: no Flink HA.
	w.runFor("wc", 35*time.Second)
	recorded := w.recordedCheckpoint("wc")
	jm.Crash()
	w.runFor("wc", 2*time.Minute)
	held := w.get("wc")
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		assert.Equal(t, deployed, j.JobID, "job %s of the new version was sent from %s while Flink could not say whether job %s still ran",
			j.JobID, j.RestoredFrom, deployed)
	}
	assert.Equal(t, v1beta1.PhaseSubmitting, held.Status.Phase)
	assert.Contains(t, held.Status.Reason, deployed, "status says what the new version waits for")

	jm.SetFaults(flinksim.Faults{})
	sent := w.runUntil("wc", "the new version's job sent", func(a *v1beta1.FlinkApplication) bool {
		c := a.Status.Deployments.Candidate
		return c != nil && c.SubmittedAt != nil || a.Status.Phase == v1beta1.PhaseDualRunning || a.Status.Phase == v1beta1.PhaseRunning
	})
	var from string
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		if c := sent.Status.Deployments.Candidate; c != nil && j.JobID == c.JobID || c == nil && j.JobID == sent.Status.JobStatus.JobID {
			from = j.RestoredFrom
		}
	}
	// The operator recorded no checkpoint of the lost job newer than the savepoint (it looks at the
	// checkpoints of a job whose status is unreadable only every record window), so the savepoint
	// is the newest state it knows: what the new version starts from now that it replaces the job.
	t.Logf("recorded before the crash %s", recorded)
	assert.Equal(t, chosen, from, "the new version starts from the lost job's newest known state")
}
