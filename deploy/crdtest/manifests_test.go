package crdtest

import (
	"context"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	flyteconfig "github.com/flyteorg/flytestdlib/config"
	"github.com/flyteorg/flytestdlib/config/viper"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

const operatorNamespace = "flinkfsm-system"

// operatorPermissions is everything the operator may do, and so everything deploy/rbac.yaml grants:
// a code change that needs another verb or resource fails here first, and so does a grant nobody
// needs any more.
var operatorPermissions = []struct {
	group, resource string
	verbs           []string
}{
	{"flink.k8s.io", "flinkapplications", []string{"get", "list", "watch", "update", "patch"}},
	// The Namespace's pod policy annotations, read at each deploy (podPolicyError).
	{"", "namespaces", []string{"get"}},
	{"flink.k8s.io", "flinkapplications/status", []string{"get", "update", "patch"}},
	{"flink.k8s.io", "flinkapplications/finalizers", []string{"update"}},
	{"flink.k8s.io", "flinksessionclusters", []string{"get", "list", "watch", "update", "patch"}},
	{"flink.k8s.io", "flinksessionclusters/status", []string{"get", "update", "patch"}},
	{"flink.k8s.io", "flinksessionclusters/finalizers", []string{"update"}},
	{"flink.k8s.io", "flinksessionjobs", []string{"get", "list", "watch", "update", "patch"}},
	{"flink.k8s.io", "flinksessionjobs/status", []string{"get", "update", "patch"}},
	{"flink.k8s.io", "flinksessionjobs/finalizers", []string{"update"}},
	// FlinkSnapshots: created for the savepoints the operator takes, deleted by retention, their
	// finalizer patched away once disposed of.
	{"flink.k8s.io", "flinksnapshots", []string{"get", "list", "watch", "create", "patch", "delete"}},
	{"flink.k8s.io", "flinksnapshots/status", []string{"update", "patch"}},
	{"apps", "deployments", []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{"", "services", []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{"", "pods", []string{"get", "list", "watch"}},
	// The Flink UI's Ingress: read through an informer, created, patched and deleted.
	{"networking.k8s.io", "ingresses", []string{"list", "watch", "create", "patch", "delete"}},
	// A cluster's logging configuration: read through an informer, created with it and deleted with it;
	// Flink's HA ConfigMaps: read through an informer and deleted once their cluster is gone. The
	// checkpoint book's pages: read through an informer, created, patched, and deleted when empty.
	{"", "configmaps", []string{"list", "watch", "create", "patch", "delete"}},
	{"", "events", []string{"create", "patch", "update"}},
	{"events.k8s.io", "events", []string{"create", "patch", "update"}},
}

// manifest is one YAML document of deploy/.
type manifest struct {
	file string
	raw  []byte
	kind string
	name string
}

// deployManifests parses every document of deploy/*.yaml, failing on any that is not valid YAML or
// lacks apiVersion, kind and a name.
func deployManifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob(repoFile(t, "deploy/*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no deploy/*.yaml: %v", err)
	}
	var out []manifest
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range documents(data) {
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s document %d: %v", filepath.Base(f), i, err)
			}
			if head.APIVersion == "" || head.Kind == "" {
				t.Fatalf("%s document %d has no apiVersion or kind", filepath.Base(f), i)
			}
			if head.Metadata.Name == "" && head.Kind != "Kustomization" {
				t.Fatalf("%s document %d (%s) has no metadata.name", filepath.Base(f), i, head.Kind)
			}
			out = append(out, manifest{file: filepath.Base(f), raw: doc, kind: head.Kind, name: head.Metadata.Name})
		}
	}
	return out
}

