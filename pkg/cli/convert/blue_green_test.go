package convert

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func TestAFlinkBlueGreenDeploymentIsABlueGreenApplicationThatPromotesItself(t *testing.T) {
	out, report, err := Convert([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkBlueGreenDeployment
metadata: {name: bg, labels: {team: a}}
spec:
  configuration:
    kubernetes.operator.bluegreen.abort.grace-period: 5 min
    kubernetes.operator.bluegreen.deployment-deletion.delay: 30s
    kubernetes.operator.bluegreen.reconciliation.reschedule-interval: 15s
  ingress:
    template: "{{name}}.{{namespace}}.example.com"
    className: nginx
  template:
    metadata: {labels: {team: b, tier: streaming}, annotations: {owner: data}}
    spec:
      image: flink:1.20
      flinkVersion: v1_20
      flinkConfiguration: {taskmanager.numberOfTaskSlots: "1", state.savepoints.dir: "s3://b/sp", execution.checkpointing.interval: 10s}
      job:
        jarURI: local:///opt/flink/examples/streaming/StateMachineExample.jar
        parallelism: 2
        upgradeMode: last-state
`))
	require.NoError(t, err)
	var app v1beta1.FlinkApplication
	decode(t, out, 0, &app)
	assert.Equal(t, "bg", app.Name)
	assert.Equal(t, map[string]string{"team": "a", "tier": "streaming"}, app.Labels, "the template's labels, the object's own winning")
	assert.Equal(t, map[string]string{"owner": "data"}, app.Annotations)
	s := app.Spec
	assert.Equal(t, v1beta1.DeploymentModeBlueGreen, s.DeploymentMode)
	assert.Equal(t, v1beta1.UpgradeModeLastState, s.UpgradeMode)
	assert.Equal(t, int32(2), s.Parallelism)
	require.NotNil(t, s.BlueGreen)
	assert.Equal(t, v1beta1.PromotionAuto, s.BlueGreen.Promotion, "the Apache operator promotes a stable version by itself")
	assert.Equal(t, v1beta1.TeardownModeSavepoint, s.BlueGreen.TeardownMode)
	assert.Equal(t, int32(300), *s.BlueGreen.AbortAfterSeconds)
	assert.Equal(t, int32(30), *s.BlueGreen.TeardownDelaySeconds)
	require.NotNil(t, s.Ingress)
	assert.Equal(t, "{{name}}.{{namespace}}.example.com", s.Ingress.Template)
	w := strings.Join(warnings(report), "\n")
	assert.Contains(t, w, "reconciliation.reschedule-interval")
	assert.Len(t, report.Warnings, 1, w)
}

func TestABlueGreenDeploymentWithoutSettingsAbortsAfterTheApacheDefault(t *testing.T) {
	out, _, err := Convert([]byte(`
apiVersion: flink.apache.org/v1beta1
kind: FlinkBlueGreenDeployment
metadata: {name: bg}
spec:
  template:
    spec:
      image: flink:1.20
      job: {jarURI: local:///opt/flink/usrlib/job.jar, parallelism: 1}
`))
	require.NoError(t, err)
	var app v1beta1.FlinkApplication
	decode(t, out, 0, &app)
	assert.Equal(t, int32(600), *app.Spec.BlueGreen.AbortAfterSeconds)
	assert.Nil(t, app.Spec.BlueGreen.TeardownDelaySeconds)
	// A job that neither checkpoints nor has a savepoint directory, as the Apache operator runs it:
	// promoted once it runs stable, the other version cancelled.
	assert.Equal(t, int32(0), *app.Spec.BlueGreen.MinCheckpoints)
	assert.Equal(t, v1beta1.TeardownModeForceCancel, app.Spec.BlueGreen.TeardownMode)
}

func TestABlueGreenDeploymentOfNoJobIsRefused(t *testing.T) {
	_, _, err := Convert([]byte("apiVersion: flink.apache.org/v1beta1\nkind: FlinkBlueGreenDeployment\nmetadata: {name: bg}\nspec:\n  template:\n    spec: {image: flink:1.20}\n"))
	require.ErrorContains(t, err, "no job")
	_, _, err = Convert([]byte("apiVersion: flink.apache.org/v1beta1\nkind: FlinkBlueGreenDeployment\nmetadata: {name: bg}\nspec: {configuration: {}}\n"))
	require.ErrorContains(t, err, "spec.template")
}
