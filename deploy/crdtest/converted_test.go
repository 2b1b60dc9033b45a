package crdtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/cli/convert"
)

// What kubectl flink convert writes of the Apache operator's own examples and e2e manifests is
// admitted as it is: every flinkfsm object it makes passes the CRDs' schema and CEL rules, and no
// field of it is unknown to them (pruned). Objects of other kinds pass through untouched.
func TestConvertedApacheManifestsAreAdmitted(t *testing.T) {
	files, err := filepath.Glob(repoFile(t, "pkg/cli/convert/testdata/apache/*.y*ml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the Apache corpus: %v %v", files, err)
	}
	admitted, refused := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, report, err := convert.Convert(data)
		if err != nil {
			continue // refused with its reason: the converter's own tests cover which
		}
		warned := map[string]bool{}
		for _, w := range report.Warnings {
			warned[w.Field] = true
		}
		for _, c := range flinkfsmObjects(t, out) {
			i, kind, doc := c.index, c.kind, c.doc
			r := crdFor(t, kind).Create(context.Background(), c.obj)
			for _, e := range r.Errs {
				if warned[e.Field] {
					// A field the converter named as one apply refuses (a jar flinkfsm cannot fetch).
					r.Errs = nil
					refused++
					break
				}
			}
			if len(r.Errs) > 0 {
				t.Errorf("%s, converted document %d (%s) refused:\n%v\n%s", filepath.Base(f), i, kind, r.Errs.ToAggregate(), doc)
			}
			if len(r.Pruned) > 0 {
				t.Errorf("%s, converted document %d (%s): fields the CRD does not know: %v", filepath.Base(f), i, kind, r.Pruned)
			}
			admitted++
		}
	}
	if admitted == 0 {
		t.Fatal("no converted object was checked")
	}
	t.Logf("%d converted objects checked, %d of them refused where the converter said they would be", admitted, refused)
}

// A flinkConfig written as nested YAML, as Flink's own config.yaml and the Apache operator take it,
// is admitted as it is, and the operator reads it as Flink does: dotted keys.
func TestANestedFlinkConfigIsAdmittedAndReadFlat(t *testing.T) {
	obj := parseObject(t, []byte(`apiVersion: flink.k8s.io/v1beta1
kind: FlinkApplication
metadata: {name: nested}
spec:
  image: flink:1.20
  jarName: job.jar
  parallelism: 2
  flinkConfig:
    high-availability:
      type: kubernetes
      storageDir: s3://state/ha
    state.checkpoints.dir: s3://state/cp
    pipeline.classpaths: [file:///a.jar, file:///b.jar]
`))
	r := crdFor(t, "FlinkApplication").Create(context.Background(), obj)
	if len(r.Errs) > 0 || len(r.Pruned) > 0 {
		t.Fatalf("refused: %v, pruned: %v", r.Errs.ToAggregate(), r.Pruned)
	}
	b, err := json.Marshal(r.Object)
	if err != nil {
		t.Fatal(err)
	}
	var app v1beta1.FlinkApplication
	if err := json.Unmarshal(b, &app); err != nil {
		t.Fatal(err)
	}
	conf, err := app.Spec.FlinkConfig.Strings()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"high-availability.type": "kubernetes", "high-availability.storageDir": "s3://state/ha",
		"pipeline.classpaths": "file:///a.jar;file:///b.jar"} {
		if conf[k] != want {
			t.Errorf("%s = %q, want %q (read %v)", k, conf[k], want, conf)
		}
	}
}

// convertedObject is one flinkfsm object of a converted stream: its document's index, kind, text
// and contents.
type convertedObject struct {
	index int
	kind  string
	doc   []byte
	obj   map[string]interface{}
}

// flinkfsmObjects are the flinkfsm objects of a converted stream; objects of other kinds pass
// through the converter untouched and are left out.
func flinkfsmObjects(t *testing.T, out []byte) []convertedObject {
	t.Helper()
	var objects []convertedObject
	for i, doc := range documents(out) {
		obj := parseObject(t, doc)
		kind, _ := obj["kind"].(string)
		if api, _ := obj["apiVersion"].(string); strings.HasPrefix(api, "flink.k8s.io/") {
			objects = append(objects, convertedObject{index: i, kind: kind, doc: doc, obj: obj})
		}
	}
	return objects
}
