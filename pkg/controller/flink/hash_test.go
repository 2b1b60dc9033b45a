package flink

import (
	"regexp"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// goldenHash pins the hash of testApp. If this changes, every running application would be
// redeployed on operator upgrade: change it only on purpose.
const goldenHash = "1452f91e"

func TestClusterHashIsStable(t *testing.T) {
	h := ClusterHash(testApp())
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{8}$`), h)
	assert.Equal(t, goldenHash, h)
	for range 20 {
		assert.Equal(t, h, ClusterHash(testApp()), "map iteration order must not matter")
	}
}

// The same manifest written with a different key order, decoded the way the API server's objects
// are, hashes the same as any other decoding of it.
func TestClusterHashIgnoresKeyOrder(t *testing.T) {
	a := `
image: img:1
jarName: job.jar
parallelism: 2
flinkConfig:
  a.key: one
  b.key: 2
  c.key: true
`
	b := `
flinkConfig:
  c.key: true
  b.key: 2
  a.key: one
parallelism: 2
jarName: job.jar
image: img:1
`
	var specA, specB v1beta1.FlinkApplicationSpec
	require.NoError(t, yaml.Unmarshal([]byte(a), &specA))
	require.NoError(t, yaml.Unmarshal([]byte(b), &specB))
	assert.Equal(t, ClusterHash(&v1beta1.FlinkApplication{Spec: specA}), ClusterHash(&v1beta1.FlinkApplication{Spec: specB}))
}

func TestClusterHashIgnores(t *testing.T) {
	tests := map[string]func(*v1beta1.FlinkApplication){
		"last-applied-configuration": func(a *v1beta1.FlinkApplication) {
			a.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = `{"spec":{"image":"x"}}`
		},
		"labels":              func(a *v1beta1.FlinkApplication) { a.Labels["team"] = "other" },
		"name and generation": func(a *v1beta1.FlinkApplication) { a.Generation = 7; a.ResourceVersion = "42" },
		"status": func(a *v1beta1.FlinkApplication) {
			a.Status.Phase = "Running"
			a.Status.DeployHash = "deadbeef"
		},
		"forceRollback":       func(a *v1beta1.FlinkApplication) { a.Spec.ForceRollback = true },
		"deleteMode":          func(a *v1beta1.FlinkApplication) { a.Spec.DeleteMode = v1beta1.DeleteModeForceCancel },
		"tearDownVersionHash": func(a *v1beta1.FlinkApplication) { a.Spec.TearDownVersionHash = "abc" },
		"savepointPath":       func(a *v1beta1.FlinkApplication) { a.Spec.SavepointPath = "s3://sp/1" },
		"savepointInfo": func(a *v1beta1.FlinkApplication) {
			a.Spec.SavepointInfo.SavepointLocation = "s3://sp/1"
		},
		"savepointDisabled":              func(a *v1beta1.FlinkApplication) { a.Spec.SavepointDisabled = true },
		"maxCheckpointRestoreAgeSeconds": func(a *v1beta1.FlinkApplication) { a.Spec.MaxCheckpointRestoreAgeSeconds = ptr(int32(60)) },
		"fallbackWithoutState":           func(a *v1beta1.FlinkApplication) { a.Spec.FallbackWithoutState = true },
		"scaleMode":                      func(a *v1beta1.FlinkApplication) { a.Spec.ScaleMode = v1beta1.ScaleModeInPlace },
		"deploymentMode":                 func(a *v1beta1.FlinkApplication) { a.Spec.DeploymentMode = v1beta1.DeploymentModeSingle },
		"ingress": func(a *v1beta1.FlinkApplication) {
			a.Spec.IngressAnnotations = map[string]string{"a": "b"}
			a.Spec.IngressTLSSecretName = "tls"
		},
		"same quantity, other spelling": func(a *v1beta1.FlinkApplication) {
			a.Spec.TaskManagerConfig.Resources = memoryResources("2", "1Gi")
		},
	}
	base := testApp()
	base.Spec.TaskManagerConfig.Resources = memoryResources("2", "1024Mi")
	want := ClusterHash(base)
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			app := base.DeepCopy()
			change(app)
			assert.Equal(t, want, ClusterHash(app))
		})
	}
}

func TestClusterHashChanges(t *testing.T) {
	tests := map[string]func(*v1beta1.FlinkApplication){
		"image":                 func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" },
		"imagePullPolicy":       func(a *v1beta1.FlinkApplication) { a.Spec.ImagePullPolicy = corev1.PullAlways },
		"parallelism":           func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 4 },
		"restartNonce":          func(a *v1beta1.FlinkApplication) { a.Spec.RestartNonce = "1" },
		"flinkConfig value":     func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig["parallelism.default"] = int64(5) },
		"flinkConfig new key":   func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig["x"] = "y" },
		"flinkVersion":          func(a *v1beta1.FlinkApplication) { a.Spec.FlinkVersion = "1.19" },
		"jarName":               func(a *v1beta1.FlinkApplication) { a.Spec.JarName = "other.jar" },
		"entryClass":            func(a *v1beta1.FlinkApplication) { a.Spec.EntryClass = "Other" },
		"programArgs":           func(a *v1beta1.FlinkApplication) { a.Spec.ProgramArgs = "--in x" },
		"programArgsList":       func(a *v1beta1.FlinkApplication) { a.Spec.ProgramArgsList = []string{"--in", "x"} },
		"allowNonRestoredState": func(a *v1beta1.FlinkApplication) { a.Spec.AllowNonRestoredState = true },
		"uiPort":                func(a *v1beta1.FlinkApplication) { a.Spec.UIPort = ptr(int32(9081)) },
		"serviceAccountName":    func(a *v1beta1.FlinkApplication) { a.Spec.ServiceAccountName = "flink" },
		"jobManagerConfig resources": func(a *v1beta1.FlinkApplication) {
			a.Spec.JobManagerConfig.Resources = memoryResources("1", "2Gi")
		},
		"taskManagerConfig memory": func(a *v1beta1.FlinkApplication) {
			a.Spec.TaskManagerConfig.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("2Gi")
		},
		"taskSlots": func(a *v1beta1.FlinkApplication) { a.Spec.TaskManagerConfig.TaskSlots = ptr(int32(4)) },
		"taskManagerConfig env": func(a *v1beta1.FlinkApplication) {
			a.Spec.TaskManagerConfig.EnvConfig.Env = []corev1.EnvVar{{Name: "A", Value: "b"}}
		},
		"volumes": func(a *v1beta1.FlinkApplication) {
			a.Spec.Volumes = []corev1.Volume{{Name: "v"}}
		},
		"volumeMounts": func(a *v1beta1.FlinkApplication) {
			a.Spec.VolumeMounts = []corev1.VolumeMount{{Name: "v", MountPath: "/v"}}
		},
		"securityContext": func(a *v1beta1.FlinkApplication) {
			a.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(9999))}
		},
	}
	base := testApp()
	base.Spec.TaskManagerConfig.Resources = memoryResources("2", "1Gi")
	want := ClusterHash(base)
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			app := base.DeepCopy()
			change(app)
			assert.NotEqual(t, want, ClusterHash(app))
		})
	}
}

// The spec is hashed as written; see ClusterHash.
func TestClusterHashDoesNotApplyDefaults(t *testing.T) {
	app := testApp()
	app.Spec.TaskManagerConfig.TaskSlots = nil
	defaulted := app.DeepCopy()
	defaulted.Spec.TaskManagerConfig.TaskSlots = ptr(DefaultTaskSlots)
	assert.NotEqual(t, ClusterHash(app), ClusterHash(defaulted))
}
