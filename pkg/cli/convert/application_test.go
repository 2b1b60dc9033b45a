package convert

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func TestAnApplicationModeFlinkDeploymentIsAFlinkApplication(t *testing.T) {
	out, report, err := Convert([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: state-machine
  namespace: streams
  labels: {team: fraud}
spec:
  image: flink:1.20
  flinkVersion: v1_20
  serviceAccount: flink
  restartNonce: 2
  ingress:
    template: "{{name}}.{{namespace}}.flink.example.com"
    className: nginx
    annotations: {nginx.ingress.kubernetes.io/proxy-body-size: "0"}
    tls:
      - hosts: [state-machine.streams.flink.example.com]
        secretName: ui-cert
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "2"
    high-availability:
      type: kubernetes
      storageDir: s3://bucket/ha
    state.checkpoints.dir: s3://bucket/checkpoints
    kubernetes.operator.periodic.savepoint.interval: 6h
    kubernetes.operator.savepoint.history.max.count: 5
  jobManager:
    replicas: 2
    resource: {memory: 2048m, cpu: 1}
  taskManager:
    resource: {memory: 4g, cpu: 2}
  job:
    jarURI: local:///opt/flink/examples/streaming/StateMachineExample.jar
    entryClass: org.apache.flink.streaming.examples.statemachine.StateMachineExample
    args: ["--error-rate", "0.1"]
    parallelism: 4
    upgradeMode: last-state
    state: suspended
    savepointTriggerNonce: 7
    checkpointTriggerNonce: 8
    savepointRedeployNonce: 9
    initialSavepointPath: s3://bucket/savepoints/savepoint-1
    allowNonRestoredState: true
    autoscalerResetNonce: 1
`))
	require.NoError(t, err)
	assert.Equal(t, 1, report.Converted)
	var app v1beta1.FlinkApplication
	decode(t, out, 0, &app)
	assert.Equal(t, v1beta1.FlinkApplicationKind, app.Kind)
	assert.Equal(t, "state-machine", app.Name)
	assert.Equal(t, "streams", app.Namespace)
	assert.Equal(t, map[string]string{"team": "fraud"}, app.Labels)
	s := app.Spec
	assert.Equal(t, "flink:1.20", s.Image)
	assert.Equal(t, "1.20", s.FlinkVersion)
	assert.Equal(t, "flink", s.ServiceAccountName)
	assert.Equal(t, v1beta1.Nonce("2"), s.RestartNonce)
	assert.Equal(t, "local:///opt/flink/examples/streaming/StateMachineExample.jar", s.JarURI)
	assert.Empty(t, s.JarName)
	assert.Equal(t, "org.apache.flink.streaming.examples.statemachine.StateMachineExample", s.EntryClass)
	assert.Equal(t, []string{"--error-rate", "0.1"}, s.ProgramArgsList)
	assert.Equal(t, int32(4), s.Parallelism)
	assert.Equal(t, v1beta1.UpgradeModeLastState, s.UpgradeMode)
	assert.Equal(t, v1beta1.JobStateSuspended, s.State)
	assert.Equal(t, v1beta1.Nonce("7"), s.SavepointTriggerNonce)
	assert.Equal(t, v1beta1.Nonce("8"), s.CheckpointTriggerNonce)
	assert.Equal(t, v1beta1.Nonce("9"), s.SavepointRedeployNonce)
	assert.Equal(t, "s3://bucket/savepoints/savepoint-1", s.SavepointPath)
	assert.True(t, s.AllowNonRestoredState)
	assert.Equal(t, v1beta1.DeploymentModeSingle, s.DeploymentMode, "one cluster at a time, as the Apache operator upgrades")
	require.NotNil(t, s.TaskManagerConfig.TaskSlots)
	assert.Equal(t, int32(2), *s.TaskManagerConfig.TaskSlots)
	require.NotNil(t, s.JobManagerConfig.Replicas)
	assert.Equal(t, int32(2), *s.JobManagerConfig.Replicas)
	assert.Equal(t, "kubernetes", s.FlinkConfig["high-availability.type"])
	require.NotNil(t, s.PeriodicSavepoint)
	assert.Equal(t, int32(6*3600), s.PeriodicSavepoint.IntervalSeconds)
	require.NotNil(t, s.SavepointRetention)
	require.NotNil(t, s.Ingress)
	assert.Equal(t, "{{name}}.{{namespace}}.flink.example.com", s.Ingress.Template)
	assert.Equal(t, "nginx", *s.Ingress.ClassName)
	assert.Equal(t, map[string]string{"nginx.ingress.kubernetes.io/proxy-body-size": "0"}, s.Ingress.Annotations)
	assert.Equal(t, []v1beta1.IngressTLS{{Hosts: []string{"state-machine.streams.flink.example.com"}, SecretName: "ui-cert"}}, s.Ingress.TLS)

	w := strings.Join(warnings(report), "\n")
	assert.Contains(t, w, "spec.job.autoscalerResetNonce:")
	assert.Len(t, report.Warnings, 1, w)
}

func TestAnApplicationWithoutParallelismIsSizedAsTheApacheOperatorSizedIt(t *testing.T) {
	for name, c := range map[string]struct {
		extra string
		want  int32
	}{
		"from taskManager.replicas": {"  taskManager: {replicas: 3}\n  flinkConfiguration: {taskmanager.numberOfTaskSlots: 2}\n", 6},
		"from parallelism.default":  {"  flinkConfiguration: {parallelism.default: 5}\n", 5},
		"Flink's default of 1":      {"", 1},
	} {
		out, report, err := Convert([]byte("apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata: {name: a}\nspec:\n  image: flink:1.20\n" +
			c.extra + "  job: {jarURI: local:///opt/flink/usrlib/job.jar}\n"))
		require.NoError(t, err, name)
		var app v1beta1.FlinkApplication
		decode(t, out, 0, &app)
		assert.Equal(t, c.want, app.Spec.Parallelism, name)
		assert.Equal(t, v1beta1.UpgradeModeStateless, app.Spec.UpgradeMode, "the Apache operator's default, as the job ran")
		assert.Contains(t, strings.Join(warnings(report), "\n"), "spec.job.parallelism:", name)
	}
}

func TestAnIngressWithARewritePathIsLeftOutNamed(t *testing.T) {
	out, report, err := Convert([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: a}
spec:
  image: flink:1.20
  ingress:
    template: "/{{namespace}}/{{name}}(/|$)(.*)"
    className: nginx
    annotations: {nginx.ingress.kubernetes.io/rewrite-target: "/$2"}
  job: {jarURI: local:///opt/flink/usrlib/job.jar, parallelism: 2}
`))
	require.NoError(t, err)
	var app v1beta1.FlinkApplication
	decode(t, out, 0, &app)
	assert.Nil(t, app.Spec.Ingress)
	w := strings.Join(warnings(report), "\n")
	for _, f := range []string{"spec.ingress.template:", "spec.ingress.className:", "spec.ingress.annotations:"} {
		assert.Contains(t, w, f)
	}
}

func TestAnApplicationWhoseJarIsNotInItsImageIsRefusedNamingTheField(t *testing.T) {
	for _, uri := range []string{"https://repo/job.jar", "s3://bucket/job.jar", "local://job.jar", "local:///opt/../job.jar", ""} {
		_, _, err := Convert([]byte("apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata: {name: a}\nspec:\n  job: {jarURI: \"" + uri + "\"}\n"))
		require.ErrorContains(t, err, "spec.job.jarURI", uri)
	}
}
