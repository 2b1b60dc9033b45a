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
// must win over it as it does over a target this operator recorded (guardian_autoscaler_test.go):
// with no adaptive scheduler the target is applied by a restart, and the job the user's change
// starts must run at the user's spec.parallelism, not at that target.
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
