package flinkapplication

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

func withKubernetesHA(s *v1beta1.FlinkApplicationSpec) {
	s.FlinkConfig["high-availability.type"] = "kubernetes"
	s.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/ha"
}

// haConfigMaps lists the HA ConfigMaps in the namespace by name.
func (w *world) haConfigMaps() []string {
	cms, err := w.kube.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: flink.HAConfigMapSelector})
	require.NoError(w.t, err)
	var out []string
	for _, cm := range cms.Items {
		out = append(out, cm.Name)
	}
	sort.Strings(out)
	return out
}

// haDeletes lists the HA ConfigMaps the operator deleted, in order.
func (w *world) haDeletes() []string {
	var out []string
	for _, a := range w.kube.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok && d.GetResource().Resource == "configmaps" {
			out = append(out, d.GetName())
		}
	}
	return out
}

func clusterConfigMap(app *v1beta1.FlinkApplication, hash string) string {
	return flink.HAClusterIDOf(app.Name, hash) + "-cluster-config-map"
}

func TestUpdatesLeaveOnlyTheRunningClustersHAConfigMaps(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", withKubernetesHA)
	require.Equal(t, []string{clusterConfigMap(app, app.Status.DeployHash)}, w.haConfigMaps())
	var replaced []string
	for i := 2; i <= 11; i++ {
		old := app
		w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = fmt.Sprintf("flink-wordcount:%d", i) })
		app = w.runUntil("wc", "upgraded", upgradedFrom(old))
		replaced = append(replaced, clusterConfigMap(old, old.Status.DeployHash))
		app = w.runUntil("wc", "old cluster's HA ConfigMaps removed", func(*v1beta1.FlinkApplication) bool {
			return len(w.haConfigMaps()) == 1
		})
		assert.Equal(t, []string{clusterConfigMap(app, app.Status.DeployHash)}, w.haConfigMaps(), "update %d", i-1)
		assert.NotContains(t, w.haDeletes(), clusterConfigMap(app, app.Status.DeployHash), "the running cluster's are never removed")
	}
	assert.Equal(t, replaced, w.haDeletes(), "each replaced cluster's, once")
	assert.Contains(t, eventReasons(w.events()), "HAConfigMapsRemoved")
}

func TestTheRunningClustersHAConfigMapsOutliveItsDeployment(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", withKubernetesHA)
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(old, old.Status.DeployHash), metav1.DeleteOptions{}))
	for i := 0; i < 3; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Empty(t, w.haDeletes(), "a JobManager created again recovers its job from them")
	w.runUntil("wc", "recovered", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID == old.Status.JobStatus.JobID
	})
	assert.Empty(t, w.haDeletes())
}

func TestHAConfigMapsOfAClusterStayWhileItsJobManagerPodRuns(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", withKubernetesHA)
	gone := "0badcafe"
	// A cluster of the application's own: its status names it (here, the failed stop of its job).
	app.Status.Ledger = append(app.Status.Ledger, v1beta1.StateEntry{Purpose: v1beta1.SavepointUpgrade, JobID: "0badcafe0badcafe0badcafe0badcafe",
		ClusterHash: gone, Result: v1beta1.StateFailed})
	_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).UpdateStatus(context.Background(), app, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.writeHAConfigMap(flink.HAClusterIDOf("wc", gone), clusterConfigMap(app, gone))
	pod := jobManagerPod("wc-"+gone+"-jm-0", "wc")
	pod.Labels[k8.HashLabel] = gone
	_, err = w.kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Contains(t, w.haConfigMaps(), clusterConfigMap(app, gone), "a terminating JobManager would write them again")

	require.NoError(t, w.kube.CoreV1().Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{}))
	_, _ = w.reconcile("wc")
	assert.Equal(t, []string{clusterConfigMap(app, app.Status.DeployHash)}, w.haConfigMaps())
}

// HA ConfigMaps of a cluster id of the application's name that its status does not name were left by
// a namesake (TestAnApplicationCreatedAgainLeavesTheHAConfigMapsItsNamesakeKept): they stay.
func TestHAConfigMapsOfAClusterTheApplicationNeverRecordedAreLeftAlone(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", withKubernetesHA)
	w.writeHAConfigMap(flink.HAClusterIDOf("wc", "0badcafe"), clusterConfigMap(app, "0badcafe"))
	w.passes("wc", 3)
	assert.Contains(t, w.haConfigMaps(), clusterConfigMap(app, "0badcafe"))
}

