package main

import "testing"

func TestRulesMatchTheirPackagesFirstToLast(t *testing.T) {
	for _, c := range []struct{ pkg, rule string }{
		{"pkg/controller/guardian", "pkg/controller/guardian"},
		{"pkg/controller/flink", "pkg/controller/flink"},
		{"pkg/controller/flink/client", "pkg/controller/flink/client"},
		{"pkg/apis/app/v1beta1", "pkg/apis/..."},
		{"pkg/operator", "pkg/..."},
	} {
		if r := ruleOf(c.pkg); r == nil || r.pattern != c.rule {
			t.Errorf("%s: got rule %v, want %s", c.pkg, r, c.rule)
		}
	}
	if ruleOf("cmd/flinkfsm") != nil {
		t.Error("commands are wiring: no rule")
	}
	r := ruleOf("pkg/controller/ledger")
	if !allowed(r, "pkg/apis/app/v1beta1") || allowed(r, "pkg/controller/flinkapplication") {
		t.Error("the ledger may use the API types and not a kind")
	}
}
