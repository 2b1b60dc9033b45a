package helmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	flyteconfig "github.com/flyteorg/flytestdlib/config"
	"github.com/flyteorg/flytestdlib/config/viper"

	"github.com/flinkfsm/flinkfsm/integ/localcluster"
	"github.com/flinkfsm/flinkfsm/internal/repo"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// The release and namespace whose names match deploy/: `helm install flinkfsm` names everything
// "flinkfsm", as deploy/ does.
const (
	release   = "flinkfsm"
	namespace = "flinkfsm-system"
)

// needHelm skips the test when helm is not built yet, unless the Makefile requires the cluster
// binaries (FLINKFSM_REQUIRE_CLUSTER), in which case hack/helm.sh builds it.
func needHelm(t *testing.T) {
	t.Helper()
	built, path, err := HelmBuilt()
	if err != nil {
		t.Fatal(err)
	}
	if !built && os.Getenv(localcluster.RequireClusterEnv) == "" {
		t.Skipf("helm is not built (%s); `make helm` builds it, or set %s=1", path, localcluster.RequireClusterEnv)
	}
}

func needKubectl(t *testing.T) {
	t.Helper()
	if _, err := localcluster.LocateBinaries(); err != nil {
		if os.Getenv(localcluster.RequireClusterEnv) != "" {
			t.Fatalf("kubectl for kustomize: %v (run make k8s-binaries)", err)
		}
		t.Skipf("kubectl is not built: %v", err)
	}
}

func testContext(t *testing.T) context.Context {
	// The first call may build helm: minutes on 2 cores.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func render(t *testing.T, extra ...string) []Object {
	t.Helper()
	needHelm(t)
	objs, _, err := Template(testContext(t), release, namespace, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func renderFails(t *testing.T, wantInError string, extra ...string) {
	t.Helper()
	needHelm(t)
	_, _, err := Template(testContext(t), release, namespace, extra...)
	if err == nil || !strings.Contains(err.Error(), wantInError) {
		t.Errorf("helm template %q: err = %v, want one saying %q", extra, err, wantInError)
	}
}

func repoPath(t *testing.T, rel string) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, rel)
}

// diff compares two parsed YAML values and names every field where they differ, under path.
func diff(path string, want, got any) []string {
	if emptyList(want) && emptyList(got) {
		// A config list left out (null) and an empty one mean the same to the operator.
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: deploy/ has %s, the chart %s", path, show(want), show(got))}
		}
		var out []string
		for _, k := range sortedKeys(w, g) {
			wv, inW := w[k]
			gv, inG := g[k]
			p := join(path, k)
			switch {
			case !inG:
				out = append(out, fmt.Sprintf("%s: deploy/ has %s, the chart has nothing", p, show(wv)))
			case !inW:
				out = append(out, fmt.Sprintf("%s: the chart has %s, deploy/ has nothing", p, show(gv)))
			default:
				out = append(out, diff(p, wv, gv)...)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: deploy/ has %s, the chart %s", path, show(want), show(got))}
		}
		var out []string
		for i := range w {
			out = append(out, diff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{fmt.Sprintf("%s: deploy/ has %s, the chart %s", path, show(want), show(got))}
		}
		return nil
	}
}

func emptyList(v any) bool {
	l, ok := v.([]any)
	return v == nil || (ok && len(l) == 0)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if s := string(b); len(s) > 200 {
		return s[:200] + "…"
	}
	return string(b)
}

func sortedKeys(maps ...map[string]any) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range maps {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// get walks a parsed object: get(obj, "spec", "template", "metadata").
func get(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// without is a deep copy of obj with the fields at paths removed: what the chart may add or name
// differently (labels, Helm's annotations, selectors) and is checked apart.
func without(obj map[string]any, paths ...[]string) map[string]any {
	var c map[string]any
	b, _ := json.Marshal(obj)
	_ = json.Unmarshal(b, &c)
	for _, p := range paths {
		parent, _ := get(c, p[:len(p)-1]...).(map[string]any)
		delete(parent, p[len(p)-1])
	}
	return c
}

// grants expands RBAC rules into "group resource verb" lines, so that rules compare whatever their
// order or grouping.
func grants(obj Object) map[string]bool {
	out := map[string]bool{}
	rules, _ := obj.Content["rules"].([]any)
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		for _, g := range strs(rule["apiGroups"]) {
			for _, res := range strs(rule["resources"]) {
				for _, v := range strs(rule["verbs"]) {
					out[fmt.Sprintf("%q %s %s", g, res, v)] = true
				}
			}
		}
		for _, k := range []string{"resourceNames", "nonResourceURLs"} {
			if _, ok := rule[k]; ok {
				out[k+" "+show(rule[k])] = true
			}
		}
	}
	return out
}

func strs(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// compareRules names the grants one role has and the other lacks.
func compareRules(id string, want, got Object) []string {
	w, g := grants(want), grants(got)
	var missing, extra []string
	for k := range w {
		if !g[k] {
			missing = append(missing, k)
		}
	}
	for k := range g {
		if !w[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	var out []string
	if len(missing) > 0 {
		out = append(out, fmt.Sprintf("%s: rules: the chart lacks %v", id, missing))
	}
	if len(extra) > 0 {
		out = append(out, fmt.Sprintf("%s: rules: the chart adds %v", id, extra))
	}
	return out
}

// loadConfig reads an operator config file the way `flinkfsm run --config` does (strictly: an
// unknown key fails) and returns the resulting section, defaults filled in.
func loadConfig(t *testing.T, content string) *config.Config {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	root := flyteconfig.NewRootSection()
	section, err := root.RegisterSection(config.SectionKey, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	accessor := viper.NewAccessor(flyteconfig.Options{StrictMode: true, SearchPaths: []string{file}, RootSection: root})
	if err := accessor.UpdateConfig(context.Background()); err != nil {
		t.Fatalf("the operator would not start with this config: %v\n%s", err, content)
	}
	return section.GetConfig().(*config.Config)
}

// asMap is a config as its JSON form, for diff.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// keyPaths lists every leaf key of a JSON object (an empty object is a leaf) as a dotted path.
func keyPaths(prefix string, m map[string]any, out map[string]bool) {
	for k, v := range m {
		p := join(prefix, k)
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			keyPaths(p, sub, out)
			continue
		}
		out[p] = true
	}
}

// collapseCEL collapses the whitespace of every expression and messageExpression under v.
func collapseCEL(v map[string]any) map[string]any {
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, val := range x {
				if s, ok := val.(string); ok && (k == "expression" || k == "messageExpression") {
					x[k] = strings.Join(strings.Fields(s), " ")
					continue
				}
				walk(val)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return v
}
