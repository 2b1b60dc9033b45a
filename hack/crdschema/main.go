// Command crdschema finishes the CRDs controller-gen writes with what its markers cannot say: every
// int32 field gets the bounds of an int32. The API server does not enforce `format: int32`, so without
// them a value such as 4294967296 is stored, and then no Go client can decode the object, nor any
// list it is in. Our own fields carry kubebuilder markers; this reaches the fields of the Kubernetes
// types the spec embeds (volumes, affinity), which have none. int64 fields need nothing: a number
// past int64 reaches the validator as a float, which `type: integer` refuses.
//
// It rewrites the files it is given in place and leaves a file untouched when nothing changes.
package main

import (
	"bytes"
	"fmt"
	"math"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

func main() {
	for _, path := range os.Args[1:] {
		if err := finish(path); err != nil {
			fmt.Fprintf(os.Stderr, "crdschema: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

func finish(path string) error {
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(in, &crd); err != nil {
		return err
	}
	for i := range crd.Spec.Versions {
		if s := crd.Spec.Versions[i].Schema; s != nil && s.OpenAPIV3Schema != nil {
			walk(s.OpenAPIV3Schema)
		}
	}
	// controller-gen writes no status; the typed CRD would add an empty one.
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&crd)
	if err != nil {
		return err
	}
	delete(obj, "status")
	out, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	out = append([]byte("---\n"), out...)
	if bytes.Equal(in, out) {
		return nil
	}
	return os.WriteFile(path, out, 0o644)
}

func walk(s *apiextensionsv1.JSONSchemaProps) {
	if s.Type == "integer" && s.Format == "int32" {
		if s.Minimum == nil {
			s.Minimum = ptr(float64(math.MinInt32))
		}
		if s.Maximum == nil {
			s.Maximum = ptr(float64(math.MaxInt32))
		}
	}
	for k, p := range s.Properties {
		walk(&p)
		s.Properties[k] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		walk(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walk(s.AdditionalProperties.Schema)
	}
}

func ptr[T any](v T) *T { return &v }
