package flinkapplication

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A target an older operator recorded has no specParallelism. The user's spec.parallelism change
// must win over it as it does over a target this operator recorded: a target whose spec is not
// known is no target for the new spec, and is never recorded as applied for it.
func TestASpecParallelismChangeEndsATargetAnOlderOperatorRecorded(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = bottleneck()
	w.taskManagerCap["wc"] = 2 // the rescale waits for slots it never gets: the target stays in progress
	w.create(autoscaledApp(v1beta1.AutoscalerApply))
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	inProgress := w.runUntil("wc", "a target in progress", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Autoscaler != nil && a.Status.Autoscaler.Target != nil
	})
	require.Equal(t, int32(3), inProgress.Spec.Parallelism)
	// The status as an operator from before specParallelism was kept wrote it.
	inProgress.Status.Autoscaler.Target.SpecParallelism = 0
	_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).UpdateStatus(context.Background(), inProgress, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.restartOperator()

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 4 })
	w.passes("wc", 2000)
	got := w.get("wc")
	as := got.Status.Autoscaler
	require.NotNil(t, as)
	assert.Nil(t, as.Target, "the old spec's target is given up once spec.parallelism changed; phase %s, reason %q", got.Status.Phase, got.Status.Reason)
	if as.Applied != nil && as.Applied.SpecParallelism == 4 {
		for id, p := range as.Applied.Parallelism {
			assert.LessOrEqual(t, p, int32(4), "vertex %s: the old spec's target is not in force for the new spec", id)
		}
	}
}

// The same with a restart target (no adaptive scheduler): the job the user's change starts must run
// at the user's spec.parallelism, not at a target an older operator recorded without its spec.
func TestAJobStartedForASpecParallelismChangeRunsAtItNotAtAnOlderOperatorsRestartTarget(t *testing.T) {
	w := newWorld(t)
	w.loads["wc"] = bottleneck()
	w.create(restartScaledApp())
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	inProgress := w.runUntil("wc", "a restart target in progress", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Autoscaler != nil && a.Status.Autoscaler.Target != nil && a.Status.Autoscaler.Target.Restart
	})
	// The status as an operator from before specParallelism was kept wrote it.
	inProgress.Status.Autoscaler.Target.SpecParallelism = 0
	_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).UpdateStatus(context.Background(), inProgress, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.restartOperator()

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.Parallelism = 4
		a.Spec.Autoscaler.Mode = v1beta1.AutoscalerRecommend // no new decision: only the user's change
	})
	got := w.runUntil("wc", "the new spec runs", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Generation == a.Status.ObservedGeneration &&
			a.Status.JobStatus.State == v1beta1.JobRunning && (a.Status.Autoscaler == nil || a.Status.Autoscaler.Target == nil)
	})
	w.passes("wc", 20)
	got = w.get("wc")
	assert.Equal(t, 4, vertexParallelism(w, got)["Map"], "the user's parallelism runs: %+v", got.Status.Autoscaler)
}
