package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Another application starts from a FlinkSnapshot of the first by name, and waits while it does not
// exist or is not Completed: it never starts without the state it names.
func TestAnApplicationStartsFromAnotherApplicationsSnapshotByName(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	copyApp := wordcount("wc-copy")
	copyApp.Spec.RestoreSnapshot = "handover"
	w.create(copyApp)
	for i := 0; i < 20; i++ {
		_, _ = w.reconcile("wc-copy")
	}
	waiting := w.get("wc-copy")
	assert.Equal(t, v1beta1.PhaseClusterStarting, waiting.Status.Phase)
	assert.Contains(t, waiting.Status.Reason, "spec.restoreSnapshot names FlinkSnapshot handover, which does not exist")
	if jm := w.jm(waiting, flink.ClusterHash(waiting)); jm != nil {
		assert.Empty(t, jm.Jobs(), "nothing is submitted without the state it names")
	}

	w.createSnapshot("handover", nil)
	for i := 0; i < 20 && w.snapshot("handover").Status.State != v1beta1.StateCompleted; i++ {
		_, _ = w.reconcile("wc")
	}
	path := w.snapshot("handover").Status.Path
	require.NotEmpty(t, path)

	started := w.runUntilPhase("wc-copy", v1beta1.PhaseRunning)
	assert.Equal(t, path, started.Status.JobStatus.RestorePath)
	jobs := w.jm(started, started.Status.DeployHash).Jobs()
	require.Len(t, jobs, 1)
	assert.Equal(t, path, jobs[0].RestoredFrom)
}

// savepointRedeployNonce with restoreSnapshot redeploys a running application from the snapshot.
func TestRedeployFromASnapshotByName(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.createSnapshot("known-good", nil)
	for i := 0; i < 20 && w.snapshot("known-good").Status.State != v1beta1.StateCompleted; i++ {
		_, _ = w.reconcile("wc")
	}
	path := w.snapshot("known-good").Status.Path
	require.NotEmpty(t, path)

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.RestoreSnapshot = "known-good"
		a.Spec.SavepointRedeployNonce = "1"
	})
	app := w.runUntil("wc", "redeployed", upgradedFrom(old))
	assert.Equal(t, path, app.Status.JobStatus.RestorePath)
	assert.Contains(t, eventReasons(w.events()), "RedeployFromSavepoint")
}
