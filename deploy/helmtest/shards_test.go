package helmtest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// renderRelease renders the chart as release name in the test namespace with a values file.
func renderRelease(t *testing.T, name, values string) []Object {
	t.Helper()
	needHelm(t)
	file := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(file, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	objs, _, err := Template(testContext(t), name, namespace, "-f", file)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// releaseConfig is the operator config a release renders, as the operator loads it.
func releaseConfig(t *testing.T, objs []Object, release string) *config.Config {
	t.Helper()
	cm, ok := Find(objs, "ConfigMap", namespace, release+"-config")
	if !ok {
		t.Fatalf("no ConfigMap %s-config", release)
	}
	file, err := ConfigFile(cm)
	if err != nil {
		t.Fatal(err)
	}
	cfg := loadConfig(t, file)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("release %s: the operator refuses its config: %v", release, err)
	}
	return cfg
}

// collisions are the objects both renders hold under one kind, namespace and name, but the CRDs:
// Helm installs crds/ with the first release and skips those present with the next.
func collisions(t *testing.T, a, b []Object) []string {
	t.Helper()
	var out []string
	for _, o := range b {
		if _, ok := Find(a, o.Kind, o.Namespace, o.Name); !ok {
			continue
		}
		if o.Kind == "CustomResourceDefinition" {
			continue
		}
		out = append(out, o.ID())
	}
	sort.Strings(out)
	return out
}

// docs/operations.md installs one release per shard in one namespace: by label selector, or by
// namespaces. The two render nothing under the same name (the admission policy, cluster-wide and
// one per cluster, comes with the first only), their operators load their configs, own the shard
// they were given, and compete for Leases of their own.
func TestTwoShardReleasesInOneNamespaceDoNotCollide(t *testing.T) {
	for name, shards := range map[string][2]string{
		"by selector": {"config:\n  shardSelector: flinkfsm.io/shard=a\n",
			"config:\n  shardSelector: team in (x,y)\nadmissionPolicy:\n  enabled: false\n"},
		"by namespaces": {"rbac:\n  scope: namespaced\n  watchNamespaces: [team-a]\n",
			"rbac:\n  scope: namespaced\n  watchNamespaces: [team-b, team-c]\nadmissionPolicy:\n  enabled: false\n"},
	} {
		t.Run(name, func(t *testing.T) {
			a, b := renderRelease(t, "flinkfsm-a", shards[0]), renderRelease(t, "flinkfsm-b", shards[1])
			if c := collisions(t, a, b); len(c) > 0 {
				t.Errorf("two releases in one namespace both render %v", c)
			}
			cfgA, cfgB := releaseConfig(t, a, "flinkfsm-a"), releaseConfig(t, b, "flinkfsm-b")
			if cfgA.ShardIdentity() == "" || cfgA.ShardIdentity() == cfgB.ShardIdentity() {
				t.Errorf("shards %q and %q: want two different shards", cfgA.ShardIdentity(), cfgB.ShardIdentity())
			}
			la, lb := cfgA.LeaseName(), cfgB.LeaseName()
			if la == lb || la == config.DefaultLeaseName || lb == config.DefaultLeaseName {
				t.Errorf("the releases' Leases are %q and %q: want one of its own each", la, lb)
			}
			if _, ok := Find(a, "ValidatingAdmissionPolicy", "", "flinkfsm-pod-security"); !ok {
				t.Errorf("the first release does not install the admission policy, which binds every namespace for both")
			}
		})
	}
	// The value that makes the second release possible: with the admission policy, both would own it.
	a := renderRelease(t, "flinkfsm-a", "config:\n  shardSelector: flinkfsm.io/shard=a\n")
	b := renderRelease(t, "flinkfsm-b", "config:\n  shardSelector: flinkfsm.io/shard=b\n")
	want := []string{"ValidatingAdmissionPolicy flinkfsm-pod-security", "ValidatingAdmissionPolicyBinding flinkfsm-pod-security"}
	if got := collisions(t, a, b); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("two releases with the admission policy both render %v, want exactly %v (admissionPolicy.enabled=false on all but one)", got, want)
	}
}

// The default release owns every application under the Lease every operator used before shards:
// upgrading it changes nothing.
func TestTheDefaultReleaseKeepsItsLease(t *testing.T) {
	cfg := releaseConfig(t, render(t), release)
	if got := cfg.LeaseName(); got != config.DefaultLeaseName {
		t.Errorf("the default release's Lease is %q, want %q", got, config.DefaultLeaseName)
	}
	if cfg.ShardSelector != "" || cfg.LimitNamespace != "" {
		t.Errorf("the default release is a shard: selector %q, namespaces %q", cfg.ShardSelector, cfg.LimitNamespace)
	}
}
