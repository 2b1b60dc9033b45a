package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The UI Ingress's domains and annotations are the platform's grant to tenants: an entry that
// cannot mean what it says stops the operator at start, naming it.
func TestIngressPolicyEntriesMustMeanSomething(t *testing.T) {
	for _, p := range []IngressPolicy{
		{},
		{HostDomains: []string{"{{namespace}}.flink.example.com", "flink-{{namespace}}.example.com", "shared.example.com"}},
		{AllowedAnnotations: []string{"kubernetes.io/ingress.class", "example.com/*", "*"}},
		Default().Ingress,
	} {
		assert.NoError(t, p.Validate(), "%+v", p)
	}
	for _, c := range []struct {
		policy IngressPolicy
		want   string
	}{
		{IngressPolicy{HostDomains: []string{"*.flink.example.com"}}, `operator.ingress.hostDomains: "*.flink.example.com" is not a DNS domain`},
		{IngressPolicy{HostDomains: []string{"https://flink.example.com"}}, "operator.ingress.hostDomains"},
		{IngressPolicy{HostDomains: []string{"{{name}}.flink.example.com"}}, "operator.ingress.hostDomains"},
		{IngressPolicy{AllowedAnnotations: []string{"nginx.ingress.kubernetes.io/*-snippet"}}, "operator.ingress.allowedAnnotations"},
		{IngressPolicy{AllowedAnnotations: []string{"not a key"}}, "operator.ingress.allowedAnnotations"},
		{IngressPolicy{AllowedAnnotations: []string{""}}, "operator.ingress.allowedAnnotations"},
	} {
		err := c.policy.Validate()
		if assert.Error(t, err, "%+v", c.policy) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	cfg := Default()
	cfg.Ingress.HostDomains = []string{"*"}
	assert.Error(t, cfg.Validate(), "the operator's Validate checks the ingress policy")
}

// By default a spec may set none of the annotations that hand an ingress controller configuration
// text, an authentication or a backend.
func TestTheDefaultIngressAnnotationsAreConservative(t *testing.T) {
	for _, a := range DefaultIngressAnnotations {
		for _, bad := range []string{"snippet", "auth", "backend", "upstream", "mirror", "rewrite", "redirect-", "permanent-redirect", "canary", "*"} {
			assert.NotContains(t, a, bad)
		}
	}
	assert.Empty(t, Default().Ingress.HostDomains, "no domain is granted until the operator's config grants one")
}
