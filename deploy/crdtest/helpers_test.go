package crdtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// loaders load each generated CRD once per test binary.
var loaders = func() map[string]func() (*CRD, error) {
	out := map[string]func() (*CRD, error){}
	for kind, rel := range CRDPaths {
		out[kind] = sync.OnceValues(func() (*CRD, error) {
			root, err := RepoRoot()
			if err != nil {
				return nil, err
			}
			return LoadCRD(filepath.Join(root, rel))
		})
	}
	return out
}()

// flinkCRD is the generated FlinkApplication CRD.
func flinkCRD(t *testing.T) *CRD {
	t.Helper()
	return crdFor(t, "FlinkApplication")
}

// crdFor is the generated CRD of the kind.
func crdFor(t *testing.T, kind string) *CRD {
	t.Helper()
	load, ok := loaders[kind]
	if !ok {
		t.Fatalf("no CRD defines kind %q", kind)
	}
	crd, err := load()
	if err != nil {
		t.Fatalf("loading the %s CRD: %v", kind, err)
	}
	return crd
}

// repoFile is the path of a file given relative to the repository root.
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, filepath.FromSlash(rel))
}

// parseObject decodes one manifest as the API server decodes a request body: integers become int64,
// other numbers float64.
func parseObject(t *testing.T, data []byte) map[string]interface{} {
	t.Helper()
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("yaml: %v", err)
	}
	var obj map[string]interface{}
	if err := utiljson.Unmarshal(j, &obj); err != nil {
		t.Fatalf("json: %v", err)
	}
	return obj
}

// readObject reads a single-document manifest of the repository.
func readObject(t *testing.T, rel string) map[string]interface{} {
	t.Helper()
	data, err := os.ReadFile(repoFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return parseObject(t, data)
}

// documents splits a multi-document YAML stream on its --- separator lines, dropping empty documents.
func documents(data []byte) [][]byte {
	var out [][]byte
	for _, doc := range regexp.MustCompile(`(?m)^---[ \t]*$`).Split(string(data), -1) {
		if hasContent(doc) {
			out = append(out, []byte(doc))
		}
	}
	return out
}

func hasContent(doc string) bool {
	for _, line := range strings.Split(doc, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

// edit is a change made to a copy of a manifest.
type edit func(obj map[string]interface{})

func set(value interface{}, path ...string) edit {
	return func(obj map[string]interface{}) {
		if err := unstructured.SetNestedField(obj, value, path...); err != nil {
			panic(err)
		}
	}
}

func del(path ...string) edit {
	return func(obj map[string]interface{}) { unstructured.RemoveNestedField(obj, path...) }
}

// edited is a deep copy of obj with the edits applied.
func edited(obj map[string]interface{}, edits ...edit) map[string]interface{} {
	c := runtime.DeepCopyJSON(obj)
	for _, e := range edits {
		e(c)
	}
	return c
}

// storedWordcount is examples/wordcount.yaml as the API server stores it, with the edits applied
// before it is created.
func storedWordcount(t *testing.T, edits ...edit) map[string]interface{} {
	t.Helper()
	r := flinkCRD(t).Create(context.Background(), edited(readObject(t, "examples/wordcount.yaml"), edits...))
	if len(r.Errs) > 0 {
		t.Fatalf("creating the wordcount example: %v", r.Errs.ToAggregate())
	}
	return r.Object
}

// checkRefused asserts that errs refuses the write with an error on wantField whose message contains
// wantDetail, as `kubectl apply` would print it.
func checkRefused(t *testing.T, errs field.ErrorList, wantField, wantDetail string) {
	t.Helper()
	if len(errs) == 0 {
		t.Fatalf("admitted; want an error on %s", wantField)
	}
	for _, e := range errs {
		if e.Field == wantField && strings.Contains(e.Error(), wantDetail) {
			return
		}
	}
	t.Errorf("errors do not name %s with %q:\n%s", wantField, wantDetail, errs.ToAggregate())
}

// normalized passes v through JSON so typed and untyped values compare equal.
func normalized(t *testing.T, v interface{}) interface{} {
	t.Helper()
	j, err := utiljson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out interface{}
	if err := utiljson.Unmarshal(bytes.TrimSpace(j), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
