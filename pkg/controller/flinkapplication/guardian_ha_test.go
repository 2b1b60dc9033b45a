package flinkapplication

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// An application created again under the name of one deleted with deleteMode None leaves the HA
// ConfigMaps its namesake kept: they point to that job's newest checkpoint, and are not its own.
func TestAnApplicationCreatedAgainLeavesTheHAConfigMapsItsNamesakeKept(t *testing.T) {
	w := newWorld(t)
	first := wordcount("wc")
	first.UID = types.UID("first-uid")
	withKubernetesHA(&first.Spec)
	first.Spec.DeleteMode = v1beta1.DeleteModeNone
	w.create(first)
	old := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.deleteApp("wc")
	w.runUntil("wc", "finalized", finalized)
	kept := clusterConfigMap(old, old.Status.DeployHash)
	require.Contains(t, w.haConfigMaps(), kept)
	require.NoError(t, w.apps.FlinkV1beta1().FlinkApplications(ns).Delete(context.Background(), "wc", metav1.DeleteOptions{}))
	w.collectOwnedBy(first.UID)

	again := wordcount("wc")
	again.UID = types.UID("second-uid")
	withKubernetesHA(&again.Spec)
	again.Spec.Image = "flink-wordcount:2"
	w.create(again)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.passes("wc", 5)
	assert.Contains(t, w.haConfigMaps(), kept, "its namesake's, kept by deleteMode None")
}

// An application's HA clean-up never deletes the HA ConfigMaps of the FlinkSessionCluster of the
// same name, whose cluster ids have the same form.
func TestAnApplicationLeavesTheHAConfigMapsOfASessionClusterOfTheSameName(t *testing.T) {
	w := newWorld(t)
	w.withSessions()
	c := sessionCluster("wc")
	c.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
	c.Spec.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/ha"
	w.createSessionCluster(c)
	w.runSessionsUntil("session cluster running", func() bool {
		return w.sessionCluster("wc").Status.Phase == v1beta1.SessionClusterRunning
	})
	sessionHash := w.sessionCluster("wc").Status.DeployHash
	require.NotEmpty(t, sessionHash)
	theirs := flink.HAClusterIDOf("wc", sessionHash) + "-cluster-config-map"
	w.writeHAConfigMap(flink.HAClusterIDOf("wc", sessionHash), theirs)

	app := wordcount("wc")
	withKubernetesHA(&app.Spec)
	app.Spec.Image = "flink-wordcount:2"
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.passes("wc", 5)
	assert.Contains(t, w.haConfigMaps(), theirs, "the running session cluster's")
}
