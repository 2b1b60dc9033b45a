// Package crdtest checks what `kubectl apply -k deploy/` and `kubectl apply -f examples/` would meet on
// a real cluster, without one: the generated CRD is admitted the way the API server admits a CRD, and
// FlinkApplications go through the same pruning, defaulting, OpenAPI and CEL validation the API
// server's custom resource handler runs, built from the same k8s.io/apiextensions-apiserver code.
// A marker missing from the Go types therefore fails here, not on a user's cluster.
package crdtest

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/flinkfsm/flinkfsm/internal/repo"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"sigs.k8s.io/yaml"
)

// CRDPath is where controller-gen writes the FlinkApplication CRD, relative to the repository root.
const CRDPath = "deploy/crd/flink.k8s.io_flinkapplications.yaml"

// CRDPaths are every CRD controller-gen writes, by the kind each defines.
var CRDPaths = map[string]string{
	"FlinkApplication":    CRDPath,
	"FlinkSessionCluster": "deploy/crd/flink.k8s.io_flinksessionclusters.yaml",
	"FlinkSessionJob":     "deploy/crd/flink.k8s.io_flinksessionjobs.yaml",
	"FlinkSnapshot":       "deploy/crd/flink.k8s.io_flinksnapshots.yaml",
}

// RepoRoot is the flinkfsm source tree, so tests find the manifests wherever `go test` runs them from.
func RepoRoot() (string, error) { return repo.Root() }

// CRD is a custom resource definition as an API server serving its storage version holds it.
type CRD struct {
	// Definition is the CRD in the API server's internal form, defaulted as on creation.
	Definition *apiextensions.CustomResourceDefinition
	// Structural is the storage version's schema with its defaults pruned, as the handler uses it.
	Structural *structuralschema.Structural

	apiVersion, kind string
	schema, status   validation.SchemaValidator
	cel              *cel.Validator
}

