package main

import (
	"strings"
	"testing"
)

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

func TestAPackageOfMoreThanOneConcernsWorthIsNamed(t *testing.T) {
	lines := func(n int) func(string) (int, error) { return func(string) (int, error) { return n, nil } }
	many := make([]string, maxFiles+1)
	for i := range many {
		many[i] = "f.go"
	}
	big, err := oversized([]packageFiles{
		{path: "pkg/controller/a", files: many},
		{path: "pkg/controller/b", files: []string{"a.go", "zz_generated.deepcopy.go"}},
		{path: "pkg/client/clientset", files: many},
	}, lines(100))
	if err != nil || len(big) != 1 || !strings.Contains(big[0], "pkg/controller/a holds 31 files") {
		t.Errorf("got %v, %v", big, err)
	}
	big, _ = oversized([]packageFiles{{path: "pkg/controller/b", files: []string{"a.go", "b.go"}}}, lines(maxLines/2+1))
	if len(big) != 1 {
		t.Errorf("a package over %d lines is named: %v", maxLines, big)
	}
}
