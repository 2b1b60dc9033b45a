package flink

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/internal/repo"
)

// The admission layer of the pod policy, evaluated in process by the API server's own code for
// ValidatingAdmissionPolicies (k8s.io/apiserver at the module's version): deploy/policy.yaml is
// compiled as the plugin compiles a policy, and a manifest is admitted or refused with the
// messages kubectl would print.

// oldestKubernetes is the oldest API server the policy must load on (docs/testing.md): its CEL
// libraries are the ones a new policy may use.
var oldestKubernetes = version.MajorMinor(1, 30)

type admissionLayer struct {
	policy    *admissionregistrationv1.ValidatingAdmissionPolicy
	validator validating.Validator
}

// loadAdmissionPolicy reads the committed deploy/policy.yaml (of the tree the test runs in).
func loadAdmissionPolicy(t *testing.T) *admissionLayer {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "deploy", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return compileAdmissionPolicy(t, data)
}

func compileAdmissionPolicy(t *testing.T, data []byte) *admissionLayer {
	t.Helper()
	doc := bytes.Split(data, []byte("\n---\n"))[0]
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	if err := yaml.UnmarshalStrict(doc, &policy); err != nil {
		t.Fatalf("deploy/policy.yaml: %v", err)
	}
	// What an API server of the oldest supported version checks when the policy is created: every
	// expression compiles with the CEL libraries it has.
	checkCompiles(t, &policy, environment.MustBaseEnvSet(oldestKubernetes, true), environment.NewExpressions)
	// What the plugin runs: the current libraries, strict cost (compilePolicy in k8s.io/apiserver).
	envSet := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion(), true)
	compiler := checkCompiles(t, &policy, envSet, environment.StoredExpressions)
	withAuthz := plugincel.OptionalVariableDeclarations{HasAuthorizer: true, StrictCost: true}
	without := plugincel.OptionalVariableDeclarations{StrictCost: true}
	var validations, messages []plugincel.ExpressionAccessor
	for _, v := range policy.Spec.Validations {
		validations = append(validations, &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason})
		var m plugincel.ExpressionAccessor
		if v.MessageExpression != "" {
			m = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
		messages = append(messages, m)
	}
	return &admissionLayer{policy: &policy, validator: validating.NewValidator(
		compiler.CompileCondition(validations, withAuthz, environment.StoredExpressions), nil,
		compiler.CompileCondition(nil, withAuthz, environment.StoredExpressions),
		compiler.CompileCondition(messages, without, environment.StoredExpressions),
		policy.Spec.FailurePolicy)}
}

// checkCompiles compiles every variable, validation and message of the policy in one environment.
func checkCompiles(t *testing.T, p *admissionregistrationv1.ValidatingAdmissionPolicy, envSet *environment.EnvSet, mode environment.Type) *plugincel.CompositedCompiler {
	t.Helper()
	compiler, err := plugincel.NewCompositedCompiler(envSet)
	if err != nil {
		t.Fatal(err)
	}
	opts := plugincel.OptionalVariableDeclarations{HasAuthorizer: true, StrictCost: true}
	for _, v := range p.Spec.Variables {
		if r := compiler.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, opts, mode); r.Error != nil {
			t.Errorf("variable %s does not compile: %v", v.Name, r.Error)
		}
	}
	var exprs []plugincel.ExpressionAccessor
	for _, v := range p.Spec.Validations {
		exprs = append(exprs, &validating.ValidationCondition{Expression: v.Expression})
		if v.MessageExpression != "" {
			exprs = append(exprs, &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression})
		}
	}
	for _, err := range compiler.CompileCondition(exprs, opts, mode).CompilationErrors() {
		t.Errorf("an expression does not compile: %v", err)
	}
	return compiler
}

// requester is who asks the API server to write an object: a user name, and the Secrets of the
// object's namespace the user may get ("*": every one, and so the Secrets as a whole).
type requester struct {
	name    string
	secrets []string
}

// nobody may get no Secret.
var nobody = requester{name: "nobody"}