// LoadCRD reads a single-version CRD manifest and prepares the validators the API server would build
// from it. It does not check the CRD itself; ValidateDefinition does.
func LoadCRD(path string) (*CRD, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v1 apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &v1); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&v1)
	def := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1, def, nil); err != nil {
		return nil, err
	}
	version := ""
	for _, v := range def.Spec.Versions {
		if v.Storage {
			version = v.Name
		}
	}
	// What the CRD registry's PrepareForCreate records.
	def.Status.StoredVersions = []string{version}

	val, err := apiextensions.GetSchemaForVersion(def, version)
	if err != nil || val == nil || val.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("%s: no schema for version %q: %v", path, version, err)
	}
	s, err := structuralschema.NewStructural(val.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("%s: schema is not structural: %w", path, err)
	}
	s = s.DeepCopy()
	if err := defaulting.PruneDefaults(s); err != nil {
		return nil, err
	}
	c := &CRD{
		Definition: def,
		Structural: s,
		apiVersion: def.Spec.Group + "/" + version,
		kind:       def.Spec.Names.Kind,
		cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
	}
	if c.schema, _, err = validation.NewSchemaValidator(val.OpenAPIV3Schema); err != nil {
		return nil, err
	}
	if status, ok := val.OpenAPIV3Schema.Properties["status"]; ok {
		if c.status, _, err = validation.NewSchemaValidator(&status); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// ValidateDefinition is the validation `kubectl apply` of the CRD meets: structural schema, pruned
// and valid defaults, CEL rules that compile within the cost limits, API approval of a k8s.io group.
func (c *CRD) ValidateDefinition(ctx context.Context) field.ErrorList {
	return crdvalidation.ValidateCustomResourceDefinition(ctx, c.Definition)
}

// Result is the outcome of one write.
type Result struct {
	// Object is what would be stored: pruned, defaulted, with the status subresource's rules applied.
	Object map[string]interface{}
	// Pruned lists the fields the schema does not know; the server drops them (and rejects the
	// request under kubectl's default --validate=strict).
	Pruned []string
	// Errs is what the server would answer with a 422; empty when the write is admitted.
	Errs field.ErrorList
}

// Create admits obj as a new object in namespace "default" when it names none, as `kubectl apply`
// without -n does. A status in obj is dropped, as the status subresource requires.
func (c *CRD) Create(ctx context.Context, obj map[string]interface{}) Result {
	r := c.decode(obj)
	u := &unstructured.Unstructured{Object: r.Object}
	if u.GetNamespace() == "" {
		u.SetNamespace("default")
	}
	delete(u.Object, "status")
	u.SetGeneration(1)

	r.Errs = append(r.Errs, c.validateTypeMeta(u)...)
	if len(r.Errs) > 0 {
		return r
	}
	r.Errs = append(r.Errs, metavalidation.ValidateObjectMetaAccessor(u, true, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	r.Errs = append(r.Errs, validation.ValidateCustomResource(nil, u.Object, c.schema)...)
	r.Errs = append(r.Errs, objectmeta.Validate(nil, u.Object, c.Structural, false)...)
	r.Errs = append(r.Errs, listtype.ValidateListSetsAndMaps(nil, c.Structural, u.Object)...)
	r.Errs = c.validateCEL(ctx, r.Errs, u.Object, nil)
	if len(r.Errs) == 0 {
		// What the registry and storage add to an object they accept.
		u.SetUID(types.UID("00000000-0000-0000-0000-000000000001"))
		u.SetCreationTimestamp(metav1.Now().Rfc3339Copy())
		u.SetResourceVersion("1")
	}
	return r
}

// Update admits obj replacing old, a stored object (a Create or Update result). The status is kept
// from old, and the generation goes up when anything but metadata changed. Validation ratchets, as it does from Kubernetes 1.33 on: an invalid value that the
// update leaves unchanged is not an error.
func (c *CRD) Update(ctx context.Context, obj, old map[string]interface{}) Result {
	r := c.decode(obj)
	if st, ok := old["status"]; ok {
		r.Object["status"] = runtime.DeepCopyJSONValue(st)
	} else {
		delete(r.Object, "status")
	}
	// The generation counts changes to anything but metadata; status writers compare it with
	// status.observedGeneration.
	u, uOld := &unstructured.Unstructured{Object: r.Object}, &unstructured.Unstructured{Object: old}
	u.SetGeneration(uOld.GetGeneration())
	if !apiequality.Semantic.DeepEqual(withoutMetadata(r.Object), withoutMetadata(old)) {
		u.SetGeneration(uOld.GetGeneration() + 1)
	}
	return c.validateUpdate(ctx, r, old, false)
}

func withoutMetadata(obj map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(obj))
	for k, v := range obj {
		if k != "metadata" {
			out[k] = v
		}
	}
	return out
}

// UpdateStatus admits obj's status replacing old's, as a write to the status subresource does; the
// rest of obj is ignored and taken from old.
func (c *CRD) UpdateStatus(ctx context.Context, obj, old map[string]interface{}) Result {
	decoded := c.decode(obj)
	r := Result{Object: runtime.DeepCopyJSON(old), Pruned: decoded.Pruned}
	if st, ok := decoded.Object["status"]; ok {
		r.Object["status"] = st
	} else {
		delete(r.Object, "status")
	}
	return c.validateUpdate(ctx, r, old, true)
}

func (c *CRD) validateUpdate(ctx context.Context, r Result, old map[string]interface{}, statusOnly bool) Result {
	u, uOld := &unstructured.Unstructured{Object: r.Object}, &unstructured.Unstructured{Object: old}
	if u.GetResourceVersion() == "" {
		// kubectl apply and patches write on top of the live object, whose resourceVersion they carry.
		u.SetResourceVersion(uOld.GetResourceVersion())
	}
	if r.Errs = append(r.Errs, c.validateTypeMeta(u)...); len(r.Errs) > 0 {
		return r
	}
	correlated := common.NewCorrelatedObject(u.Object, old, &model.Structural{Structural: c.Structural})
	r.Errs = append(r.Errs, metavalidation.ValidateObjectMetaAccessorUpdate(u, uOld, field.NewPath("metadata"))...)
	if statusOnly {
		if st, ok := u.Object["status"]; ok && c.status != nil {
			r.Errs = append(r.Errs, validation.ValidateCustomResourceUpdate(field.NewPath("status"), st, old["status"], c.status,
				validation.WithRatcheting(correlated.Key("status")))...)
		}
	} else {
		r.Errs = append(r.Errs, validation.ValidateCustomResourceUpdate(nil, u.Object, old, c.schema, validation.WithRatcheting(correlated))...)
		r.Errs = append(r.Errs, objectmeta.Validate(nil, u.Object, c.Structural, false)...)
	}
	if len(listtype.ValidateListSetsAndMaps(nil, c.Structural, old)) == 0 {
		r.Errs = append(r.Errs, listtype.ValidateListSetsAndMaps(nil, c.Structural, u.Object)...)
	}
	r.Errs = c.validateCEL(ctx, r.Errs, u.Object, old, cel.WithRatcheting(correlated))
	if len(r.Errs) == 0 {
		if rv, err := strconv.Atoi(uOld.GetResourceVersion()); err == nil {
			u.SetResourceVersion(strconv.Itoa(rv + 1))
		}
	}
	return r
}

// decode is what the API server does to a request body before validation: drop unknown fields and
// nulls, coerce metadata, then apply the schema's defaults.
func (c *CRD) decode(obj map[string]interface{}) Result {
	out := runtime.DeepCopyJSON(obj)
	_, _, unknownMeta, err := objectmeta.GetObjectMetaWithOptions(out, objectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	r := Result{Object: out, Pruned: unknownMeta}
	if err != nil {
		r.Errs = append(r.Errs, field.Invalid(field.NewPath("metadata"), nil, err.Error()))
		return r
	}
	r.Pruned = append(r.Pruned, pruning.PruneWithOptions(out, c.Structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	defaulting.PruneNonNullableNullsWithoutDefaults(out, c.Structural)
	ferr, unknown := objectmeta.CoerceWithOptions(nil, out, c.Structural, false, objectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	r.Pruned = append(r.Pruned, unknown...)
	if ferr != nil {
		r.Errs = append(r.Errs, ferr)
	}
	defaulting.Default(out, c.Structural)
	return r
}

func (c *CRD) validateTypeMeta(u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetKind() != c.kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), "must be "+c.kind))
	}
	if u.GetAPIVersion() != c.apiVersion {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), "must be "+c.apiVersion))
	}
	return errs
}

// validateCEL runs the x-kubernetes-validations unless an earlier error means the object is not the
// shape the rules were compiled for; the server then says so instead of running them.
func (c *CRD) validateCEL(ctx context.Context, errs field.ErrorList, obj, old map[string]interface{}, opts ...cel.Option) field.ErrorList {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
	}
	var oldObj interface{}
	if old != nil {
		oldObj = old
	}
	celErrs, _ := c.cel.Validate(ctx, nil, c.Structural, obj, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return append(errs, celErrs...)
}
