package flinkapplication

import (
	"math"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A FlinkSessionCluster renders through flink.OwnerFromSessionCluster exactly as it rendered through
// its application view (sessionClusterView): the same hash, the same objects, the same Flink
// configuration and the same pod policy verdict, so that moving the session cluster off the view
// changes no running cluster.

// renderByValueClusters are the session clusters of pkg/controller/flink's testSessionClusters,
// whose hashes it pins: defaults only, every cluster field set, replicas below 1, and replicas ×
// slots past an int32.
func renderByValueClusters() map[string]*v1beta1.FlinkSessionCluster {
	i32 := func(v int32) *int32 { return &v }
	minimal := &v1beta1.FlinkSessionCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "sessions", Namespace: "flink", UID: "uid-s1"},
		Spec:       v1beta1.FlinkSessionClusterSpec{ClusterSpec: v1beta1.ClusterSpec{Image: "flink:1.20"}},
	}
	one := int64(1)
	full := &v1beta1.FlinkSessionCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "analytics", UID: "uid-s2",
			Labels:      map[string]string{"team": "data", "flink-app": "spoofed"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{}}`, "owner": "data"}},
		Spec: v1beta1.FlinkSessionClusterSpec{
			ClusterSpec: v1beta1.ClusterSpec{
				Image: "registry.example.com/flink:1.17", ImagePullPolicy: corev1.PullAlways,
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}, ServiceAccountName: "flink",
				SecurityContext: &corev1.PodSecurityContext{RunAsUser: &one},
				FlinkConfig: v1beta1.FlinkConfig{"state.backend.type": "rocksdb", "execution.checkpointing.interval": "10s",
					"taskmanager.network.memory.fraction": 0.15, "parallelism.default": int64(4), "high-availability.type": "kubernetes"},
				FlinkVersion: "1.17",
				JobManagerConfig: v1beta1.JobManagerConfig{Replicas: i32(2), Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}},
					NodeSelector: map[string]string{"pool": "jm"}},
				RPCPort: i32(7123), BlobPort: i32(7125), QueryPort: i32(7124), UIPort: i32(9081), MetricsQueryPort: i32(51101),
				Volumes:      []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			},
			RestartNonce: "r1",
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{Replicas: i32(3), TaskManagerConfig: v1beta1.TaskManagerConfig{
				TaskSlots: i32(4), Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}},
				EnvConfig:   v1beta1.EnvironmentConfig{Env: []corev1.EnvVar{{Name: "MODE", Value: "session"}}},
				Tolerations: []corev1.Toleration{{Key: "flink", Operator: corev1.TolerationOpExists}}}},
		},
	}
	zero := &v1beta1.FlinkSessionCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "flink.k8s.io/v1beta1", Kind: "FlinkSessionCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "flink", UID: "uid-s3"},
		Spec: v1beta1.FlinkSessionClusterSpec{ClusterSpec: v1beta1.ClusterSpec{Image: "flink:1.10", FlinkVersion: "1.10"},
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{Replicas: i32(0)}},
	}
	huge := &v1beta1.FlinkSessionCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "huge", Namespace: "flink"},
		Spec: v1beta1.FlinkSessionClusterSpec{ClusterSpec: v1beta1.ClusterSpec{Image: "flink:2.0"},
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{Replicas: i32(math.MaxInt32)}},
	}
	return map[string]*v1beta1.FlinkSessionCluster{"minimal": minimal, "full": full, "zero": zero, "huge": huge}
}

func TestSessionClusterRendersByValueAsItsView(t *testing.T) {
	for name, c := range renderByValueClusters() {
		t.Run(name, func(t *testing.T) {
			view, owner := sessionClusterView(c), flink.OwnerFromSessionCluster(c)
			hash := flink.ClusterHash(view)
			assert.Equal(t, hash, flink.SessionClusterHash(c))

			want, wantErr := flink.RenderCluster(view, hash, "")
			got, err := owner.RenderCluster(hash, "")
			assert.Equal(t, wantErr, err)
			if name == "huge" {
				// The one difference: the view's TaskManagers were the slots of a clamped parallelism
				// (2147483647 / 16 slots), the owner's are the replicas asked for. Neither deploys:
				// the CRD and sessionClusterSpecError refuse more slots than an int32 counts.
				require.NotNil(t, got)
				assert.Equal(t, int32(134217728), *want.TaskManager.Spec.Replicas)
				assert.Equal(t, int32(math.MaxInt32), *got.TaskManager.Spec.Replicas)
				got.TaskManager.Spec.Replicas = want.TaskManager.Spec.Replicas
			} else {
				assert.Equal(t, flink.TaskManagerReplicas(view), owner.TaskManagers)
			}
			assert.Equal(t, want, got)
			assert.Equal(t, flink.RenderGenericService(view, hash), owner.RenderGenericService(hash))

			jm, tm, cerr := flink.RenderFlinkConfig(view, hash)
			jm2, tm2, cerr2 := owner.RenderFlinkConfig(hash)
			assert.Equal(t, []any{jm, tm, cerr}, []any{jm2, tm2, cerr2})

			for _, p := range []flink.PodPolicy{flink.PodPolicyFrom(nil), {ServiceAccounts: []string{"*"}, AllowRoot: true}} {
				assert.Equal(t, p.Check(view), p.CheckCluster(owner))
			}
			assert.Equal(t, flink.UIPort(view), owner.UIPort())
			assert.Equal(t, flink.TaskSlots(view), owner.TaskSlots())
			assert.Equal(t, view.Spec.Parallelism, owner.Parallelism)
			assert.Equal(t, k8.OwnerReference(view), k8.ControllerReference(&owner.ObjectMeta, owner.Kind))
			if got != nil {
				assert.Equal(t, k8.IsOwnedBy(got.Service, view), owner.IsOwnerOf(got.Service))
				assert.True(t, owner.IsOwnerOf(got.JobManager))
			}
		})
	}
}

// A spec that cannot render is refused with the same words either way.
func TestSessionClusterRefusalsByValueAsItsView(t *testing.T) {
	for name, edit := range map[string]func(c *v1beta1.FlinkSessionCluster){
		"image":       func(c *v1beta1.FlinkSessionCluster) { c.Spec.Image = "Not An Image" },
		"owned key":   func(c *v1beta1.FlinkSessionCluster) { c.Spec.FlinkConfig["rest.port"] = "1" },
		"memory":      func(c *v1beta1.FlinkSessionCluster) { c.Spec.TaskManagerConfig.SystemMemoryFraction = &[]float64{1}[0] },
		"JobManagers": func(c *v1beta1.FlinkSessionCluster) { delete(c.Spec.FlinkConfig, "high-availability.type") },
		"hostPath": func(c *v1beta1.FlinkSessionCluster) {
			c.Spec.Volumes[0].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}
		},
		"AppArmor": func(c *v1beta1.FlinkSessionCluster) {
			c.Annotations["container.apparmor.security.beta.kubernetes.io/jobmanager"] = "unconfined"
		},
	} {
		c := renderByValueClusters()["full"]
		edit(c)
		view, owner := sessionClusterView(c), flink.OwnerFromSessionCluster(c)
		_, want := flink.RenderCluster(view, "abc", "")
		_, got := owner.RenderCluster("abc", "")
		assert.Equal(t, want, got, name)
		p := flink.PodPolicy{ServiceAccounts: []string{"*"}, AllowRoot: true}
		assert.Equal(t, p.Check(view), p.CheckCluster(owner), name)
		assert.True(t, want != nil || p.Check(view) != nil, name+": the edit is refused")
	}
}

// A FlinkApplication renders through its owner as through the application forms, which the
// controller calls.
func TestApplicationRendersByValueAsBefore(t *testing.T) {
	c := renderByValueClusters()["full"]
	app := &v1beta1.FlinkApplication{ObjectMeta: c.ObjectMeta}
	app.Spec.ClusterSpec, app.Spec.TaskManagerConfig = c.Spec.ClusterSpec, c.Spec.TaskManagerConfig.TaskManagerConfig
	app.Spec.Parallelism, app.Spec.JarName, app.Spec.EntryClass, app.Spec.RestartNonce = 7, "job.jar", "org.example.Job", "n"
	app.Spec.DeploymentMode = v1beta1.DeploymentModeBlueGreen
	owner := flink.OwnerFromApplication(app)
	hash := flink.ClusterHash(app)
	assert.Equal(t, "a389735d", hash, "pinned before the owner existed")

	want, err := flink.RenderCluster(app, hash, v1beta1.GreenFlinkApplication)
	require.NoError(t, err)
	got, err := owner.RenderCluster(hash, v1beta1.GreenFlinkApplication)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, "shared-green", got.VersionService.Name)
	assert.Equal(t, int32(2), *got.TaskManager.Spec.Replicas)
	assert.Equal(t, flink.RenderGenericService(app, hash), owner.RenderGenericService(hash))
	assert.Equal(t, flink.PodPolicyFrom(nil).Check(app), flink.PodPolicyFrom(nil).CheckCluster(owner))
}
