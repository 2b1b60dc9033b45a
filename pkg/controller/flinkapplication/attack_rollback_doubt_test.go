package flinkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A savepoint in doubt long ago (its JobManager lost its result), settled since by Flink's answer
// to an update's restore, does not stop that update's rollback: the attempt failed after it ran,
// and the previous spec starts again from the state the update chose, or the attempt's newer
// checkpoint. Only going back from a failed redeploy meets the doubt (seed 1050076). An attack
// review found the check stopping every rollback while the state to restore was not in the ledger.
func TestAnOldSavepointInDoubtDoesNotStopAnOrdinaryRollback(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	jobID, hash := app.Status.JobStatus.JobID, app.Status.DeployHash
	asked := metav1.NewTime(w.clock.Now().Add(-time.Minute))
	app.Status.Ledger = append(app.Status.Ledger, v1beta1.StateEntry{Purpose: v1beta1.SavepointManual, JobID: jobID, ClusterHash: hash,
		TriggerID: "0123456789abcdef0123456789abcdef", TriggerTime: &asked, Result: v1beta1.StateFailed, Time: &asked,
		Reason: "whether it completed cannot be known: its JobManager was lost before its result was read"})
	_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).UpdateStatus(context.Background(), app, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.passes("wc", 2)

	// The attempt runs long enough to complete checkpoints of its own, not long enough to be stable.
	w.env.Config.JobStabilizationPeriod.Duration = 2 * time.Minute
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	attempt := w.runUntil("wc", "the attempt submitted", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseSubmitting && a.Status.UpdatingHash != ""
	})
	newJM := func() *flinksim.JobManager { return w.jm(attempt, attempt.Status.UpdatingHash) }
	require.NotNil(t, newJM())
	newJM().SetFaults(flinksim.Faults{FailJobsAfter: 45 * time.Second})
	back := w.runUntil("wc", "rolled back", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	assert.False(t, strings.HasPrefix(back.Status.Reason, "rollback failed"), "reason %q", back.Status.Reason)
	assert.Equal(t, hash, back.Status.DeployHash)
	assert.NotEmpty(t, back.Status.JobStatus.JobID)
	assert.NotEqual(t, jobID, back.Status.JobStatus.JobID, "the previous spec's job started again")
	assert.NotEmpty(t, back.Status.JobStatus.RestorePath, "with state")
}
