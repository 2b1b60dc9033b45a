package crdtest

// Attack review s12 of the Apache migration (nonces, jarURI, convert of application mode and
// blue/green, LastState blue/green savepoints): each test here failed on e8cb0a0.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/cli/convert"
)

// s12Admit converts one Apache manifest and applies each flinkfsm object it writes to its CRD, as
// `kubectl apply` would. It fails the test for every refusal the converter did not warn of: the
// rule of `kubectl flink convert` is that every field is carried, or named in a warning.
func s12Admit(t *testing.T, manifest string) {
	t.Helper()
	out, report, err := convert.Convert([]byte(manifest))
	if err != nil {
		t.Logf("refused by the converter (with its reason): %v", err)
		return
	}
	var warnings []string
	for _, w := range report.Warnings {
		warnings = append(warnings, w.Field+": "+w.Reason)
	}
	for _, c := range flinkfsmObjects(t, out) {
		r := crdFor(t, c.kind).Create(context.Background(), c.obj)
		if len(r.Errs) > 0 {
			t.Errorf("converted document %d (%s) is refused by kubectl apply, and the converter warned of nothing that says so:\n%v\nwarnings:\n  %s\nconverted:\n%s",
				c.index, c.kind, r.Errs.ToAggregate(), strings.Join(warnings, "\n  "), c.doc)
		}
	}
}

const s12Deployment = `apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: basic
spec:
  image: flink:1.20
  flinkVersion: v1_20
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "2"
%s
  jobManager:
    resource: {memory: 2048m, cpu: 1}
  taskManager:
    resource: {memory: 2048m, cpu: 1}
%s
  job:
    jarURI: local:///opt/flink/examples/streaming/StateMachineExample.jar
    parallelism: 2
    upgradeMode: stateless
%s
`

// An Apache FlinkDeployment may carry a savepointRedeployNonce without an initialSavepointPath: the
// Apache operator validates the pair only when the nonce changes (its DefaultValidator), and its own
// blue/green abort sets the nonce on a surviving deployment. The converter copies the nonce and
// writes an object that kubectl apply refuses, with no warning: the user who converted a directory
// of manifests learns of it only when the apply fails half-way through.
func TestS12ConvertedRedeployNonceWithoutItsSavepointIsRefusedWithoutAWarning(t *testing.T) {
	s12Admit(t, fmt.Sprintf(s12Deployment, "", "", "    savepointRedeployNonce: 3"))
	t.Run("session job", func(t *testing.T) {
		s12Admit(t, `apiVersion: flink.apache.org/v1beta1
kind: FlinkSessionJob
metadata:
  name: job
spec:
  deploymentName: session
  job:
    jarURI: https://repo.example.com/job.jar
    parallelism: 1
    upgradeMode: stateless
    savepointRedeployNonce: 3
`)
	})
}

// The Apache operator writes every file of logConfiguration into the Flink conf directory
// (log4j-cli.properties, log4j-session.properties ...); flinkfsm's CRD takes two names only. The
// converter copies them all, and apply refuses the application without a warning.
func TestS12ConvertedLogConfigurationOfOtherFilesIsRefusedWithoutAWarning(t *testing.T) {
	s12Admit(t, fmt.Sprintf(s12Deployment, "", `  logConfiguration:
    log4j-console.properties: "rootLogger.level = INFO"
    log4j-cli.properties: "rootLogger.level = WARN"`, ""))
}

// Huge durations and counts in the Apache operator's settings: the periodic savepoint interval
// overflows int32 when converted to seconds (written negative: refused at apply), and a savepoint
// history count above flinkfsm's bound is copied as it is. Neither is warned of.
func TestS12ConvertedHugeOperatorSettingsAreRefusedWithoutAWarning(t *testing.T) {
	t.Run("periodic savepoint interval of 30000 days", func(t *testing.T) {
		s12Admit(t, fmt.Sprintf(s12Deployment, `    kubernetes.operator.periodic.savepoint.interval: 30000 d`, "", ""))
	})
	t.Run("savepoint history of 5000", func(t *testing.T) {
		s12Admit(t, fmt.Sprintf(s12Deployment, `    kubernetes.operator.savepoint.history.max.count: "5000"`, "", ""))
	})
}