func TestHAConfigMapsOfOtherClustersAreLeftAlone(t *testing.T) {
	w := newWorld(t)
	runningWith(t, w, "wc", withKubernetesHA)
	// Another application's, a cluster id the operator never renders, and Flink clusters of others.
	for id, name := range map[string]string{"wc2-0badcafe": "a", "wc-not-a-hash": "b", "wc": "c", "payments": "d"} {
		w.writeHAConfigMap(id, name)
	}
	before := w.haConfigMaps()
	for i := 0; i < 3; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Equal(t, before, w.haConfigMaps())
}

func TestDeletingAnApplicationRemovesItsHAConfigMapsAfterItsJobStopped(t *testing.T) {
	for _, mode := range []v1beta1.DeleteMode{v1beta1.DeleteModeSavepoint, v1beta1.DeleteModeForceCancel, v1beta1.DeleteModeNone} {
		t.Run(string(mode), func(t *testing.T) {
			w := newWorld(t)
			app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
				withKubernetesHA(s)
				s.DeleteMode = mode
			})
			w.deleteApp("wc")
			got := w.runUntil("wc", "finalizer removed", finalized)
			if mode == v1beta1.DeleteModeNone {
				assert.Equal(t, []string{clusterConfigMap(app, app.Status.DeployHash)}, w.haConfigMaps(),
					"deleteMode None leaves Flink alone, and HA points to the job's newest checkpoint")
				return
			}
			assert.Empty(t, w.haConfigMaps())
			jobs := w.timeline.Jobs(ns + "/wc")
			require.Len(t, jobs, 1)
			states := jobs[0].States
			assert.Equal(t, "CANCELED", states[len(states)-1].State, "removed only after the job stopped, not suspended for HA to recover")
			if mode == v1beta1.DeleteModeSavepoint {
				assert.NotEmpty(t, got.Status.FinalSavepointPath)
			}
		})
	}
}

func TestASessionClusterKeepsHAConfigMapsOfAJobFlinkHasNotFinishedWith(t *testing.T) {
	rc := newContext(context.Background(), &fsm.Pass{Meta: &metav1.ObjectMeta{Name: "session"}}, nil)
	rc.HAConfigMaps = map[string][]string{
		"0badcafe": {"session-0badcafe-cluster-config-map", "session-0badcafe-4b7f1c2d9e0a8f3b6c5d4e3f2a1b0c9d-config-map"},
	}
	assert.Contains(t, kindpass.HAJobLeft(rc.Pass), "job 4b7f1c2d9e0a8f3b6c5d4e3f2a1b0c9d of cluster session-0badcafe")
	rc.HAConfigMaps["0badcafe"] = rc.HAConfigMaps["0badcafe"][:1]
	assert.Empty(t, kindpass.HAJobLeft(rc.Pass))
	rc.Job = &v1beta1.JobOwnerStatus{}
	rc.HAConfigMaps["0badcafe"] = append(rc.HAConfigMaps["0badcafe"], "session-0badcafe-4b7f1c2d9e0a8f3b6c5d4e3f2a1b0c9d-config-map")
	assert.Empty(t, kindpass.HAJobLeft(rc.Pass), "an application stops its job or records its state before it lets go")
}

func TestHAConfigMapClusterReadsOnlyClusterIDsTheOperatorRenders(t *testing.T) {
	// Named and labelled as real Flink 2.3 names and labels them.
	cm := func(id string, labels map[string]string) metav1.Object {
		return &metav1.ObjectMeta{Name: id + "-cluster-config-map", Labels: labels}
	}
	ha := func(id string) map[string]string {
		return map[string]string{flink.FlinkObjectLabel: flink.FlinkObject, flink.HAClusterIDLabel: id}
	}
	owner, hash, ok := flink.HAConfigMapCluster(cm("my-app-0badcafe", ha("my-app-0badcafe")))
	assert.True(t, ok)
	assert.Equal(t, "my-app", owner)
	assert.Equal(t, "0badcafe", hash)
	for _, id := range []string{"my-app", "my-app-0BADCAFE", "my-app-badcafe", "-0badcafe", "my-app-0badcafe1"} {
		_, _, ok := flink.HAConfigMapCluster(cm(id, ha(id)))
		assert.False(t, ok, id)
	}
	_, _, ok = flink.HAConfigMapCluster(cm("my-app-0badcafe", map[string]string{flink.HAClusterIDLabel: "my-app-0badcafe"}))
	assert.False(t, ok, "not an HA ConfigMap")
}
