package crdtest

import (
	"context"
	"testing"
)

// The Apache operator's manifests name an application's jar by its path in the image.
func TestAJarURIInTheImageIsAdmittedInsteadOfAJarName(t *testing.T) {
	r := flinkCRD(t).Create(context.Background(), edited(readObject(t, "examples/wordcount.yaml"), del("spec", "jarName"),
		set("local:///opt/flink/examples/streaming/StateMachineExample.jar", "spec", "jarURI")))
	if len(r.Errs) > 0 {
		t.Fatalf("refused:\n%v", r.Errs.ToAggregate())
	}
}
