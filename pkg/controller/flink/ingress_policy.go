package flink

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The rules a Flink UI Ingress meets before the operator writes it. Every namespace's Ingresses are
// served by the same ingress controllers, so what one says reaches past its namespace: the hosts it
// names take those hosts' traffic, whoever else serves them; its annotations configure the shared
// controller (nginx runs the text of a snippet annotation, sends the requests of an auth-url
// annotation where it says); its path is written into the controller's routes, which may read it as
// a pattern. The spec that asks for the Ingress is a tenant's, so the Ingress may claim only
//
//   - hosts in the domains the operator grants the application's namespace (its ingress.hostDomains,
//     {{namespace}} replaced by the namespace): the rule's host and every TLS host;
//   - a path of plain segments (letters, digits, '-', '_', '~' between single slashes), at most
//     maxUIPathBytes, which routes the same under every controller and every pathType reading;
//   - annotations the operator's ingress.allowedAnnotations names, each value one line of at most
//     maxAnnotationValueBytes without the characters controller configuration is written with;
//   - an IngressClass (spec.ingress.className, or the legacy kubernetes.io/ingress.class
//     annotation) among the operator's ingress.allowedClasses, when it names any;
//   - labels the API server takes.
//
// Anything else makes no Ingress: UIIngress returns an error naming the field, which the controller
// reports without touching the job. The checks read each field of spec.ingress once: what a pass
// spends on them is linear in the fields' size, which the CRD bounds.

const (
	maxUIPathBytes          = 256
	maxAnnotationValueBytes = 256
	// annotationValueForbidden are characters nginx (and other controllers') configuration is
	// written with: a value holding none cannot end a directive or open a block.
	annotationValueForbidden = "{};\"'\\$#`"
)

var uiPathSyntax = regexp.MustCompile(`^(/[A-Za-z0-9_~-]+)*/?$`)

// pathRefusal is why a UI path is refused.
var pathRefusal = fmt.Sprintf("the path is not plain: the UI's path is segments of letters, digits, '-', '_' and '~' between single slashes, at most %d bytes", maxUIPathBytes)

// judge returns the refusal of the first field of the application's UI Ingress the policy does not
// allow, naming it, or nil.
func (p UIIngressPolicy) judge(app *v1beta1.FlinkApplication, addr uiAddress) error {
	if len(addr.path) > maxUIPathBytes || !uiPathSyntax.MatchString(addr.path) {
		return fmt.Errorf("%s: %s", addr.field, pathRefusal)
	}
	if msg := p.hostRefusal(app.Namespace, addr.host); msg != "" {
		return fmt.Errorf("%s: %s", addr.field, msg)
	}
	in := app.Spec.Ingress
	if in == nil {
		in = &v1beta1.IngressSpec{}
	}
	for i, t := range in.TLS {
		for j, h := range t.Hosts {
			if msg := p.hostRefusal(app.Namespace, h); msg != "" {
				return fmt.Errorf("spec.ingress.tls[%d].hosts[%d]: %s", i, j, msg)
			}
		}
	}
	if in.ClassName != nil {
		if msg := p.classRefusal(*in.ClassName); msg != "" {
			return fmt.Errorf("spec.ingress.className: %s", msg)
		}
	}
	for _, set := range []struct {
		field       string
		annotations map[string]string
	}{{"spec.ingressAnnotations", app.Spec.IngressAnnotations}, {"spec.ingress.annotations", in.Annotations}} {
		for _, k := range slices.Sorted(maps.Keys(set.annotations)) {
			if msg := p.annotationRefusal(k, set.annotations[k]); msg != "" {
				return fmt.Errorf("%s[%s]: %s", set.field, k, msg)
			}
			if k == legacyClassAnnotation {
				if msg := p.classRefusal(set.annotations[k]); msg != "" {
					return fmt.Errorf("%s[%s]: %s", set.field, k, msg)
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(in.Labels)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("spec.ingress.labels[%s]: not a label key: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(in.Labels[k]); len(errs) > 0 {
			return fmt.Errorf("spec.ingress.labels[%s]: not a label value: %s", k, strings.Join(errs, "; "))
		}
	}
	return nil
}

// domains are the domains the operator grants a namespace.
func (p UIIngressPolicy) domains(namespace string) []string {
	out := make([]string, len(p.HostDomains))
	for i, d := range p.HostDomains {
		out[i] = strings.ReplaceAll(d, "{{namespace}}", namespace)
	}
	return out
}

// hostRefusal says why a host (a TLS host may be a wildcard, *.name) is not the namespace's to
// claim, or "". A host is in a domain when it is the domain or below it, label by label: so a
// namespace's domain holds no other namespace's hosts, since a namespace name holds no dot.
func (p UIIngressPolicy) hostRefusal(namespace, host string) string {
	name, _ := strings.CutPrefix(host, "*.")
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Sprintf("host %q is not a DNS name: %s", host, strings.Join(errs, "; "))
	}
	domains := p.domains(namespace)
	for _, d := range domains {
		if name == d || strings.HasSuffix(name, "."+d) {
			return ""
		}
	}
	granted := "it grants none: its ingress.hostDomains is empty"
	if len(domains) > 0 {
		granted = strings.Join(domains, ", ")
	}
	return fmt.Sprintf("host %s is not in a domain the operator grants namespace %s (%s)", host, namespace, granted)
}

// legacyClassAnnotation chooses an Ingress's class as spec.ingressClassName does, for controllers
// that predate IngressClass.
const legacyClassAnnotation = "kubernetes.io/ingress.class"

// classRefusal says why an Ingress may not be served by the IngressClass, or "".
func (p UIIngressPolicy) classRefusal(class string) string {
	if len(p.AllowedClasses) == 0 || slices.Contains(p.AllowedClasses, class) {
		return ""
	}
	return fmt.Sprintf("the operator does not let a spec choose IngressClass %q (allowed: %s; its ingress.allowedClasses)",
		class, strings.Join(p.AllowedClasses, ", "))
}

// annotationRefusal says why an annotation may not be set on the Ingress, or "".
func (p UIIngressPolicy) annotationRefusal(key, value string) string {
	allowed := slices.ContainsFunc(p.AllowedAnnotations, func(a string) bool {
		prefix, isPrefix := strings.CutSuffix(a, "*")
		return key == a || isPrefix && strings.HasPrefix(key, prefix)
	})
	if !allowed || len(validation.IsQualifiedName(key)) > 0 {
		list := "none"
		if len(p.AllowedAnnotations) > 0 {
			list = strings.Join(p.AllowedAnnotations, ", ")
		}
		return fmt.Sprintf("the operator does not let a spec set this annotation (allowed: %s; its ingress.allowedAnnotations)", list)
	}
	if !plainValue(value) {
		return fmt.Sprintf("the value is not one line of at most %d bytes without %s", maxAnnotationValueBytes, annotationValueForbidden)
	}
	return ""
}

// plainValue: printable ASCII, at most maxAnnotationValueBytes, none of annotationValueForbidden.
func plainValue(v string) bool {
	if len(v) > maxAnnotationValueBytes || strings.ContainsAny(v, annotationValueForbidden) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}
