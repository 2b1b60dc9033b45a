package crdtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Apache's operator writes nonces as integers (savepointRedeployNonce: 1): kubectl apply takes them
// as it takes Lyft's strings, and the operator reads the stored object as the same nonce.
func TestNoncesAreAdmittedAsIntegersOrStrings(t *testing.T) {
	ctx := context.Background()
	for _, nonce := range []interface{}{int64(1), "1", "redeploy-2", int64(9223372036854775807)} {
		r := flinkCRD(t).Create(ctx, edited(readObject(t, "examples/wordcount.yaml"),
			set(nonce, "spec", "restartNonce"), set(nonce, "spec", "savepointTriggerNonce"),
			set(nonce, "spec", "checkpointTriggerNonce"), set(nonce, "spec", "savepointRedeployNonce"),
			set("s3://bucket/savepoints/sp-1", "spec", "savepointPath")))
		if len(r.Errs) > 0 {
			t.Fatalf("nonce %#v refused:\n%v", nonce, r.Errs.ToAggregate())
		}
		var app v1beta1.FlinkApplication
		b, _ := json.Marshal(r.Object)
		if err := json.Unmarshal(b, &app); err != nil {
			t.Fatalf("the operator cannot read the stored object with nonce %#v: %v", nonce, err)
		}
		want := v1beta1.Nonce(strings.Trim(string(mustJSON(t, nonce)), `"`))
		for field, got := range map[string]v1beta1.Nonce{"restartNonce": app.Spec.RestartNonce, "savepointTriggerNonce": app.Spec.SavepointTriggerNonce,
			"checkpointTriggerNonce": app.Spec.CheckpointTriggerNonce, "savepointRedeployNonce": app.Spec.SavepointRedeployNonce} {
			if got != want {
				t.Errorf("%s %#v read as %q, want %q", field, nonce, got, want)
			}
		}
	}

	job := sessionExample(t, "FlinkSessionJob", "top-speed")
	r := crdFor(t, "FlinkSessionJob").Create(ctx, edited(job, set(int64(3), "spec", "job", "restartNonce"),
		set(int64(4), "spec", "job", "savepointRedeployNonce"), set("s3://bucket/sp", "spec", "job", "initialSavepointPath")))
	if len(r.Errs) > 0 {
		t.Fatalf("session job refused:\n%v", r.Errs.ToAggregate())
	}
	cluster := crdFor(t, "FlinkSessionCluster").Create(ctx, edited(sessionExample(t, "FlinkSessionCluster", "shared"), set(int64(5), "spec", "restartNonce")))
	if len(cluster.Errs) > 0 {
		t.Fatalf("session cluster refused:\n%v", cluster.Errs.ToAggregate())
	}
}

// An integer savepointRedeployNonce still needs the savepoint to redeploy from, named at apply.
func TestAnIntegerRedeployNonceStillNeedsItsSavepoint(t *testing.T) {
	ctx := context.Background()
	r := flinkCRD(t).Create(ctx, edited(readObject(t, "examples/wordcount.yaml"), set(int64(1), "spec", "savepointRedeployNonce"),
		del("spec", "savepointPath")))
	checkRefused(t, r.Errs, "spec.savepointPath", "savepointRedeployNonce redeploys from spec.savepointPath")
	j := crdFor(t, "FlinkSessionJob").Create(ctx, edited(sessionExample(t, "FlinkSessionJob", "top-speed"),
		set(int64(1), "spec", "job", "savepointRedeployNonce"), del("spec", "job", "initialSavepointPath")))
	checkRefused(t, j.Errs, "spec.job.initialSavepointPath", "savepointRedeployNonce resubmits")
}

func TestNoncesThatNameNoWholeNumberOrAreTooLongAreRefused(t *testing.T) {
	ctx := context.Background()
	r := flinkCRD(t).Create(ctx, edited(readObject(t, "examples/wordcount.yaml"), set(1.5, "spec", "restartNonce")))
	checkRefused(t, r.Errs, "spec.restartNonce", "")
	r = flinkCRD(t).Create(ctx, edited(readObject(t, "examples/wordcount.yaml"), set(strings.Repeat("n", 254), "spec", "savepointTriggerNonce")))
	checkRefused(t, r.Errs, "spec.savepointTriggerNonce", "253")
}

func mustJSON(t *testing.T, v interface{}) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