// decodeOne strictly decodes the only manifest of the kind into obj: a misspelt field fails here
// rather than being dropped by the API server.
func decodeOne(t *testing.T, kind string, obj interface{}) {
	t.Helper()
	var found []manifest
	for _, m := range deployManifests(t) {
		if m.kind == kind {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one %s in deploy/*.yaml, found %d", kind, len(found))
	}
	if err := yaml.UnmarshalStrict(found[0].raw, obj); err != nil {
		t.Fatalf("%s %s in %s: %v", kind, found[0].name, found[0].file, err)
	}
}

func TestDeployManifestsDecodeStrictly(t *testing.T) {
	typed := map[string]func() interface{}{
		"Kustomization":       func() interface{} { return &kustomization{} },
		"Namespace":           func() interface{} { return &corev1.Namespace{} },
		"ServiceAccount":      func() interface{} { return &corev1.ServiceAccount{} },
		"ClusterRole":         func() interface{} { return &rbacv1.ClusterRole{} },
		"ClusterRoleBinding":  func() interface{} { return &rbacv1.ClusterRoleBinding{} },
		"ConfigMap":           func() interface{} { return &corev1.ConfigMap{} },
		"Deployment":          func() interface{} { return &appsv1.Deployment{} },
		"Role":                func() interface{} { return &rbacv1.Role{} },
		"RoleBinding":         func() interface{} { return &rbacv1.RoleBinding{} },
		"PodDisruptionBudget": func() interface{} { return &policyv1.PodDisruptionBudget{} },
		"ValidatingAdmissionPolicy": func() interface{} {
			return &admissionregistrationv1.ValidatingAdmissionPolicy{}
		},
		"ValidatingAdmissionPolicyBinding": func() interface{} {
			return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		},
	}
	for _, m := range deployManifests(t) {
		newObj, ok := typed[m.kind]
		if !ok {
			t.Errorf("%s: %s %s is a kind this test does not check; add it to the table", m.file, m.kind, m.name)
			continue
		}
		if err := yaml.UnmarshalStrict(m.raw, newObj()); err != nil {
			t.Errorf("%s: %s %s: %v", m.file, m.kind, m.name, err)
		}
	}
}

// kustomization is the part of a kustomization.yaml that deploy/ uses.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
}

func TestKustomizationInstallsEverything(t *testing.T) {
	var k kustomization
	decodeOne(t, "Kustomization", &k)
	// No kustomize namespace: it would be set on the cluster-scoped admission policy too. Where the
	// namespaced objects land is checked by TestKustomizeBuild.
	if k.Namespace != "" {
		t.Errorf("kustomization namespace = %q, want none", k.Namespace)
	}
	for _, r := range k.Resources {
		if _, err := os.Stat(repoFile(t, path.Join("deploy", r))); err != nil {
			t.Errorf("kustomization lists %s: %v", r, err)
		}
	}
	var want []string
	for _, crd := range CRDPaths {
		want = append(want, strings.TrimPrefix(crd, "deploy/"))
	}
	files, _ := filepath.Glob(repoFile(t, "deploy/*.yaml"))
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" {
			want = append(want, base)
		}
	}
	for _, w := range want {
		if !slices.Contains(k.Resources, w) {
			t.Errorf("kustomization does not list %s, so kubectl apply -k deploy/ leaves it out", w)
		}
	}
	if i, j := slices.Index(k.Resources, "namespace.yaml"), slices.Index(k.Resources, "operator.yaml"); i < 0 || j < i {
		t.Errorf("namespace.yaml should come before operator.yaml: %v", k.Resources)
	}
}

func TestClusterRoleGrantsExactlyWhatTheOperatorUses(t *testing.T) {
	var role rbacv1.ClusterRole
	decodeOne(t, "ClusterRole", &role)

	granted := map[string]bool{}
	for i, rule := range role.Rules {
		if len(rule.ResourceNames) > 0 || len(rule.NonResourceURLs) > 0 {
			t.Errorf("rule %d: resourceNames and nonResourceURLs are not expected", i)
		}
		for _, g := range rule.APIGroups {
			for _, r := range rule.Resources {
				for _, v := range rule.Verbs {
					if g == "*" || r == "*" || v == "*" {
						t.Errorf("rule %d grants a wildcard (%q %q %q)", i, g, r, v)
					}
					granted[g+" "+r+" "+v] = true
				}
			}
		}
	}
	wanted := map[string]bool{}
	for _, p := range operatorPermissions {
		for _, v := range p.verbs {
			wanted[p.group+" "+p.resource+" "+v] = true
		}
	}
	var missing, extra []string
	for w := range wanted {
		if !granted[w] {
			missing = append(missing, w)
		}
	}
	for g := range granted {
		if !wanted[g] {
			extra = append(extra, g)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("ClusterRole %s lacks (group resource verb): %q", role.Name, missing)
	}
	if len(extra) > 0 {
		t.Errorf("ClusterRole %s grants more than the operator uses: %q", role.Name, extra)
	}
}

func TestClusterRoleIsBoundToTheOperatorsServiceAccount(t *testing.T) {
	var (
		role       rbacv1.ClusterRole
		binding    rbacv1.ClusterRoleBinding
		account    corev1.ServiceAccount
		deployment appsv1.Deployment
	)
	decodeOne(t, "ClusterRole", &role)
	decodeOne(t, "ClusterRoleBinding", &binding)
	decodeOne(t, "ServiceAccount", &account)
	decodeOne(t, "Deployment", &deployment)

	if binding.RoleRef.Kind != "ClusterRole" || binding.RoleRef.Name != role.Name || binding.RoleRef.APIGroup != rbacv1.GroupName {
		t.Errorf("binding refers to %+v, want ClusterRole %s", binding.RoleRef, role.Name)
	}
	want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: account.Name, Namespace: operatorNamespace}
	if len(binding.Subjects) != 1 || binding.Subjects[0] != want {
		t.Errorf("binding subjects = %+v, want only %+v", binding.Subjects, want)
	}
	if got := deployment.Spec.Template.Spec.ServiceAccountName; got != account.Name {
		t.Errorf("operator runs as service account %q, the role is bound to %q", got, account.Name)
	}
}

func TestOperatorDeployment(t *testing.T) {
	var (
		d  appsv1.Deployment
		cm corev1.ConfigMap
	)
	decodeOne(t, "Deployment", &d)
	decodeOne(t, "ConfigMap", &cm)
	pod := d.Spec.Template.Spec

	// Two replicas elect one acting operator; a rolling update never leaves none.
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", d.Spec.Replicas)
	}
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Errorf("strategy = %q, want RollingUpdate", d.Spec.Strategy.Type)
	}
	if cfg := loadOperatorConfig(t, cm.Data["config.yaml"]); !cfg.LeaderElection.Enabled {
		t.Errorf("two replicas without leader election would both act")
	}
	if d.Spec.Selector == nil || !selects(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("selector %v does not select the pod labels %v", d.Spec.Selector, d.Spec.Template.Labels)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	if want := []string{"run", "--config", "/etc/flinkfsm/config.yaml"}; !slices.Equal(c.Args, want) {
		t.Errorf("args = %q, want %q", c.Args, want)
	}

	// The --config file is the ConfigMap's key, mounted where the args say.
	configFile := c.Args[slices.Index(c.Args, "--config")+1]
	mounted := false
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == cm.Name &&
				path.Join(m.MountPath, path.Base(configFile)) == configFile && m.ReadOnly {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("%s is not ConfigMap %s mounted read-only", configFile, cm.Name)
	}
	if _, ok := cm.Data[path.Base(configFile)]; !ok {
		t.Errorf("ConfigMap %s has no key %s", cm.Name, path.Base(configFile))
	}

	// The metrics port serves /healthz, and is the port the config makes the operator listen on.
	cfg := loadOperatorConfig(t, cm.Data[path.Base(configFile)])
	var metricsPort int32
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			metricsPort = p.ContainerPort
		}
	}
	if metricsPort != 10254 || !strings.HasSuffix(cfg.MetricsAddress, ":10254") {
		t.Errorf("metrics port %d, config metricsAddress %q: want both 10254", metricsPort, cfg.MetricsAddress)
	}
	for name, want := range map[string]struct {
		probe *corev1.Probe
		path  string
	}{"startup": {c.StartupProbe, "/readyz"}, "liveness": {c.LivenessProbe, "/healthz"}, "readiness": {c.ReadinessProbe, "/readyz"}} {
		probe := want.probe
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want.path ||
			(probe.HTTPGet.Port.String() != "metrics" && probe.HTTPGet.Port.IntValue() != int(metricsPort)) {
			t.Errorf("%s probe = %+v, want GET %s on the metrics port", name, probe, want.path)
		}
	}

	for name, want := range map[string]struct {
		list corev1.ResourceList
		key  corev1.ResourceName
		qty  string
	}{
		"cpu request":    {c.Resources.Requests, corev1.ResourceCPU, "100m"},
		"memory request": {c.Resources.Requests, corev1.ResourceMemory, "128Mi"},
		"memory limit":   {c.Resources.Limits, corev1.ResourceMemory, "512Mi"},
	} {
		if got, ok := want.list[want.key]; !ok || got.Cmp(resource.MustParse(want.qty)) != 0 {
			t.Errorf("%s = %v, want %s", name, got.String(), want.qty)
		}
	}

	// Restricted Pod Security Standard.
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("container has no securityContext")
	}
	nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) ||
		(pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot)
	seccomp := (sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault) ||
		(pod.SecurityContext != nil && pod.SecurityContext.SeccompProfile != nil &&
			pod.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault)
	for what, ok := range map[string]bool{
		"runAsNonRoot":                   nonRoot,
		"seccompProfile RuntimeDefault":  seccomp,
		"readOnlyRootFilesystem":         sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem,
		"allowPrivilegeEscalation false": sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation,
		"capabilities drop ALL":          sc.Capabilities != nil && slices.Contains(sc.Capabilities.Drop, "ALL") && len(sc.Capabilities.Add) == 0,
	} {
		if !ok {
			t.Errorf("container security: want %s", what)
		}
	}
}

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// loadOperatorConfig reads the ConfigMap's file the way `flinkfsm run --config` does, strictly, so
// a key that is not a json name of config.Config fails.
func loadOperatorConfig(t *testing.T, content string) *config.Config {
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
		t.Fatalf("the operator would not start with this config: %v", err)
	}
	return section.GetConfig().(*config.Config)
}

func TestOperatorConfig(t *testing.T) {
	var cm corev1.ConfigMap
	decodeOne(t, "ConfigMap", &cm)
	cfg := loadOperatorConfig(t, cm.Data["config.yaml"])
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	want := config.Default()
	want.LeaderElection.Enabled = true
	want.FlinkURLMode = config.URLModeServiceDNS
	want.MetricsAddress = ":10254"
	want.StatusPollInterval = flyteconfig.Duration{Duration: 10 * time.Second}
	// deploy/ installs the admission policy beside the operator.
	want.AdmissionPolicyEnforced = true
	// The pod's emptyDir, which the operator cleans at start.
	want.Jars.Dir = "/tmp"
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config = %+v\nwant     %+v (the defaults for every key the ConfigMap leaves out)", *cfg, *want)
	}
}

// With kubectl at hand, build deploy/ as `kubectl apply -k` would and check where everything lands.
func TestKustomizeBuild(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, kubectl, "kustomize", repoFile(t, "deploy")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize deploy/: %v", err)
	}
	clusterScoped := map[string]bool{"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true,
		"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true}
	var kinds []string
	for _, doc := range documents(out) {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name, Namespace string
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, obj.Kind)
		if ns := obj.Metadata.Namespace; clusterScoped[obj.Kind] && ns != "" {
			t.Errorf("%s %s is cluster-scoped but has namespace %q", obj.Kind, obj.Metadata.Name, ns)
		} else if !clusterScoped[obj.Kind] && ns != operatorNamespace {
			t.Errorf("%s %s lands in namespace %q, want %s", obj.Kind, obj.Metadata.Name, ns, operatorNamespace)
		}
	}
	sort.Strings(kinds)
	want := []string{"ClusterRole", "ClusterRoleBinding", "ConfigMap", "CustomResourceDefinition", "CustomResourceDefinition",
		"CustomResourceDefinition", "CustomResourceDefinition", "Deployment", "Namespace", "PodDisruptionBudget", "Role", "RoleBinding", "ServiceAccount",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}
	if !slices.Equal(kinds, want) {
		t.Errorf("kubectl kustomize deploy/ yields %v, want %v", kinds, want)
	}
}
