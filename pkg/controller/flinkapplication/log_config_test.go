package flinkapplication

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// A cluster's logging configuration is created with it, and a new one is an update: the job moves
// to a cluster with the new ConfigMap, and the old ConfigMap goes with the old cluster.
func TestALoggingConfigurationComesAndGoesWithItsCluster(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	app.Spec.LogConfiguration = map[string]string{"log4j-console.properties": "rootLogger.level = INFO\n"}
	w.create(app)
	old := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	cms := w.kube.CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(context.Background(), flink.LogConfigName("wc", old.Status.DeployHash), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "rootLogger.level = INFO\n", cm.Data["log4j-console.properties"])

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.LogConfiguration["log4j-console.properties"] = "rootLogger.level = DEBUG\n"
	})
	updated := w.runUntil("wc", "updated", upgradedFrom(old))
	require.NotEqual(t, old.Status.DeployHash, updated.Status.DeployHash)
	cm, err = cms.Get(context.Background(), flink.LogConfigName("wc", updated.Status.DeployHash), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "rootLogger.level = DEBUG\n", cm.Data["log4j-console.properties"])
	w.runUntil("wc", "old cluster removed", func(*v1beta1.FlinkApplication) bool { return !w.clusterExists(old, old.Status.DeployHash) })
	for i := 0; i < 3; i++ {
		_, _ = w.reconcile("wc")
	}
	_, err = cms.Get(context.Background(), flink.LogConfigName("wc", old.Status.DeployHash), metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the old cluster's ConfigMap goes with it: %v", err)
}
