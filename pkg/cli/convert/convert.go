// Package convert turns the Apache Flink Kubernetes operator's objects (flink.apache.org:
// FlinkDeployment, FlinkSessionJob, FlinkStateSnapshot, FlinkBlueGreenDeployment) into flinkfsm's.
// Every field is carried across or named in the report with the reason it is not: nothing is
// dropped without a word. Objects of other kinds pass through as they are.
package convert

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// apacheGroup is the Apache operator's API group.
const apacheGroup = "flink.apache.org"

// Warning names a field of an Apache object that is not carried across as it was, and why.
type Warning struct {
	// Object is the object's kind and name, "FlinkSessionJob/basic" say.
	Object string
	// Field is the field's path in the object, "spec.job.autoscalerResetNonce" say.
	Field  string
	Reason string
}

func (w Warning) String() string { return fmt.Sprintf("%s: %s: %s", w.Object, w.Field, w.Reason) }

// Report is what a conversion says besides its output.
type Report struct {
	// Converted counts the Apache objects converted; Passed the other objects passed through.
	Converted, Passed int
	Warnings          []Warning
	object            string
}

func (r *Report) warn(field, reason string) {
	r.Warnings = append(r.Warnings, Warning{Object: r.object, Field: field, Reason: reason})
}

// converter turns one Apache object of a kind, its metadata carried across and its spec to walk,
// into flinkfsm's objects.
type converter func(meta metav1.ObjectMeta, spec *fields) ([]any, error)

// converters are the Apache kinds this package converts.
var converters = map[string]converter{
	"FlinkDeployment":          flinkDeployment,
	"FlinkSessionJob":          sessionJob,
	"FlinkStateSnapshot":       stateSnapshot,
	"FlinkBlueGreenDeployment": blueGreen,
}

// Convert converts a stream of YAML documents and returns flinkfsm's objects as a stream of YAML
// documents, in the order of the input.
func Convert(in []byte) ([]byte, Report, error) {
	var out bytes.Buffer
	var report Report
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(in)))
	for n := 1; ; n++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, report, fmt.Errorf("document %d: %w", n, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || onlyComments(raw) {
			continue
		}
		objects, err := convertDocument(raw, &report)
		if err != nil {
			return nil, report, fmt.Errorf("document %d: %w", n, err)
		}
		for _, o := range objects {
			b, err := manifest(o)
			if err != nil {
				return nil, report, fmt.Errorf("document %d: %w", n, err)
			}
			out.WriteString("---\n")
			out.Write(b)
		}
	}
	return out.Bytes(), report, nil
}

func onlyComments(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// convertDocument converts one document: an Apache object to flinkfsm's, anything else as it is.
func convertDocument(raw []byte, report *Report) ([]any, error) {
	j, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	apiVersion, _ := doc["apiVersion"].(string)
	kind, _ := doc["kind"].(string)
	if group, _, _ := strings.Cut(apiVersion, "/"); group != apacheGroup {
		report.Passed++
		return []any{doc}, nil
	}
	convert, ok := converters[kind]
	if !ok {
		return nil, fmt.Errorf("%s %s of the Apache operator: no flinkfsm kind to convert it to", apiVersion, kind)
	}
	name := ""
	if m, ok := doc["metadata"].(map[string]any); ok {
		name, _ = m["name"].(string)
	}
	report.object = kind + "/" + name
	f := &fields{m: doc, out: report}
	meta := objectMeta(f)
	// What the API server writes, and what says the kind: the converter writes its own.
	f.take("apiVersion")
	f.take("kind")
	f.take("status")
	spec := f.object("spec")
	switch {
	case spec == nil && !canary(meta):
		return nil, fmt.Errorf("%s: no spec", report.object)
	case spec == nil:
		spec = &fields{path: "spec", out: report}
	}
	objects, err := convert(meta, spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", report.object, err)
	}
	if len(objects) > 0 {
		// Left out whole, an object was named once; converted, each field it left is named.
		spec.rest()
		f.rest()
	}
	report.Converted++
	return objects, nil
}

// manifest is an object as a user writes it: the converted kinds without the status the operator
// writes.
func manifest(o any) ([]byte, error) {
	if _, passed := o.(map[string]any); passed {
		return yaml.Marshal(o)
	}
	j, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	return yaml.Marshal(m)
}
