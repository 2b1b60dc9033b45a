package flinkapplication

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func memoryOf(q string) *corev1.ResourceRequirements {
	return &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}}
}

// assertNothingCreated checks that a refused spec left no Deployment or Service behind.
func (w *world) assertNothingCreated() {
	w.t.Helper()
	ctx := context.Background()
	deploys, err := w.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	require.NoError(w.t, err)
	services, err := w.kube.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	require.NoError(w.t, err)
	assert.Empty(w.t, deploys.Items, "Deployments created for a refused spec")
	assert.Empty(w.t, services.Items, "Services created for a refused spec")
}

// Specs the schema refuses at apply time where CEL can, stored anyway (written before a rule
// existed, or, for flinkConfig, beyond what CEL can read), end in DeployFailed naming the field, on
// the first pass and before anything is created.
func TestNonsenseApplicationsEndInDeployFailedNamingTheField(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(*v1beta1.FlinkApplication)
		wantField string
	}{
		{"memory that leaves Flink nothing", func(a *v1beta1.FlinkApplication) {
			a.Spec.TaskManagerConfig.Resources = memoryOf("1")
		}, "spec.taskManagerConfig.resources"},
		{"a fraction that leaves Flink nothing", func(a *v1beta1.FlinkApplication) {
			a.Spec.JobManagerConfig.Resources = memoryOf("1Gi")
			a.Spec.JobManagerConfig.SystemMemoryFraction = ptr(0.9999999999)
		}, "spec.jobManagerConfig.resources"},
		{"two JobManagers without high availability", func(a *v1beta1.FlinkApplication) {
			a.Spec.JobManagerConfig.Replicas = ptr(int32(2))
		}, "spec.jobManagerConfig.replicas"},
		{"default upgradeMode without a savepoint directory", func(a *v1beta1.FlinkApplication) {
			delete(a.Spec.FlinkConfig, "state.savepoints.dir")
		}, "spec.upgradeMode"},
		{"an invalid image reference", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "Flink Wordcount:1" }, "spec.image"},
		{"parallelism past Flink's maximum", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = math.MaxInt32 }, "spec.parallelism"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			app := wordcount("wc")
			tt.edit(app)
			w.create(app)
			_, err := w.reconcile("wc")
			require.NoError(t, err)
			got := w.get("wc")
			require.Equal(t, v1beta1.PhaseDeployFailed, got.Status.Phase, "the first pass refuses it; reason %q", got.Status.Reason)
			assert.Contains(t, got.Status.Reason, tt.wantField)
			w.assertNothingCreated()
		})
	}
}

// A FlinkSessionCluster renders through the same renderer (flink.ClusterOwner), so the same nonsense
// ends its deploy too, and a slot count Flink cannot hold is refused instead of wrapping around.
func TestNonsenseSessionClustersEndInDeployFailedNamingTheField(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(*v1beta1.FlinkSessionCluster)
		wantField string
	}{
		{"memory that leaves Flink nothing", func(c *v1beta1.FlinkSessionCluster) {
			c.Spec.TaskManagerConfig.Resources = memoryOf("1")
		}, "spec.taskManagerConfig.resources"},
		{"two JobManagers without high availability", func(c *v1beta1.FlinkSessionCluster) {
			c.Spec.JobManagerConfig.Replicas = ptr(int32(3))
		}, "spec.jobManagerConfig.replicas"},
		{"an invalid image reference", func(c *v1beta1.FlinkSessionCluster) { c.Spec.Image = "flink:1.20 " }, "spec.image"},
		{"more task slots than an int32", func(c *v1beta1.FlinkSessionCluster) {
			c.Spec.TaskManagerConfig.Replicas = ptr(int32(math.MaxInt32))
		}, "spec.taskManagerConfig.replicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.withSessions()
			c := sessionCluster("shared")
			tt.edit(c)
			w.createSessionCluster(c)
			w.reconcileSessions()
			got := w.sessionCluster("shared")
			require.Equal(t, v1beta1.SessionClusterDeployFailed, got.Status.Phase, "the first pass refuses it; reason %q", got.Status.Reason)
			assert.Contains(t, got.Status.Reason, tt.wantField)
			w.assertNothingCreated()
		})
	}
}

func ptr[T any](v T) *T { return &v }
