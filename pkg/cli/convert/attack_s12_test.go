package convert

// Attack review s12 of the Apache migration (nonces, jarURI, convert of application mode and
// blue/green, LastState blue/green savepoints): each test here failed on e8cb0a0.

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// s12Application converts one manifest and returns its FlinkApplication and the report's warnings.
func s12Application(t *testing.T, in []byte) (*v1beta1.FlinkApplication, []Warning) {
	t.Helper()
	out, report, err := Convert(in)
	require.NoError(t, err)
	for _, doc := range strings.Split(string(out), "---\n") {
		if !strings.Contains(doc, "kind: FlinkApplication") {
			continue
		}
		var app v1beta1.FlinkApplication
		require.NoError(t, yaml.Unmarshal([]byte(doc), &app))
		return &app, report.Warnings
	}
	t.Fatal("no FlinkApplication written")
	return nil, nil
}

func s12Warned(warnings []Warning, words ...string) bool {
	for _, w := range warnings {
		s := w.Field + " " + w.Reason
		all := true
		for _, word := range words {
			all = all && strings.Contains(s, word)
		}
		if all {
			return true
		}
	}
	return false
}

// The Apache operator's own stateless blue/green example (e2e-tests/data/bluegreen-stateless.yaml)
// has no checkpointing and no savepoint directory. The Apache operator promotes its new deployment
// once it is ready and deletes the old one without a savepoint (isSavepointRequired is false for
// STATELESS). The converter writes promotion Auto behind flinkfsm's default gate (minCheckpoints 1,
// which a job without checkpointing never passes) and teardownMode Savepoint (which a cluster
// without a savepoint directory cannot take), and warns of neither. What the user loses: every
// update of the converted application is aborted after 600 s, and the abort's teardown then fails,
// so both versions' jobs keep running side by side for ever (the world test in
// pkg/controller/flinkapplication/attack_s12_test.go plays it).
func TestS12ConvertedStatelessBlueGreenCanNeverPromoteOrTearDownAndIsNotWarned(t *testing.T) {
	in, err := os.ReadFile("testdata/apache/e2e-tests_data_bluegreen-stateless.yaml")
	require.NoError(t, err)
	app, warnings := s12Application(t, in)
	bg := app.Spec.BlueGreen
	require.NotNil(t, bg)
	conf, _ := app.Spec.FlinkConfig.Strings()
	_, checkpoints := conf["execution.checkpointing.interval"]
	gatePassable := checkpoints || (bg.MinCheckpoints != nil && *bg.MinCheckpoints == 0) || s12Warned(warnings, "minCheckpoints")
	_, spDir := conf["state.savepoints.dir"]
	_, spDir2 := conf["execution.checkpointing.savepoint-dir"]
	teardownPossible := bg.TeardownMode == v1beta1.TeardownModeForceCancel || spDir || spDir2 || s12Warned(warnings, "teardownMode")
	if !gatePassable {
		t.Errorf("promotion %s with minCheckpoints %v for a job that never checkpoints (flinkConfig %v), and no warning: every update is aborted",
			bg.Promotion, bg.MinCheckpoints, conf)
	}
	if !teardownPossible {
		t.Errorf("teardownMode %s without a savepoint directory, and no warning: every teardown fails and both versions keep running", bg.TeardownMode)
	}
}

// The blue/green durations are clamped to flinkfsm's bounds without a word: an abort grace period of
// 30 days becomes 7 days, a deletion delay of 30 days becomes 7 days. The converter's rule is that
// every field is carried across or named; these are carried as other values, silently. What the user
// loses: a new version the Apache operator would have waited for is aborted three weeks early, and
// the fast way back it kept for 30 days is gone after 7.
func TestS12BlueGreenDurationsAreClampedWithoutAWarning(t *testing.T) {
	app, warnings := s12Application(t, []byte(`apiVersion: flink.apache.org/v1beta1
kind: FlinkBlueGreenDeployment
metadata:
  name: bg
spec:
  configuration:
    kubernetes.operator.bluegreen.abort.grace-period: "30 d"
    kubernetes.operator.bluegreen.deployment-deletion.delay: "30 d"
  template:
    spec:
      image: flink:1.20
      flinkVersion: v1_20
      flinkConfiguration:
        state.savepoints.dir: s3://b/sp
      job:
        jarURI: local:///opt/flink/usrlib/job.jar
        parallelism: 1
        upgradeMode: savepoint
`))
	bg := app.Spec.BlueGreen
	require.NotNil(t, bg)
	const thirtyDays = 30 * 24 * 3600
	if got := *bg.AbortAfterSeconds; got != thirtyDays && !s12Warned(warnings, "abort.grace-period") {
		t.Errorf("abort.grace-period 30 d written abortAfterSeconds %d, without a warning", got)
	}
	if got := bg.TeardownDelaySeconds; (got == nil || *got != thirtyDays) && !s12Warned(warnings, "deployment-deletion.delay") {
		t.Errorf("deployment-deletion.delay 30 d written teardownDelaySeconds %s, without a warning", s12Seconds(got))
	}
}

func s12Seconds(s *int32) string {
	if s == nil {
		return "unset"
	}
	return strconv.Itoa(int(*s))
}
