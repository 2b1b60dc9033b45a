package config

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// NamespacePlaceholder is replaced by the application's namespace in IngressPolicy.HostDomains.
const NamespacePlaceholder = "{{namespace}}"

// Validate reports entries that grant nothing sensible, before the operator starts: a domain must
// be a DNS name for every namespace, and an annotation a key or a prefix of keys.
func (p IngressPolicy) Validate() error {
	for _, d := range p.HostDomains {
		// A namespace is a DNS label, so a domain that is a DNS name for one is for every one.
		sample := strings.ReplaceAll(d, NamespacePlaceholder, "ns")
		if errs := validation.IsDNS1123Subdomain(sample); len(errs) > 0 {
			return fmt.Errorf("operator.ingress.hostDomains: %q is not a DNS domain, {{namespace}} aside: %s", d, strings.Join(errs, "; "))
		}
	}
	for _, a := range p.AllowedAnnotations {
		key, prefix := strings.CutSuffix(a, "*")
		if prefix && strings.Contains(key, "*") || !prefix && len(validation.IsQualifiedName(key)) > 0 {
			return fmt.Errorf("operator.ingress.allowedAnnotations: %q is neither an annotation key nor a prefix of keys ending in *", a)
		}
	}
	for _, c := range p.AllowedClasses {
		if errs := validation.IsDNS1123Subdomain(c); len(errs) > 0 {
			return fmt.Errorf("operator.ingress.allowedClasses: %q is not an IngressClass name: %s", c, strings.Join(errs, "; "))
		}
	}
	return nil
}
