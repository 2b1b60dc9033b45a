package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A user's spec.parallelism change wins over an autoscaler target still being applied: the target
// was decided for the spec before, so it is given up, never recorded as applied for the new spec.
func TestASpecParallelismChangeEndsTheAutoscalersTargetInProgress(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = bottleneck()
	w.taskManagerCap["wc"] = 2 // the rescale waits for slots it never gets: the target stays in progress
	w.create(autoscaledApp(v1beta1.AutoscalerApply))
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	inProgress := w.runUntil("wc", "a target in progress", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Autoscaler != nil && a.Status.Autoscaler.Target != nil
	})
	require.Equal(t, int32(3), inProgress.Spec.Parallelism)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 4 })
	got := w.runUntil("wc", "the new parallelism runs", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.Autoscaler != nil && a.Status.Autoscaler.Target == nil &&
			a.Status.JobStatus.State == v1beta1.JobRunning && a.Generation == a.Status.ObservedGeneration
	})
	w.passes("wc", 10)
	got = w.get("wc")
	if as := got.Status.Autoscaler; as != nil && as.Applied != nil && as.Applied.SpecParallelism == 4 {
		for id, p := range as.Applied.Parallelism {
			assert.LessOrEqual(t, p, int32(4), "vertex %s: the old spec's target is not in force for the new spec", id)
		}
	}
	assert.Equal(t, 4, vertexParallelism(w, got)["Map"], "the user's parallelism runs: %+v", got.Status.Autoscaler)
}
