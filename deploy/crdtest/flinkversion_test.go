package crdtest

import (
	"context"
	"strings"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// flinkVersion is admitted for every supported release, with or without a patch version, and for
// the earlier 1.x versions Lyft manifests name (examples/wordcount.yaml says 1.11); anything else is
// refused at apply with the supported list, by both kinds that shape a cluster.
func TestFlinkVersionIsASupportedRelease(t *testing.T) {
	admitted := []string{"1.8", "v1.10.1", "1.11", "1.14.6", "1.17.2", "2.0-SNAPSHOT", "1.20.1-scala_2.12"}
	for _, v := range v1beta1.SupportedFlinkVersions {
		admitted = append(admitted, v, v+".1", "v"+v)
	}
	refused := []string{"2.4", "2.10", "3.0", "2", "1", "latest", "flink-1.20", "2.3.x", strings.Repeat("1", 65)}
	for kind, obj := range map[string]map[string]interface{}{
		"FlinkApplication":    readObject(t, "examples/wordcount.yaml"),
		"FlinkSessionCluster": sessionExample(t, "FlinkSessionCluster", "shared"),
	} {
		crd := crdFor(t, kind)
		for _, v := range admitted {
			if r := crd.Create(context.Background(), edited(obj, set(v, "spec", "flinkVersion"))); len(r.Errs) > 0 {
				t.Errorf("%s with flinkVersion %q refused:\n%v", kind, v, r.Errs.ToAggregate())
			}
		}
		for _, v := range refused {
			r := crd.Create(context.Background(), edited(obj, set(v, "spec", "flinkVersion")))
			detail := "flinkVersion must be a supported Flink version: 1.18, 1.19, 1.20, 2.0, 2.1, 2.2 or 2.3"
			if len(v) > 64 {
				detail = "may not be more than 64 bytes"
			}
			checkRefused(t, r.Errs, "spec.flinkVersion", detail)
		}
	}
}

// The refusal names every supported release: the list in the CRD's message and the one the tests
// and the README follow are one list.
func TestFlinkVersionMessageNamesTheSupportedReleases(t *testing.T) {
	s := v1beta1.SupportedFlinkVersions
	want := strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
	r := flinkCRD(t).Create(context.Background(), edited(readObject(t, "examples/wordcount.yaml"), set("9.9", "spec", "flinkVersion")))
	checkRefused(t, r.Errs, "spec.flinkVersion", want)
}
