package flink

import (
	"math"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testSessionClusters are session clusters of every shape the hash and the owner read: defaults
// only, every cluster field set, replicas below 1, and replicas × slots past an int32. The same
// clusters are in pkg/controller/flinkapplication/render_by_value_test.go, which checks that they
// render as their application views did.
func testSessionClusters() map[string]*v1beta1.FlinkSessionCluster {
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
				JobManagerConfig: v1beta1.JobManagerConfig{Replicas: ptr(int32(2)), Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}},
					NodeSelector: map[string]string{"pool": "jm"}},
				RPCPort: ptr(int32(7123)), BlobPort: ptr(int32(7125)), QueryPort: ptr(int32(7124)), UIPort: ptr(int32(9081)),
				MetricsQueryPort: ptr(int32(51101)),
				Volumes:          []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				VolumeMounts:     []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			},
			RestartNonce: "r1",
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{Replicas: ptr(int32(3)), TaskManagerConfig: v1beta1.TaskManagerConfig{
				TaskSlots: ptr(int32(4)), Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}},
				EnvConfig:   v1beta1.EnvironmentConfig{Env: []corev1.EnvVar{{Name: "MODE", Value: "session"}}},
				Tolerations: []corev1.Toleration{{Key: "flink", Operator: corev1.TolerationOpExists}}}},
		},
	}
	zero := &v1beta1.FlinkSessionCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "flink.k8s.io/v1beta1", Kind: "FlinkSessionCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "flink", UID: "uid-s3"},
		Spec: v1beta1.FlinkSessionClusterSpec{ClusterSpec: v1beta1.ClusterSpec{Image: "flink:1.10", FlinkVersion: "1.10"},
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{Replicas: ptr(int32(0))}},
	}
	huge := &v1beta1.FlinkSessionCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "huge", Namespace: "flink"},
		Spec: v1beta1.FlinkSessionClusterSpec{ClusterSpec: v1beta1.ClusterSpec{Image: "flink:2.0"},
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{Replicas: ptr(int32(math.MaxInt32))}},
	}
	return map[string]*v1beta1.FlinkSessionCluster{"minimal": minimal, "full": full, "zero": zero, "huge": huge}
}

// goldenSessionHashes pin the hashes of testSessionClusters. They were taken, before
// SessionClusterHash existed, as flink.ClusterHash of each cluster's application view
// (sessionClusterView in pkg/controller/flinkapplication): a session cluster running then is
// named by that hash, and a different one would redeploy it on operator upgrade.
var goldenSessionHashes = map[string]string{
	"minimal": "6a1b04bc",
	"full":    "c580e465",
	"zero":    "c17fc2f3",
	"huge":    "cb98070c",
}

func TestSessionClusterHashIsStable(t *testing.T) {
	clusters := testSessionClusters()
	require.Len(t, clusters, len(goldenSessionHashes))
	for name, c := range clusters {
		assert.Equal(t, goldenSessionHashes[name], SessionClusterHash(c), name)
		assert.Equal(t, goldenSessionHashes[name], SessionClusterHash(c.DeepCopy()), name+": a copy hashes the same")
	}
}

func TestSessionClusterHashFollowsTheSpec(t *testing.T) {
	base := testSessionClusters()["full"]
	for name, edit := range map[string]func(c *v1beta1.FlinkSessionCluster){
		"replicas":     func(c *v1beta1.FlinkSessionCluster) { c.Spec.TaskManagerConfig.Replicas = ptr(int32(4)) },
		"restartNonce": func(c *v1beta1.FlinkSessionCluster) { c.Spec.RestartNonce = "r2" },
		"image":        func(c *v1beta1.FlinkSessionCluster) { c.Spec.Image = "flink:1.18" },
		"flinkConfig":  func(c *v1beta1.FlinkSessionCluster) { c.Spec.FlinkConfig["state.backend.type"] = "hashmap" },
	} {
		c := base.DeepCopy()
		edit(c)
		assert.NotEqual(t, SessionClusterHash(base), SessionClusterHash(c), name)
	}
	c := base.DeepCopy()
	c.Labels["team"], c.Status.Reason = "other", "metadata and status are not hashed"
	assert.Equal(t, SessionClusterHash(base), SessionClusterHash(c))
}

func TestOwnerFromSessionCluster(t *testing.T) {
	clusters := testSessionClusters()
	for name, want := range map[string]struct{ taskManagers, parallelism int32 }{
		"minimal": {1, 16},                        // no replicas: one TaskManager of the default 16 slots
		"full":    {3, 12},                        // 3 × 4
		"zero":    {1, 16},                        // replicas 0 counts as 1
		"huge":    {math.MaxInt32, math.MaxInt32}, // the product is clamped
	} {
		o := OwnerFromSessionCluster(clusters[name])
		assert.Equal(t, want.taskManagers, o.TaskManagers, name)
		assert.Equal(t, want.parallelism, o.Parallelism, name)
		assert.Equal(t, "FlinkSessionCluster", o.Kind.Kind, name)
		assert.Equal(t, v1beta1.SchemeGroupVersion, o.Kind.GroupVersion(), name)
	}

	full := clusters["full"]
	o := OwnerFromSessionCluster(full)
	cluster, err := o.RenderCluster(SessionClusterHash(full), "")
	require.NoError(t, err)
	assert.Equal(t, int32(3), *cluster.TaskManager.Spec.Replicas)
	assert.Equal(t, int32(2), *cluster.JobManager.Spec.Replicas)
	assert.Equal(t, "shared-c580e465", cluster.Service.Name)
	assert.Nil(t, cluster.VersionService)
	for _, obj := range []metav1.Object{cluster.JobManager, cluster.TaskManager, cluster.Service} {
		ref := obj.GetOwnerReferences()
		require.Len(t, ref, 1)
		assert.Equal(t, metav1.OwnerReference{APIVersion: "flink.k8s.io/v1beta1", Kind: "FlinkSessionCluster", Name: "shared",
			UID: "uid-s2", Controller: ptr(true), BlockOwnerDeletion: ptr(true)}, ref[0])
		assert.True(t, o.IsOwnerOf(obj))
	}
	assert.Equal(t, int32(9081), o.UIPort())
	assert.Contains(t, cluster.TaskManager.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "MODE", Value: "session"})
}

