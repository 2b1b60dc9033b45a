package flinkapplication

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// An update whose state is gone is not deployed again until the spec changes (explorer seed
// 24, object gamma: its job lost with its JobManager, the checkpoint the operator had recorded was
// gone, so the update after it failed at its restore, and so did the rollback; the rollback's
// failure marked the stable spec failed instead of the update's, and the operator deployed the
// update again on its own, from the same missing checkpoint, every half minute). The restore Flink
// refused marks the checkpoint gone: the update never starts from it, nor from older state, and
// rests in DeployFailed without a rollback.
func TestAnUpdateWhoseStateIsGoneIsNotDeployedAgainUntilTheSpecChanges(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	w.runUntil("wc", "a checkpoint recorded", func(a *v1beta1.FlinkApplication) bool {
		for _, e := range a.Status.Ledger {
			if e.Purpose == v1beta1.StateCheckpoint && e.Path != "" {
				return true
			}
		}
		return false
	})
	w.jm(app, app.Status.DeployHash).Restart() // without HA: the job is lost
	for _, s := range w.storage.Snapshots() {
		w.storage.Delete(s.Path) // and the state it left with it
	}
	w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	failed := w.runUntil("wc", "the update failed", func(a *v1beta1.FlinkApplication) bool {
		w.events() // a full recorder would block the operator
		return a.Status.Phase == v1beta1.PhaseDeployFailed && slices.Contains(phasesVisited(a), v1beta1.PhaseUpdating)
	})
	require.Contains(t, failed.Status.Reason, "gone from storage")
	jobs := len(w.timeline.Jobs(ns + "/wc"))
	for i := 0; i < 40; i++ {
		_, _ = w.reconcile("wc")
		w.events()
	}
	got := w.get("wc")
	assert.Equal(t, v1beta1.PhaseDeployFailed, got.Status.Phase, "history %v", got.Status.History)
	assert.Len(t, w.timeline.Jobs(ns+"/wc"), jobs, "no job submitted until the spec changes")
}