// authorizer answers as an API server's authorizer would for r, which only get on Secrets in
// namespace is granted to; checks counts the questions.
func (r requester) authorizer(namespace string, checks *int) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		*checks++
		if a.GetUser().GetName() != r.name || !a.IsResourceRequest() || a.GetAPIGroup() != "" || a.GetResource() != "secrets" ||
			a.GetSubresource() != "" || a.GetVerb() != "get" || a.GetNamespace() != namespace {
			return authorizer.DecisionNoOpinion, "", nil
		}
		// A question without a name is about every Secret of the namespace.
		if slices.Contains(r.secrets, "*") || a.GetName() != "" && slices.Contains(r.secrets, a.GetName()) {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
}

// admissionRequest is one write of a FlinkApplication or a FlinkSessionCluster (resource) in a
// namespace with these annotations, by who: a CREATE, or an UPDATE of old.
type admissionRequest struct {
	obj, old runtime.Object
	resource string
	ns       map[string]string
	who      requester
	// budget is the policy's runtime CEL cost budget; 0 is the API server's.
	budget int64
}

// admissionResult is what the policy decided: its refusals, the validations it failed to evaluate
// (its failurePolicy refuses the object for them), and how many questions it asked the authorizer.
type admissionResult struct {
	refusals, errors []string
	checks           int
}

func (a *admissionLayer) evaluate(t *testing.T, r admissionRequest) admissionResult {
	t.Helper()
	unstructuredOf := func(obj runtime.Object) *unstructured.Unstructured {
		if obj == nil {
			return nil
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: content}
		u.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
		return u
	}
	u, old := unstructuredOf(r.obj), unstructuredOf(r.old)
	gvr := schema.GroupVersionResource{Group: "flink.k8s.io", Version: "v1beta1", Resource: r.resource}
	gvk := r.obj.GetObjectKind().GroupVersionKind()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: u.GetNamespace(), Annotations: r.ns}}
	op, opts, oldObj := admission.Create, runtime.Object(&metav1.CreateOptions{}), runtime.Object(nil)
	if old != nil {
		op, opts, oldObj = admission.Update, &metav1.UpdateOptions{}, old
	}
	who := r.who
	if who.name == "" {
		who = nobody
	}
	attrs := admission.NewAttributesRecord(u, oldObj, gvk, u.GetNamespace(), u.GetName(), gvr, "", op, opts, false,
		&user.DefaultInfo{Name: who.name})
	versioned := &admission.VersionedAttributes{Attributes: attrs, VersionedKind: gvk, VersionedObject: u, VersionedOldObject: oldObj}
	budget := r.budget
	if budget == 0 {
		budget = celconfig.RuntimeCELCostBudget
	}
	var out admissionResult
	result := a.validator.Validate(context.Background(), gvr, versioned, nil, ns, budget, who.authorizer(u.GetNamespace(), &out.checks))
	for _, d := range result.Decisions {
		switch {
		case d.Evaluation == validating.EvalError:
			out.errors = append(out.errors, d.Message)
		case d.Action == validating.ActionDeny:
			out.refusals = append(out.refusals, d.Message)
		}
	}
	return out
}

// review is the refusals of the request. An expression that fails to evaluate fails the test: the
// policy's failurePolicy would refuse the object for the wrong reason.
func (a *admissionLayer) review(t *testing.T, r admissionRequest) []string {
	t.Helper()
	result := a.evaluate(t, r)
	for _, e := range result.errors {
		t.Errorf("the policy failed to evaluate: %s", e)
	}
	return result.refusals
}

// refusals are the messages with which the policy refuses nobody (who may get no Secret) to create
// obj, a FlinkApplication or a FlinkSessionCluster, in a namespace with these annotations.
func (a *admissionLayer) refusals(t *testing.T, obj runtime.Object, resource string, nsAnnotations map[string]string) []string {
	t.Helper()
	return a.review(t, admissionRequest{obj: obj, resource: resource, ns: nsAnnotations})
}
