package flink

import (
	"math"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Specs that would render a cluster that cannot work are refused by RenderCluster, before anything
// is created, with the field named.
func TestRenderClusterRefusesNonsenseNamingTheField(t *testing.T) {
	memory := func(q string) *corev1.ResourceRequirements {
		return &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}}
	}
	tests := []struct {
		name      string
		edit      func(*v1beta1.FlinkApplication)
		wantField string
	}{
		{"image with an uppercase repository", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "Flink:1.20" }, "spec.image"},
		{"image with a space", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink 1.20" }, "spec.image"},
		{"image with an empty tag", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink:" }, "spec.image"},
		{"image as a URL", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "https://registry.example.com/flink" }, "spec.image"},
		{"image with a short digest", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink@sha256:abc" }, "spec.image"},
		{"two JobManagers without high availability", func(a *v1beta1.FlinkApplication) {
			a.Spec.JobManagerConfig.Replicas = ptr(int32(2))
		}, "spec.jobManagerConfig.replicas"},
		{"two JobManagers with high availability none", func(a *v1beta1.FlinkApplication) {
			a.Spec.JobManagerConfig.Replicas = ptr(int32(2))
			a.Spec.FlinkConfig["high-availability.type"] = "NONE"
		}, "spec.jobManagerConfig.replicas"},
		{"TaskManager memory of one byte", func(a *v1beta1.FlinkApplication) {
			a.Spec.TaskManagerConfig.Resources = memory("1")
		}, "spec.taskManagerConfig.resources"},
		{"JobManager memory a fraction leaves nothing of", func(a *v1beta1.FlinkApplication) {
			a.Spec.JobManagerConfig.Resources = memory("1Gi")
			a.Spec.JobManagerConfig.SystemMemoryFraction = ptr(0.9999999999)
		}, "spec.jobManagerConfig.resources"},
		{"legacy Flink heap below 1Mi", func(a *v1beta1.FlinkApplication) {
			a.Spec.FlinkVersion = "1.8"
			a.Spec.TaskManagerConfig.Resources = memory("1Mi") // half of it goes off-heap by default
		}, "spec.taskManagerConfig.resources"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := testApp()
			tt.edit(app)
			_, err := RenderCluster(app, "0a1b2c3d", "")
			require.Error(t, err)
			assert.Regexp(t, "^"+regexp.QuoteMeta(tt.wantField)+"\\b", err.Error())
		})
	}
}

func TestRenderClusterAdmitsSensibleVariants(t *testing.T) {
	tests := []struct {
		name string
		edit func(*v1beta1.FlinkApplication)
	}{
		{"image with registry, port, path and tag", func(a *v1beta1.FlinkApplication) {
			a.Spec.Image = "registry.example.com:5000/team/flink-job:1.20.1-scala_2.12"
		}},
		{"image by digest", func(a *v1beta1.FlinkApplication) {
			a.Spec.Image = "ghcr.io/flinkfsm/job@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
		}},
		{"image on localhost", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "localhost/flink" }},
		{"two JobManagers with Kubernetes HA", func(a *v1beta1.FlinkApplication) {
			a.Spec.JobManagerConfig.Replicas = ptr(int32(2))
			a.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
		}},
		{"two JobManagers with pre-1.17 HA", func(a *v1beta1.FlinkApplication) {
			a.Spec.JobManagerConfig.Replicas = ptr(int32(2))
			a.Spec.FlinkConfig["high-availability"] = "zookeeper"
		}},
		{"2Mi of memory", func(a *v1beta1.FlinkApplication) {
			a.Spec.TaskManagerConfig.Resources = memoryResources("1", "2Mi")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := testApp()
			tt.edit(app)
			_, err := RenderCluster(app, "0a1b2c3d", "")
			assert.NoError(t, err)
		})
	}
}

// parallelism + slots - 1 overflowed an int32: parallelism 2147483647 over 2 slots rendered a
// negative TaskManager count.
func TestTaskManagerCountDoesNotOverflow(t *testing.T) {
	app := testApp()
	app.Spec.Parallelism = math.MaxInt32
	app.Spec.TaskManagerConfig.TaskSlots = ptr(int32(2))
	assert.Equal(t, int32(1073741824), TaskManagerReplicas(app))
	app.Spec.TaskManagerConfig.TaskSlots = ptr(int32(math.MaxInt32))
	assert.Equal(t, int32(1), TaskManagerReplicas(app))
}

func TestCheckJob(t *testing.T) {
	withDir := func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig["state.savepoints.dir"] = "s3://bucket/sp" }
	tests := []struct {
		name      string
		edit      func(*v1beta1.FlinkApplication)
		wantField string // empty when admitted
	}{
		{"default upgradeMode with a savepoint directory", withDir, ""},
		{"default upgradeMode with Flink 1.20's key", func(a *v1beta1.FlinkApplication) {
			a.Spec.FlinkConfig["execution.checkpointing.savepoint-dir"] = "s3://bucket/sp"
		}, ""},
		{"default upgradeMode without a savepoint directory", func(*v1beta1.FlinkApplication) {}, "spec.upgradeMode"},
		{"upgradeMode Savepoint with a blank directory", func(a *v1beta1.FlinkApplication) {
			a.Spec.UpgradeMode = v1beta1.UpgradeModeSavepoint
			a.Spec.FlinkConfig["state.savepoints.dir"] = " "
		}, "spec.upgradeMode"},
		{"LastState needs no savepoint directory", func(a *v1beta1.FlinkApplication) { a.Spec.UpgradeMode = v1beta1.UpgradeModeLastState }, ""},
		{"Stateless needs no savepoint directory", func(a *v1beta1.FlinkApplication) { a.Spec.UpgradeMode = v1beta1.UpgradeModeStateless }, ""},
		{"savepointDisabled means LastState", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointDisabled = true }, ""},
		{"parallelism past Flink's maximum", func(a *v1beta1.FlinkApplication) {
			withDir(a)
			a.Spec.Parallelism = MaxParallelism + 1
		}, "spec.parallelism"},
		{"parallelism 0", func(a *v1beta1.FlinkApplication) {
			withDir(a)
			a.Spec.Parallelism = 0
		}, "spec.parallelism"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := testApp()
			tt.edit(app)
			err := CheckJob(app)
			if tt.wantField == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Regexp(t, "^"+regexp.QuoteMeta(tt.wantField)+"\\b", err.Error())
		})
	}
}
