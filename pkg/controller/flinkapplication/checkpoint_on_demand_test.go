package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A new checkpointTriggerNonce takes one checkpoint of the running job, which keeps running, however
// often the operator restarts meanwhile. The ledger records it as a checkpoint: status.savepoints
// and savepointPath never name it, and retention never disposes of it.
func TestACheckpointNonceTakesOneCheckpointRecordedInTheLedger(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.CheckpointTriggerNonce = "c1" })
	var entry *v1beta1.StateEntry
	for i := 0; i < 40 && entry == nil; i++ {
		_, _ = w.reconcile("wc")
		w.restartOperator() // a restart between any two passes takes no second checkpoint
		for j, e := range w.get("wc").Status.Ledger {
			if e.Purpose == v1beta1.ManualCheckpoint && e.Result != v1beta1.StatePending {
				entry = &w.get("wc").Status.Ledger[j]
			}
		}
	}
	require.NotNil(t, entry, "the checkpoint ended: %+v", w.get("wc").Status.Ledger)
	assert.Equal(t, v1beta1.StateCompleted, entry.Result, entry.Reason)
	assert.Contains(t, entry.Path, "chk-")
	assert.Equal(t, old.Status.JobStatus.JobID, entry.JobID)
	app := w.get("wc")
	assert.Equal(t, v1beta1.Nonce("c1"), app.Status.CheckpointTriggerNonce)
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID, "the job keeps running")
	assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)
	for _, r := range app.Status.Savepoints {
		assert.NotEqual(t, entry.Path, r.Path, "status.savepoints lists savepoints only")
	}
	assert.NotEqual(t, entry.Path, app.Status.SavepointPath)
	manual := 0
	for _, e := range app.Status.Ledger {
		if e.Purpose == v1beta1.ManualCheckpoint {
			manual++
		}
	}
	assert.Equal(t, 1, manual, "one checkpoint per nonce")
	assert.Contains(t, eventReasons(w.events()), "CheckpointCompleted")
}
