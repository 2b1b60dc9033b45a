package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Flink refuses a job whose restore state is not in storage, and no job is sent from that state
// again, also when the ledger no longer holds an entry for it: here the checkpoint of a job before
// the one that started from it, whose entries went when its job was no longer recorded. The gone
// mark was set only on an entry the ledger held, so every retry sent a job Flink refused again.
func TestAStateFlinkCannotFindIsNotTriedAgainWhenTheLedgerNoLongerNamesIt(t *testing.T) {
	w := newWorld(t)
	jm, recorded, second := jobLostAndStartedAgain(t, w, func(*v1beta1.FlinkApplicationSpec) {})
	require.Equal(t, recorded, second.Status.JobStatus.RestorePath)
	w.runFor("wc", 5*time.Second)
	for _, e := range w.get("wc").Status.Ledger {
		require.NotEqual(t, recorded, e.Path, "the ledger still names the checkpoint: %+v", e)
	}
	w.storage.Delete(recorded) // gone from storage, as a checkpoint the user or a lifecycle rule removed
	jm.Crash()                 // before a checkpoint of the second job's own
	w.runFor("wc", 5*time.Minute)
	// The user changes the spec: the update's job must not start from the state Flink could not find.
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	w.runFor("wc", 5*time.Minute)
	var sent int
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		if j.RestoredFrom == recorded {
			sent++
		}
	}
	assert.Equal(t, 2, sent, "jobs sent from %s: the second job, and one more that Flink refused; then none, also after an update", recorded)
	t.Logf("phase %s: %s", w.get("wc").Status.Phase, w.get("wc").Status.Reason)
}

// jobLostAndStartedAgain runs wc with a checkpoint a minute until one is recorded, then loses its job
// with its JobManager (no Flink HA) and runs until a job started again, from that checkpoint. It
// returns the JobManager, the checkpoint, and the application as the new job runs.
func jobLostAndStartedAgain(t *testing.T, w *world, spec func(*v1beta1.FlinkApplicationSpec)) (*flinksim.JobManager, string, *v1beta1.FlinkApplication) {
	t.Helper()
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		spec(s)
		s.FlinkConfig["execution.checkpointing.interval"] = "60s"
	})
	w.runFor("wc", 90*time.Second)
	first := w.get("wc").Status.JobStatus.JobID
	recorded := w.recordedCheckpoint("wc")
	require.Contains(t, recorded, first+"/chk-")
	jm := w.jm(app, app.Status.DeployHash)
	jm.Crash()
	again := w.runUntil("wc", "the job started again", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != first
	})
	return jm, recorded, again
}
