package convert

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// decode reads the n-th document of a converted stream into obj.
func decode(t *testing.T, out []byte, n int, obj any) {
	t.Helper()
	docs := strings.Split(string(out), "---\n")[1:]
	require.Greater(t, len(docs), n, "documents: %s", out)
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[n]), obj), docs[n])
}

func warnings(r Report) []string {
	var out []string
	for _, w := range r.Warnings {
		out = append(out, w.String())
	}
	return out
}

func TestASessionJobConvertsWithEveryFieldCarriedOrNamed(t *testing.T) {
	in := `
apiVersion: flink.apache.org/v1beta1
kind: FlinkSessionJob
metadata:
  name: orders
  namespace: streaming
  labels: {team: payments}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
  finalizers: [flinksessionjobs.flink.apache.org/finalizer]
  uid: 1234
spec:
  deploymentName: shared-session
  restartNonce: 3
  flinkConfiguration:
    execution:
      checkpointing:
        interval: 10s
    pipeline.classpaths: [file:///a.jar, file:///b.jar]
    taskmanager.numberOfTaskSlots: 2
    kubernetes.operator.periodic.savepoint.interval: 6h
    kubernetes.operator.savepoint.history.max.count: 5
    kubernetes.operator.job.restart.failed: true
  job:
    jarURI: https://repo.example.com/orders-1.4.jar
    entryClass: com.example.Orders
    args: [--window, 5m]
    parallelism: 4
    upgradeMode: last-state
    state: suspended
    savepointTriggerNonce: 17
    savepointRedeployNonce: 2
    initialSavepointPath: s3://state/savepoints/savepoint-1
    allowNonRestoredState: true
    autoscalerResetNonce: 1
status:
  jobStatus: {state: RUNNING}
`
	out, report, err := Convert([]byte(in))
	require.NoError(t, err)
	assert.Equal(t, 1, report.Converted)
	var j v1beta1.FlinkSessionJob
	decode(t, out, 0, &j)
	assert.Equal(t, "FlinkSessionJob", j.Kind)
	assert.Equal(t, "flink.k8s.io/v1beta1", j.APIVersion)
	assert.Equal(t, "orders", j.Name)
	assert.Equal(t, "streaming", j.Namespace)
	assert.Equal(t, map[string]string{"team": "payments"}, j.Labels)
	assert.Empty(t, j.Annotations, "kubectl's record of the Apache object is not carried")
	assert.Equal(t, "shared-session", j.Spec.ClusterName)
	assert.Equal(t, v1beta1.FlinkConfig{"execution.checkpointing.interval": "10s",
		"pipeline.classpaths": "file:///a.jar;file:///b.jar", "taskmanager.numberOfTaskSlots": "2"}, j.Spec.FlinkConfig,
		"nested keys flattened as Flink does, lists joined with ;, the Apache operator's own settings out")
	job := j.Spec.Job
	assert.Equal(t, "https://repo.example.com/orders-1.4.jar", job.JarURI)
	assert.Equal(t, "com.example.Orders", job.EntryClass)
	assert.Equal(t, []string{"--window", "5m"}, job.Args)
	require.NotNil(t, job.Parallelism)
	assert.EqualValues(t, 4, *job.Parallelism)
	assert.Equal(t, v1beta1.UpgradeModeLastState, job.UpgradeMode)
	assert.Equal(t, v1beta1.JobStateSuspended, job.State)
	assert.Equal(t, v1beta1.Nonce("17"), job.SavepointTriggerNonce, "an integer nonce is the nonce of its decimal text")
	assert.Equal(t, v1beta1.Nonce("2"), job.SavepointRedeployNonce)
	assert.Equal(t, v1beta1.Nonce("3"), job.RestartNonce)
	assert.Equal(t, "s3://state/savepoints/savepoint-1", job.InitialSavepointPath)
	assert.True(t, job.AllowNonRestoredState)
	require.NotNil(t, job.PeriodicSavepoint)
	assert.EqualValues(t, 6*3600, job.PeriodicSavepoint.IntervalSeconds)
	require.NotNil(t, job.SavepointRetention)
	assert.EqualValues(t, 5, job.SavepointRetention.Keep)

	w := strings.Join(warnings(report), "\n")
	assert.Contains(t, w, "FlinkSessionJob/orders: spec.job.autoscalerResetNonce:")
	assert.Contains(t, w, "FlinkSessionJob/orders: spec.flinkConfiguration.kubernetes.operator.job.restart.failed:")
	assert.Contains(t, w, "FlinkSessionJob/orders: metadata.finalizers:")
	assert.Len(t, report.Warnings, 3, w)
}