// The application forms are the owner forms of OwnerFromApplication; the tests of the rest of the
// package pin what they render.
func TestOwnerFromApplication(t *testing.T) {
	app := testApp()
	o := OwnerFromApplication(app)
	assert.Equal(t, "FlinkApplication", o.Kind.Kind)
	assert.Equal(t, int32(2), o.TaskManagers) // parallelism 3 over 2 slots
	assert.Equal(t, app.Spec.Parallelism, o.Parallelism)
	app.Spec.Parallelism = 0
	assert.Equal(t, int32(1), OwnerFromApplication(app).TaskManagers, "a parallelism below 1 still gets a TaskManager")
	app.Spec.Parallelism = math.MaxInt32
	assert.Equal(t, int32(1<<30), OwnerFromApplication(app).TaskManagers, "no overflow near the int32 maximum")

	dressed := testApp()
	dressed.APIVersion, dressed.Kind = "flink.k8s.io/v1beta1", "FlinkSessionCluster"
	assert.Equal(t, "FlinkSessionCluster", OwnerFromApplication(dressed).Kind.Kind, "TypeMeta names the kind when it is set")
}

func TestConfigForms(t *testing.T) {
	for _, config := range []v1beta1.FlinkConfig{
		nil,
		{CheckpointRetentionKey: "DELETE_ON_CANCELLATION", SchedulerKey: "adaptive", "high-availability.type": "kubernetes",
			CheckpointIntervalKey: "1 min", RetainedCheckpointsKey: int64(3), "state.savepoints.dir": "s3://b/sp"},
		{CheckpointRetentionKey: " retain_on_cancellation ", "high-availability": "NONE", CheckpointIntervalKey: "bad"},
		{"bad": []interface{}{1}, "high-availability": "zookeeper"},
	} {
		app := testApp()
		app.Spec.FlinkConfig = config
		assert.Equal(t, RetainsCheckpointsOnCancel(app), ConfigRetainsCheckpointsOnCancel(config))
		assert.Equal(t, AdaptiveScheduler(app), ConfigSelectsAdaptiveScheduler(config))
		assert.Equal(t, HighAvailability(app), ConfigHasHighAvailability(config))
		d, ok := CheckpointSurvival(app)
		d2, ok2 := ConfigCheckpointSurvival(config)
		assert.Equal(t, d, d2)
		assert.Equal(t, ok, ok2)
	}
	assert.False(t, ConfigHasSavepointDirectory(nil))
	assert.True(t, ConfigHasSavepointDirectory(v1beta1.FlinkConfig{"execution.checkpointing.savepoint-dir": "s3://b/sp"}))
	assert.False(t, ConfigHasSavepointDirectory(v1beta1.FlinkConfig{"state.savepoints.dir": " "}))
	assert.True(t, ConfigHasSavepointDirectory(v1beta1.FlinkConfig{"x": []interface{}{}}), "rendering reports an unreadable value")
}

func TestNamesOfAnOwner(t *testing.T) {
	app := testApp()
	assert.Equal(t, JobManagerName(app, "h"), JobManagerNameOf("wordcount", "h"))
	assert.Equal(t, "wordcount-h-jm", JobManagerNameOf("wordcount", "h"))
	assert.Equal(t, "wordcount-h-tm", TaskManagerNameOf("wordcount", "h"))
	assert.Equal(t, "wordcount-h", VersionedServiceNameOf("wordcount", "h"))
	assert.Equal(t, "wordcount-blue", VersionServiceNameOf("wordcount", v1beta1.BlueFlinkApplication))
	assert.Equal(t, "wordcount", GenericServiceNameOf("wordcount"))
}

// A pass asks IsOwnerOf of every Deployment and Service of its application, a thousand times a
// second at 10,000 applications; when the owner escaped to the heap each time, its copies were a
// twelfth of the operator's allocations.
func TestIsOwnerOfAllocatesNothing(t *testing.T) {
	app := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", UID: "u-1"}}
	owner := OwnerFromApplication(app)
	controlled := &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{owner.ownerReference()}}
	other := &metav1.ObjectMeta{}
	require.True(t, owner.IsOwnerOf(controlled))
	require.False(t, owner.IsOwnerOf(other))
	allocs := testing.AllocsPerRun(100, func() {
		_ = owner.IsOwnerOf(controlled)
		_ = owner.IsOwnerOf(other)
	})
	assert.Zero(t, allocs, "allocations per two IsOwnerOf calls")
}
