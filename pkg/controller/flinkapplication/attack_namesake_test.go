package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Attacks on ownership by identity: an object created again under a deleted one's name.

// An application deleted with deleteMode None leaves its job's HA data behind (the HA ConfigMaps
// point to its newest checkpoint). One created again under its name with the very same spec renders
// the same cluster id (name and spec hash, no uid): its JobManager must not recover the namesake's
// job as its cluster's. The new application starts no cluster over that data and says so; under
// another cluster id (a restartNonce) it runs a job of its own.
func TestAnApplicationCreatedAgainWithItsNamesakesSpecRunsItsOwnJobNotTheNamesakes(t *testing.T) {
	w := newWorld(t)
	first := wordcount("wc")
	first.UID = types.UID("first-uid")
	withKubernetesHA(&first.Spec)
	first.Spec.DeleteMode = v1beta1.DeleteModeNone
	w.create(first)
	old := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.clock.Step(25 * time.Second) // checkpoints, which HA points to
	w.passes("wc", 3)
	oldJob := old.Status.JobStatus.JobID
	w.deleteApp("wc")
	w.runUntil("wc", "finalized", finalized)
	kept := clusterConfigMap(old, old.Status.DeployHash)
	require.Contains(t, w.haConfigMaps(), kept)
	require.NoError(t, w.apps.FlinkV1beta1().FlinkApplications(ns).Delete(context.Background(), "wc", metav1.DeleteOptions{}))
	w.collectOwnedBy(first.UID)
	w.settle()

	again := wordcount("wc")
	again.UID = types.UID("second-uid")
	withKubernetesHA(&again.Spec)
	w.create(again)
	recovered := ""
	for i := 0; i < 200; i++ {
		_, _ = w.reconcile("wc")
		// The same spec renders the same cluster id as the namesake's.
		if jm := w.jm(w.get("wc"), old.Status.DeployHash); jm != nil && recovered == "" {
			for _, j := range jm.Jobs() {
				if j.ID == oldJob {
					recovered = j.State
				}
			}
		}
	}
	got := w.get("wc")
	assert.Empty(t, recovered, "the new application's cluster runs job %s of the deleted one, recovered from HA data it did not write", oldJob)
	// It starts no cluster over the namesake's HA data, and says why and what to do.
	assert.Equal(t, v1beta1.PhaseDeployFailed, got.Status.Phase)
	assert.Contains(t, got.Status.Reason, "this object did not write")
	assert.Contains(t, w.haConfigMaps(), kept, "the namesake's HA data, kept by deleteMode None")

	// Under another cluster id it runs a job of its own, and the namesake's HA data stays.
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.RestartNonce = "mine" })
	mine := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	assert.NotEqual(t, oldJob, mine.Status.JobStatus.JobID)
	w.passes("wc", 5)
	assert.Contains(t, w.haConfigMaps(), kept, "the namesake's HA data, kept by deleteMode None")
}