func TestAJobWithoutAnUpgradeModeRunsStatelessAsItDidUnderTheApacheOperator(t *testing.T) {
	out, _, err := Convert([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkSessionJob
metadata: {name: basic}
spec:
  deploymentName: session
  job: {jarURI: "https://example.com/job.jar"}
`))
	require.NoError(t, err)
	var j v1beta1.FlinkSessionJob
	decode(t, out, 0, &j)
	assert.Equal(t, v1beta1.UpgradeModeStateless, j.Spec.Job.UpgradeMode)
	assert.Nil(t, j.Spec.Job.Parallelism)
}

func TestAnUnknownFieldIsNamedNotDropped(t *testing.T) {
	_, report, err := Convert([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkSessionJob
metadata: {name: basic}
spec:
  deploymentName: session
  futureField: 1
  job: {jarURI: "https://example.com/job.jar", somethingNew: {a: 1}}
`))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		"FlinkSessionJob/basic: spec.futureField: no flinkfsm field takes it; left out",
		"FlinkSessionJob/basic: spec.job.somethingNew: no flinkfsm field takes it; left out",
	}, warnings(report))
}

func TestStateSnapshotsConvertWithTheApacheOperatorsDefaults(t *testing.T) {
	out, report, err := Convert([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: taken}
spec:
  backoffLimit: -1
  jobReference: {kind: FlinkDeployment, name: orders}
  savepoint: {formatType: NATIVE}
---
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: existing}
spec:
  savepoint: {path: "s3://state/savepoint-7", alreadyExists: true, disposeOnDelete: false}
  jobReference: {kind: FlinkSessionJob, name: sj}
---
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: cp}
spec:
  checkpoint: {}
  jobReference: {kind: FlinkDeployment, name: orders}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other}
