package flinkapplication

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A replica that cannot be sure it still holds its leader lease changes nothing: no status write,
// no Deployment, no savepoint, however many passes it makes; once it can be sure again, the update
// goes through (issue 25 item 10).
func TestAReplicaThatMayNotActChangesNothing(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	jm := w.jm(old, old.Status.DeployHash)
	deploys, err := w.kube.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	frozen := errors.New("the leader lease was last renewed 14s ago")
	w.env.Acting = func() error { return frozen }

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	before := w.get("wc")
	for i := 0; i < 20; i++ {
		_, _ = w.reconcile("wc")
	}
	after := w.get("wc")
	assert.Equal(t, before.ResourceVersion, after.ResourceVersion, "no status write")
	assert.Equal(t, 0, jm.SavepointTriggers(), "no savepoint triggered")
	now, err := w.kube.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, now.Items, len(deploys.Items), "no Deployment created")

	w.env.Acting = func() error { return nil }
	w.runUntil("wc", "updated", upgradedFrom(old))
	w.assertOneJobAtATime(w.events())
}
