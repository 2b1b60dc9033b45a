package flink

import (
	"strings"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// parseLines reads rendered configuration back, failing on a malformed or duplicate line.
func parseLines(t *testing.T, config string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(config, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		require.True(t, ok, "malformed line %q", line)
		_, dup := out[k]
		require.False(t, dup, "duplicate key %q", k)
		out[k] = v
	}
	return out
}

func TestRenderFlinkConfigExact(t *testing.T) {
	jm, tm, err := RenderFlinkConfig(testApp(), "0a1b2c3d")
	require.NoError(t, err)
	assert.Equal(t, `blob.server.port: 6125
execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION
execution.checkpointing.interval: 10s
jobmanager.memory.process.size: 2516582k
jobmanager.rpc.address: wordcount-0a1b2c3d
jobmanager.rpc.port: 6123
metrics.internal.query-service.port: 50101
parallelism.default: 4
query.server.port: 6124
rest.port: 8081
state.backend.type: rocksdb
taskmanager.memory.process.size: 838860k
taskmanager.network.memory.fraction: 0.15
taskmanager.numberOfTaskSlots: 2`, jm)
	assert.Equal(t, `blob.server.port: 6125
execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION
execution.checkpointing.interval: 10s
jobmanager.memory.process.size: 2516582k
jobmanager.rpc.address: wordcount-0a1b2c3d
jobmanager.rpc.port: 6123
metrics.internal.query-service.port: 50101
parallelism.default: 4
query.server.port: 6124
rest.port: 8081
state.backend.type: rocksdb
taskmanager.host: $HOST_IP
taskmanager.memory.process.size: 838860k
taskmanager.network.memory.fraction: 0.15
taskmanager.numberOfTaskSlots: 2`, tm)
}

func TestRenderFlinkConfigOperatorKeysWin(t *testing.T) {
	app := testApp()
	app.Spec.UIPort = ptr(int32(9081))
	app.Spec.TaskManagerConfig.TaskSlots = ptr(int32(4))
	for k, v := range map[string]interface{}{
		// Repeating what the operator sets is harmless, and Lyft manifests do it.
		"taskmanager.numberOfTaskSlots": int64(4),
		"rest.port":                     "9081",
		// The JobManager address is decided per component; a user value is ignored, as before.
		"jobmanager.rpc.address":          "somewhere-else",
		"jobmanager.memory.process.size":  "100g",
		"taskmanager.memory.process.size": "100g",
		"kubernetes.cluster-id":           "shared",
	} {
		app.Spec.FlinkConfig[k] = v
	}
	jm, tm, err := RenderFlinkConfig(app, "0a1b2c3d")
	require.NoError(t, err)
	for name, config := range map[string]string{"jobmanager": jm, "taskmanager": tm} {
		got := parseLines(t, config)
		assert.Equal(t, "4", got["taskmanager.numberOfTaskSlots"], name)
		assert.Equal(t, "6123", got["jobmanager.rpc.port"], name)
		assert.Equal(t, "9081", got["rest.port"], name)
		assert.Equal(t, "wordcount-0a1b2c3d", got["jobmanager.rpc.address"], name)
		assert.Equal(t, "2516582k", got["jobmanager.memory.process.size"], name)
		assert.Equal(t, "838860k", got["taskmanager.memory.process.size"], name)
		// Without high availability the cluster id is the user's business.
		assert.Equal(t, "shared", got["kubernetes.cluster-id"], name)
	}
	assert.Equal(t, "$HOST_IP", parseLines(t, tm)["taskmanager.host"])
}

// Keys that Flink would read as another key, values for the keys the operator owns, and a
// FLINK_PROPERTIES of the user's are refused, naming the field: each could take the cluster over.
func TestRenderFlinkConfigRefusesWhatWouldOverrideTheOperator(t *testing.T) {
	ha := func(app *v1beta1.FlinkApplication) { app.Spec.FlinkConfig["high-availability.type"] = "kubernetes" }
	for _, c := range []struct {
		name string
		edit func(app *v1beta1.FlinkApplication)
		want string
	}{
		{"trailing space", func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig["rest.port "] = "1" }, `"rest.port " contains whitespace`},
		{"colon", func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig["rest.port:x"] = "1" }, `contains ":"`},
		{"hash", func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig["rest.port#x"] = "1" }, `contains "#"`},
		{"empty key", func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig[""] = "1" }, "is empty"},
		{"another port", func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig["rest.port"] = int64(1) }, "set spec.uiPort instead"},
		{"slots", func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig["taskmanager.numberOfTaskSlots"] = 99 }, "set spec.taskManagerConfig.taskSlots"},
		{"TaskManager host", func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig["taskmanager.host"] = "elsewhere" }, "taskmanager.host"},
		{"HA cluster id", func(a *v1beta1.FlinkApplication) {
			ha(a)
			a.Spec.FlinkConfig["high-availability.cluster-id"] = "shared"
		}, "names this cluster"},
		{"kubernetes cluster id under HA", func(a *v1beta1.FlinkApplication) {
			ha(a)
			a.Spec.FlinkConfig["kubernetes.cluster-id"] = "shared"
		}, "names this cluster"},
		{"FLINK_PROPERTIES", func(a *v1beta1.FlinkApplication) {
			a.Spec.JobManagerConfig.EnvConfig.Env = []corev1.EnvVar{{Name: "FLINK_PROPERTIES", Value: "rest.port: 1"}}
		}, "jobManagerConfig.envConfig.env[0]: FLINK_PROPERTIES"},
	} {
		app := testApp()
		c.edit(app)
		_, _, err := RenderFlinkConfig(app, "0a1b2c3d")
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
		}
	}
	// Under HA each cluster's ids are its own.
	app := testApp()
	ha(app)
	jm, _, err := RenderFlinkConfig(app, "0a1b2c3d")
	require.NoError(t, err)
	got := parseLines(t, jm)
	assert.Equal(t, "wordcount-0a1b2c3d", got["kubernetes.cluster-id"])
	assert.Equal(t, "wordcount-0a1b2c3d", got["high-availability.cluster-id"])
}