data: {a: b}
`))
	require.NoError(t, err)
	assert.Equal(t, 3, report.Converted)
	assert.Equal(t, 1, report.Passed)
	var taken, existing, cp v1beta1.FlinkSnapshot
	decode(t, out, 0, &taken)
	decode(t, out, 1, &existing)
	decode(t, out, 2, &cp)
	assert.Equal(t, v1beta1.SnapshotOwner{Kind: "FlinkApplication", Name: "orders"}, taken.Spec.Owner)
	assert.Equal(t, v1beta1.SnapshotSavepoint, taken.Spec.Type)
	assert.Equal(t, v1beta1.SavepointFormatNative, taken.Spec.FormatType)
	assert.True(t, taken.Spec.DisposeOnDelete, "the Apache operator disposes of a savepoint with its object by default")
	require.NotNil(t, taken.Spec.BackoffLimit)
	assert.EqualValues(t, 100, *taken.Spec.BackoffLimit)
	assert.Equal(t, "s3://state/savepoint-7", existing.Spec.Path)
	assert.False(t, existing.Spec.DisposeOnDelete)
	assert.Equal(t, v1beta1.SnapshotOwner{Kind: "FlinkSessionJob", Name: "sj"}, existing.Spec.Owner)
	assert.Equal(t, v1beta1.SnapshotCheckpoint, cp.Spec.Type)
	assert.Contains(t, string(out), "kind: ConfigMap", "other objects pass through")
	assert.Equal(t, []string{"FlinkStateSnapshot/taken: spec.backoffLimit: -1 (for ever) is written 100, the most flinkfsm tries"}, warnings(report))
}

func TestFlinkDurationsReadAsFlinkWritesThem(t *testing.T) {
	for in, want := range map[string]string{"6h": "6h0m0s", "30 min": "30m0s", "90s": "1m30s", "60000": "1m0s", "1 d": "24h0m0s"} {
		d, err := parseFlinkDuration(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, d.String(), in)
	}
	_, err := parseFlinkDuration("soon")
	assert.Error(t, err)
}

func TestAConvertedObjectCarriesNoStatus(t *testing.T) {
	out, _, err := Convert([]byte("apiVersion: flink.apache.org/v1beta1\nkind: FlinkSessionJob\nmetadata: {name: basic}\n" +
		"spec: {deploymentName: session, job: {jarURI: \"https://example.com/job.jar\"}}\nstatus: {jobStatus: {state: RUNNING}}\n"))
	require.NoError(t, err)
	assert.NotContains(t, string(out), "status")
}

func TestASessionModeFlinkDeploymentIsASessionCluster(t *testing.T) {
	out, report, err := Convert([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: shared, namespace: streaming}
spec:
  image: flink:1.20
  flinkVersion: v1_20
  imagePullPolicy: IfNotPresent
  serviceAccount: flink
  mode: native
  restartNonce: 4
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: 4
    rest.port: 8082
    kubernetes.cluster-id: other
    state.checkpoints.dir: s3://state/cp
  logConfiguration:
    log4j-console.properties: "rootLogger.level = INFO"
  podTemplate:
    apiVersion: v1
    kind: Pod
    spec:
      containers:
        - name: flink-main-container
          volumeMounts: [{name: logs, mountPath: /opt/flink/log}]
      volumes: [{name: logs, emptyDir: {}}]
  jobManager:
    replicas: 1
    resource: {cpu: 0.5, memory: "1024m"}
  taskManager:
    replicas: 3
    resources:
      requests: {cpu: "2", memory: "2048m"}
      limits: {memory: "4g"}
    podTemplate:
      spec: {nodeSelector: {pool: flink}}
  ingress: {template: "flink.example.com/{{namespace}}/{{name}}"}
`))
	require.NoError(t, err)
	var c v1beta1.FlinkSessionCluster
	decode(t, out, 0, &c)
	assert.Equal(t, "FlinkSessionCluster", c.Kind)
	s := c.Spec
	assert.Equal(t, "flink:1.20", s.Image)
	assert.Equal(t, "1.20", s.FlinkVersion)
	assert.Equal(t, "flink", s.ServiceAccountName)
	assert.Equal(t, v1beta1.Nonce("4"), s.RestartNonce)
	assert.Equal(t, v1beta1.FlinkConfig{"state.checkpoints.dir": "s3://state/cp"}, s.FlinkConfig)
	require.NotNil(t, s.TaskManagerConfig.TaskSlots)
	assert.EqualValues(t, 4, *s.TaskManagerConfig.TaskSlots, "the slots flinkfsm renders itself come from taskSlots")
	require.NotNil(t, s.UIPort)
	assert.EqualValues(t, 8082, *s.UIPort)
	require.NotNil(t, s.TaskManagerConfig.Replicas)
	assert.EqualValues(t, 3, *s.TaskManagerConfig.Replicas)
	require.NotNil(t, s.PodTemplate)
	assert.Equal(t, "flink-main-container", s.PodTemplate.Spec.Containers[0].Name)
	require.NotNil(t, s.JobManagerConfig.Resources)
	assert.Equal(t, "1Gi", s.JobManagerConfig.Resources.Requests.Memory().String(), "1024m is Flink's MiB")
	assert.Equal(t, "1Gi", s.JobManagerConfig.Resources.Limits.Memory().String())
	assert.Equal(t, "500m", s.JobManagerConfig.Resources.Requests.Cpu().String())
	tm := s.TaskManagerConfig.Resources
	require.NotNil(t, tm)
	assert.Equal(t, "2Gi", tm.Requests.Memory().String())
	assert.Equal(t, "4Gi", tm.Limits.Memory().String())
	assert.Equal(t, map[string]string{"pool": "flink"}, s.TaskManagerConfig.PodTemplate.Spec.NodeSelector)
	assert.Equal(t, map[string]string{"log4j-console.properties": "rootLogger.level = INFO"}, s.LogConfiguration)
	w := strings.Join(warnings(report), "\n")
	assert.Contains(t, w, "spec.mode:")
	assert.Contains(t, w, "spec.flinkConfiguration.kubernetes.cluster-id:")
	assert.Contains(t, w, "spec.ingress:")
	assert.Len(t, report.Warnings, 3, w)
}

func TestFlinkMemorySizesReadAsTheApacheOperatorReadsThem(t *testing.T) {
	for in, want := range map[string]string{"2048m": "2Gi", "1g": "1Gi", "512 mb": "512Mi", "2Gi": "2Gi", "1073741824": "1Gi"} {
		q, err := flinkMemory(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, q.String(), in)
	}
}

func TestAJarFlinkfsmCannotFetchIsNamed(t *testing.T) {
	_, report, err := Convert([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkSessionJob
metadata: {name: s3job}
spec:
  deploymentName: session
  job: {jarURI: "s3://bucket/job.jar"}
`))
	require.NoError(t, err)
	require.Len(t, report.Warnings, 1)
	assert.Equal(t, "spec.job.jarURI", report.Warnings[0].Field)
	assert.Contains(t, report.Warnings[0].Reason, "kubectl apply refuses it")
}

func TestASnapshotOfNoJobIsNotConvertedAndSaysWhereItsPathGoes(t *testing.T) {
	out, report, err := Convert([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkStateSnapshot
metadata: {name: existing}
spec:
  savepoint: {path: "s3://state/savepoint-7", alreadyExists: true}
`))
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(string(out)))
	require.Len(t, report.Warnings, 1)
	assert.Contains(t, report.Warnings[0].Reason, "savepointPath")
}
