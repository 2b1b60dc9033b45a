package convert

import (
	"bytes"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// podTemplate converts a pod template: the Apache operator's is a Pod (apiVersion, kind, metadata,
// spec), flinkfsm's its metadata and spec, merged the same way over the pods the operator makes
// (docs/pod-templates.md), main container flink-main-container in both. A field Kubernetes does not
// know is named and the template kept without it.
func podTemplate(f *fields, key string) *corev1.PodTemplateSpec {
	t := f.object(key)
	if t == nil {
		return nil
	}
	t.take("apiVersion")
	t.take("kind")
	b, err := json.Marshal(t.m)
	if err != nil {
		t.out.warn(t.path, err.Error()+"; left out")
		return nil
	}
	var out corev1.PodTemplateSpec
	strict := json.NewDecoder(bytes.NewReader(b))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&out); err != nil {
		out = corev1.PodTemplateSpec{}
		if lenient := json.Unmarshal(b, &out); lenient != nil {
			t.out.warn(t.path, fmt.Sprintf("not a pod template (%v); left out", lenient))
			return nil
		}
		t.out.warn(t.path, fmt.Sprintf("%v; that field is left out of the template", err))
	}
	return &out
}