func TestRenderFlinkConfigRejects(t *testing.T) {
	tests := map[string]struct {
		config v1beta1.FlinkConfig
		want   string
	}{
		"nested map":        {v1beta1.FlinkConfig{"metrics.reporters": map[string]interface{}{"prom": "x"}}, `"metrics.reporters"`},
		"list":              {v1beta1.FlinkConfig{"env.java.opts": []interface{}{"-Xss1m"}}, `"env.java.opts"`},
		"null":              {v1beta1.FlinkConfig{"a.b": nil}, `"a.b"`},
		"line break":        {v1beta1.FlinkConfig{"a.b": "x\nrest.port: 1"}, `"a.b" must be on one line`},
		"line break in key": {v1beta1.FlinkConfig{"a\nrest.port": "1"}, `must be on one line`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			app := testApp()
			app.Spec.FlinkConfig = tt.config
			_, _, err := RenderFlinkConfig(app, "h")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestRenderFlinkConfigMemory(t *testing.T) {
	limitsOnly := &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}
	cpuOnly := &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	tests := []struct {
		name    string
		version string
		jm, tm  v1beta1.JobManagerConfig // only the memory fields and resources are read from tm
		want    map[string]string        // key -> value, "" = key absent
		wantErr []string
	}{
		{name: "1.20 defaults", version: "1.20",
			want: map[string]string{"jobmanager.memory.process.size": "2516582k", "taskmanager.memory.process.size": "838860k",
				"jobmanager.heap.size": "", "taskmanager.heap.size": ""}},
		{name: "empty version is modern", version: "",
			want: map[string]string{"jobmanager.memory.process.size": "2516582k", "jobmanager.heap.size": ""}},
		{name: "unparsable version is modern", version: "latest",
			want: map[string]string{"taskmanager.memory.process.size": "838860k"}},
		{name: "1.11 system fraction", version: "1.11.3",
			tm:   v1beta1.JobManagerConfig{Resources: memoryResources("1", "2Gi"), SystemMemoryFraction: ptr(0.1)},
			want: map[string]string{"taskmanager.memory.process.size": "1887436k"}},
		{name: "limits when no request", version: "1.20", jm: v1beta1.JobManagerConfig{Resources: limitsOnly},
			want: map[string]string{"jobmanager.memory.process.size": "1677721k"}},
		{name: "no memory, no key", version: "1.20", jm: v1beta1.JobManagerConfig{Resources: cpuOnly},
			want: map[string]string{"jobmanager.memory.process.size": "", "taskmanager.memory.process.size": "838860k"}},
		{name: "1.8 heap defaults", version: "1.8",
			want: map[string]string{"jobmanager.heap.size": "1572864k", "taskmanager.heap.size": "524288k",
				"jobmanager.memory.process.size": "", "taskmanager.memory.process.size": ""}},
		{name: "1.10 off-heap fraction", version: "v1.10.1",
			tm:   v1beta1.JobManagerConfig{Resources: memoryResources("1", "1Gi"), OffHeapMemoryFraction: ptr(0.25)},
			want: map[string]string{"taskmanager.heap.size": "786432k"}},
		{name: "system fraction before 1.11", version: "1.8",
			tm:      v1beta1.JobManagerConfig{SystemMemoryFraction: ptr(0.1)},
			wantErr: []string{"spec.taskManagerConfig.systemMemoryFraction", `"1.8"`, "offHeapMemoryFraction"}},
		{name: "off-heap fraction from 1.11", version: "1.11",
			jm:      v1beta1.JobManagerConfig{OffHeapMemoryFraction: ptr(0.3)},
			wantErr: []string{"spec.jobManagerConfig.offHeapMemoryFraction", `"1.11"`, "systemMemoryFraction"}},
		{name: "fraction out of range", version: "1.20",
			jm:      v1beta1.JobManagerConfig{SystemMemoryFraction: ptr(1.0)},
			wantErr: []string{"spec.jobManagerConfig.systemMemoryFraction", "below 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := testApp()
			app.Spec.FlinkVersion = tt.version
			app.Spec.JobManagerConfig = tt.jm
			app.Spec.TaskManagerConfig.Resources = tt.tm.Resources
			app.Spec.TaskManagerConfig.SystemMemoryFraction = tt.tm.SystemMemoryFraction
			app.Spec.TaskManagerConfig.OffHeapMemoryFraction = tt.tm.OffHeapMemoryFraction
			jm, tm, err := RenderFlinkConfig(app, "h")
			if tt.wantErr != nil {
				require.Error(t, err)
				for _, s := range tt.wantErr {
					assert.Contains(t, err.Error(), s)
				}
				return
			}
			require.NoError(t, err)
			for _, config := range []string{jm, tm} {
				got := parseLines(t, config)
				for k, v := range tt.want {
					if v == "" {
						assert.NotContains(t, got, k)
					} else {
						assert.Equal(t, v, got[k], k)
					}
				}
			}
		})
	}
}

func TestRenderFlinkConfigHighAvailability(t *testing.T) {
	tests := []struct {
		name   string
		config v1beta1.FlinkConfig
		ha     bool
	}{
		{"off", v1beta1.FlinkConfig{}, false},
		{"none", v1beta1.FlinkConfig{"high-availability": "NONE"}, false},
		{"kubernetes", v1beta1.FlinkConfig{"high-availability": "kubernetes"}, true},
		{"type key (Flink 1.17+)", v1beta1.FlinkConfig{"high-availability.type": "kubernetes"}, true},
		{"factory class", v1beta1.FlinkConfig{"high-availability": "org.apache.flink.kubernetes.highavailability.KubernetesHaServicesFactory"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := testApp()
			app.Spec.FlinkConfig = tt.config
			app.Spec.FlinkConfig["jobmanager.rpc.address"] = "user-value"
			jmText, tmText, err := RenderFlinkConfig(app, "0a1b2c3d")
			require.NoError(t, err)
			jm, tm := parseLines(t, jmText), parseLines(t, tmText)
			assert.Equal(t, "$HOST_IP", tm["taskmanager.host"])
			if !tt.ha {
				assert.Equal(t, "wordcount-0a1b2c3d", jm["jobmanager.rpc.address"])
				assert.Equal(t, "wordcount-0a1b2c3d", tm["jobmanager.rpc.address"])
				assert.NotContains(t, jm, "kubernetes.cluster-id")
				return
			}
			assert.Equal(t, "$HOST_IP", jm["jobmanager.rpc.address"])
			assert.NotContains(t, tm, "jobmanager.rpc.address", "TaskManagers find the leader through HA")
			assert.Equal(t, "wordcount-0a1b2c3d", jm["kubernetes.cluster-id"])
			assert.Equal(t, "wordcount-0a1b2c3d", tm["kubernetes.cluster-id"])
		})
	}
}

func TestParseFlinkVersion(t *testing.T) {
	tests := []struct {
		in           string
		major, minor int
		ok           bool
	}{
		{"1.20", 1, 20, true},
		{"1.11.3", 1, 11, true},
		{"v1.8", 1, 8, true},
		{" 1.9 ", 1, 9, true},
		{"2.0-SNAPSHOT", 2, 0, true},
		{"1.19-SNAPSHOT", 1, 19, true},
		{"2", 2, 0, true},
		{"", 0, 0, false},
		{"latest", 0, 0, false},
		{"1.x", 0, 0, false},
		{"1x.2", 0, 0, false},
		{"1.2x", 0, 0, false},
		{".11", 0, 0, false},
	}
	for _, tt := range tests {
		major, minor, ok := ParseFlinkVersion(tt.in)
		assert.Equal(t, []interface{}{tt.major, tt.minor, tt.ok}, []interface{}{major, minor, ok}, "%q", tt.in)
	}
}

func TestCheckpointRetentionDefaultsToRetainOnCancellation(t *testing.T) {
	app := testApp()
	jm, _, err := RenderFlinkConfig(app, "0a1b2c3d")
	require.NoError(t, err)
	assert.Contains(t, jm, CheckpointRetentionKey+": "+RetainOnCancellation)
	assert.True(t, RetainsCheckpointsOnCancel(app))

	app.Spec.FlinkConfig[CheckpointRetentionKey] = "DELETE_ON_CANCELLATION"
	jm, _, err = RenderFlinkConfig(app, "0a1b2c3d")
	require.NoError(t, err)
	assert.Contains(t, jm, CheckpointRetentionKey+": DELETE_ON_CANCELLATION", "the user's choice is kept")
	assert.False(t, RetainsCheckpointsOnCancel(app))
}

// Flink's Kubernetes HA writes its ConfigMaps to kubernetes.namespace, which Flink defaults to
// "default" (seen on real Flink, integ/realflink): left to that, every namespace's clusters would
// keep their HA data side by side in one namespace, where the operator's clean-up never looks and
// where two namespaces' clusters of one name share an identity. The operator renders the owner's own
// namespace and refuses another.
func TestUnderHighAvailabilityFlinkKeepsItsHADataInTheOwnersNamespace(t *testing.T) {
	app := testApp()
	app.Namespace = "team-a"
	app.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
	jm, tm, err := RenderFlinkConfig(app, "0a1b2c3d")
	require.NoError(t, err)
	assert.Equal(t, "team-a", parseLines(t, jm)["kubernetes.namespace"])
	assert.Equal(t, "team-a", parseLines(t, tm)["kubernetes.namespace"])

	app.Spec.FlinkConfig["kubernetes.namespace"] = "team-a"
	_, _, err = RenderFlinkConfig(app, "0a1b2c3d")
	assert.NoError(t, err, "repeating the owner's namespace is harmless")

	app.Spec.FlinkConfig["kubernetes.namespace"] = "team-b"
	_, _, err = RenderFlinkConfig(app, "0a1b2c3d")
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "kubernetes.namespace")
	}
}
