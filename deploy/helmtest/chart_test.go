package helmtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	flyteconfig "github.com/flyteorg/flytestdlib/config"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// The chart ships copies of the generated CRDs and of the admission policy (Helm reads only files
// inside the chart); hack/sync-chart.sh makes them, and they must not drift.
func TestChartCopiesAreTheDeployFiles(t *testing.T) {
	crds, _ := filepath.Glob(repoPath(t, "deploy/crd/*.yaml"))
	copies, _ := filepath.Glob(repoPath(t, ChartDir+"/crds/*.yaml"))
	if len(crds) == 0 {
		t.Fatal("no deploy/crd/*.yaml")
	}
	var names, copyNames []string
	for _, f := range crds {
		names = append(names, filepath.Base(f))
	}
	for _, f := range copies {
		copyNames = append(copyNames, filepath.Base(f))
	}
	if !reflect.DeepEqual(names, copyNames) {
		t.Errorf("the chart's crds/ holds %v, deploy/crd %v: run hack/sync-chart.sh (make generate)", copyNames, names)
	}
	pairs := map[string]string{"deploy/policy.yaml": ChartDir + "/files/policy.yaml"}
	for _, n := range names {
		pairs["deploy/crd/"+n] = ChartDir + "/crds/" + n
	}
	for src, cp := range pairs {
		a, errA := os.ReadFile(repoPath(t, src))
		b, errB := os.ReadFile(repoPath(t, cp))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s is not a copy of %s: run hack/sync-chart.sh (make generate)", cp, src)
		}
	}
}

// values.yaml's config has every key of the operator's config, with the names of
// pkg/controller/config and the values deploy/config.yaml gives (its defaults where it says nothing).
func TestValuesMirrorEveryConfigKey(t *testing.T) {
	data, err := os.ReadFile(repoPath(t, ChartDir+"/values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Config map[string]any `json:"config"`
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	want, have := map[string]bool{}, map[string]bool{}
	keyPaths("", asMap(t, config.Default()), want)
	keyPaths("", values.Config, have)
	var missing, unknown []string
	for k := range want {
		if !have[k] {
			missing = append(missing, k)
		}
	}
	for k := range have {
		if !want[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(unknown)
	if len(missing) > 0 {
		t.Errorf("values.yaml config lacks operator config keys %v", missing)
	}
	if len(unknown) > 0 {
		t.Errorf("values.yaml config has keys the operator does not know: %v", unknown)
	}

	section, err := yaml.Marshal(map[string]any{"operator": values.Config})
	if err != nil {
		t.Fatal(err)
	}
	chart := loadConfig(t, string(section))
	deployCM, err := ReadManifests("deploy/config.yaml")
	if err != nil || len(deployCM) != 1 {
		t.Fatalf("deploy/config.yaml: %v", err)
	}
	file, err := ConfigFile(deployCM[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diff("config", asMap(t, loadConfig(t, file)), asMap(t, chart)) {
		t.Errorf("values.yaml vs deploy/config.yaml: %s", d)
	}
}

// With default values (release flinkfsm in flinkfsm-system), the chart installs what
// `kubectl apply -k deploy/` does, the Namespace aside (helm install --create-namespace makes it).
func TestChartRendersTheKustomizeOperator(t *testing.T) {
	needKubectl(t)
	chart := render(t)
	kust, err := Kustomize(testContext(t), "deploy")
	if err != nil {
		t.Fatal(err)
	}
	var kustNoNS []Object
	for _, o := range kust {
		if o.Kind != "Namespace" {
			kustNoNS = append(kustNoNS, o)
		}
	}
	for _, problem := range compareObjects(t, kustNoNS, chart) {
		t.Error(problem)
	}
	checkSelectors(t, chart)
}

// compareObjects checks that both sets hold the same objects, and compares each pair by what
// matters for its kind; a problem names the object and the field.
func compareObjects(t *testing.T, want, got []Object) []string {
	t.Helper()
	var out []string
	for _, w := range want {
		g, ok := Find(got, w.Kind, w.Namespace, w.Name)
		if !ok {
			out = append(out, w.ID()+": deploy/ has it, the chart does not")
			continue
		}
		out = append(out, compareObject(t, w, g)...)
	}
	for _, g := range got {
		if _, ok := Find(want, g.Kind, g.Namespace, g.Name); !ok {
			out = append(out, g.ID()+": the chart has it, deploy/ does not")
		}
	}
	return out
}

var (
	labels      = []string{"metadata", "labels"}
	annotations = []string{"metadata", "annotations"}
)

func compareObject(t *testing.T, want, got Object) []string {
	t.Helper()
	id := want.ID()
	prefix := func(ds []string) []string {
		for i := range ds {
			ds[i] = id + ": " + ds[i]
		}
		return ds
	}
	switch want.Kind {
	case "ClusterRole", "Role":
		return compareRules(id, want, got)
	case "ConfigMap":
		wf, err1 := ConfigFile(want)
		gf, err2 := ConfigFile(got)
		if err1 != nil || err2 != nil {
			return []string{id + ": no data.config.yaml"}
		}
		// Compared as the operator reads them: every key, the defaults filled in.
		out := prefix(diff("data.config.yaml: operator", asMap(t, loadConfig(t, wf)), asMap(t, loadConfig(t, gf))))
		return append(out, prefix(diff("", without(want.Content, labels, annotations, []string{"data"}),
			without(got.Content, labels, annotations, []string{"data"})))...)
	case "Deployment":
		// The chart's selector adds app.kubernetes.io/instance, and its pod template a config
		// checksum; checkSelectors checks that the selectors still select the pods.
		skip := [][]string{labels, annotations, {"spec", "selector"}, {"spec", "template", "metadata"}}
		return prefix(diff("", without(want.Content, skip...), without(got.Content, skip...)))
	case "PodDisruptionBudget":
		skip := [][]string{labels, annotations, {"spec", "selector"}}
		return prefix(diff("", without(want.Content, skip...), without(got.Content, skip...)))
	case "ValidatingAdmissionPolicy":
		// kustomize re-folds the multi-line CEL of deploy/policy.yaml, adding a blank line (which
		// CEL ignores): expressions compare with their whitespace collapsed.
		return prefix(diff("", collapseCEL(without(want.Content, labels, annotations)), collapseCEL(without(got.Content, labels, annotations))))
	default:
		// CRDs, bindings, the service account: everything but labels.
		return prefix(diff("", without(want.Content, labels, annotations), without(got.Content, labels, annotations)))
	}
}

// checkSelectors: the Deployment selects its own pods and the PodDisruptionBudget selects them.
func checkSelectors(t *testing.T, objs []Object) {
	t.Helper()
	d, ok := Find(objs, "Deployment", "*", release)
	if !ok {
		t.Fatal("the chart renders no Deployment " + release)
	}
	podLabels, _ := get(d.Content, "spec", "template", "metadata", "labels").(map[string]any)
	for _, sel := range []struct {
		kind string
		path []string
	}{{"Deployment", []string{"spec", "selector", "matchLabels"}}, {"PodDisruptionBudget", []string{"spec", "selector", "matchLabels"}}} {
		o, ok := Find(objs, sel.kind, "*", release)
		if !ok {
			continue
		}
		match, _ := get(o.Content, sel.path...).(map[string]any)
		if len(match) == 0 {
			t.Errorf("%s: %s is empty", o.ID(), strings.Join(sel.path, "."))
		}
		for k, v := range match {
			if podLabels[k] != v {
				t.Errorf("%s: %s %s=%v does not select the operator's pods (labels %v)", o.ID(), strings.Join(sel.path, "."), k, v, podLabels)
			}
		}
	}
}

// rbac.scope namespaced renders deploy/namespaced/rbac.yaml for each watched namespace, and the
// operator watches those namespaces only.
func TestNamespacedChartMatchesDeployNamespaced(t *testing.T) {
	chart := render(t, "--set", "rbac.scope=namespaced", "--set", "rbac.watchNamespaces={flink-jobs,flink-more}")
	want, err := ReadManifests("deploy/namespaced/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// deploy/namespaced/rbac.yaml is a template for one namespace ("copy once per watched namespace").
	for _, o := range want {
		if o.Namespace == "flink-jobs" {
			more := Object{Kind: o.Kind, Namespace: "flink-more", Name: o.Name, Content: without(o.Content)}
			more.Content["metadata"].(map[string]any)["namespace"] = "flink-more"
			want = append(want, more)
		}
	}
	var rbac []Object
	for _, o := range chart {
		switch o.Kind {
		case "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			if !strings.HasSuffix(o.Name, "-leader-election") {
				rbac = append(rbac, o)
			}
		}
	}
	for _, problem := range compareObjects(t, want, rbac) {
		t.Error(problem)
	}
	cm, ok := Find(chart, "ConfigMap", namespace, "flinkfsm-config")
	if !ok {
		t.Fatal("no ConfigMap flinkfsm-config")
	}
	file, _ := ConfigFile(cm)
	if got := loadConfig(t, file).LimitNamespace; got != "flink-jobs,flink-more" {
		t.Errorf("namespaced install watches limitNamespace %q, want the Roles' namespaces flink-jobs,flink-more", got)
	}
}

// flinkUrlMode APIServerProxy adds deploy/proxy/rbac.yaml's grant; the default install has none.
func TestProxyChartMatchesDeployProxy(t *testing.T) {
	want, err := ReadManifests("deploy/proxy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	chart := render(t, "--set", "config.flinkUrlMode=APIServerProxy")
	for _, w := range want {
		g, ok := Find(chart, w.Kind, w.Namespace, w.Name)
		if !ok {
			t.Errorf("%s: deploy/proxy has it, the chart with flinkUrlMode APIServerProxy does not", w.ID())
			continue
		}
		for _, problem := range compareObject(t, w, g) {
			t.Error(problem)
		}
	}
	for _, o := range render(t) {
		if _, ok := Find(want, o.Kind, o.Namespace, o.Name); ok {
			t.Errorf("%s: the default (ServiceDNS) install grants services/proxy", o.ID())
		}
	}
	// Namespaced: services/proxy in the watched namespaces' Roles, nowhere cluster-wide.
	ns := render(t, "--set", "config.flinkUrlMode=APIServerProxy", "--set", "rbac.scope=namespaced", "--set", "rbac.watchNamespaces={flink-jobs}")
	proxy := `"" services/proxy create`
	for _, o := range ns {
		if g := grants(o); g[proxy] && !(o.Kind == "Role" && o.Namespace == "flink-jobs") {
			t.Errorf("%s grants services/proxy in a namespaced install", o.ID())
		}
	}
	if r, ok := Find(ns, "Role", "flink-jobs", release); !ok || !grants(r)[proxy] {
		t.Errorf("the namespaced Role in flink-jobs does not grant services/proxy with flinkUrlMode APIServerProxy")
	}
}

// The alerts and the dashboard of deploy/monitoring come with the chart when asked for, exactly as
// deploy/monitoring has them.
func TestMonitoringToggles(t *testing.T) {
	for _, o := range render(t) {
		if o.Kind == "PrometheusRule" || strings.HasSuffix(o.Name, "-dashboard") {
			t.Errorf("the default install renders %s", o.ID())
		}
	}
	objs := render(t, "--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.prometheusRule.labels.release=prom",
		"--set", "metrics.grafanaDashboard.enabled=true")
	rule, ok := Find(objs, "PrometheusRule", namespace, release)
	if !ok {
		t.Fatal("metrics.prometheusRule.enabled renders no PrometheusRule")
	}
	if got := get(rule.Content, "metadata", "labels", "release"); got != "prom" {
		t.Errorf("PrometheusRule label release = %v, want prom", got)
	}
	source, err := os.ReadFile(repoPath(t, "deploy/monitoring/prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := yaml.Unmarshal(source, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(get(rule.Content, "spec"), want["spec"]) {
		t.Errorf("the chart's PrometheusRule spec differs from deploy/monitoring/prometheusrule.yaml's")
	}
	dash, ok := Find(objs, "ConfigMap", namespace, release+"-dashboard")
	if !ok {
		t.Fatal("metrics.grafanaDashboard.enabled renders no dashboard ConfigMap")
	}
	if got := get(dash.Content, "metadata", "labels", "grafana_dashboard"); got != "1" {
		t.Errorf("dashboard ConfigMap label grafana_dashboard = %v, want 1 (the Grafana sidecar's default)", got)
	}
	dashboardJSON, err := os.ReadFile(repoPath(t, "deploy/monitoring/grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := get(dash.Content, "data", "flinkfsm.json").(string); strings.TrimSpace(got) != strings.TrimSpace(string(dashboardJSON)) {
		t.Errorf("the chart's dashboard differs from deploy/monitoring/grafana-dashboard.json")
	}
}

func TestMetricsServiceAndServiceMonitorToggles(t *testing.T) {
	for _, o := range render(t) {
		if o.Kind == "Service" || o.Kind == "ServiceMonitor" {
			t.Errorf("the default install renders %s", o.ID())
		}
	}
	objs := render(t, "--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.serviceMonitor.labels.release=prom")
	svc, ok := Find(objs, "Service", namespace, release+"-metrics")
	if !ok {
		t.Fatal("the ServiceMonitor toggle renders no metrics Service to scrape")
	}
	sm, ok := Find(objs, "ServiceMonitor", namespace, release)
	if !ok {
		t.Fatal("metrics.serviceMonitor.enabled renders no ServiceMonitor")
	}
	if got := get(sm.Content, "metadata", "labels", "release"); got != "prom" {
		t.Errorf("ServiceMonitor label release = %v, want prom", got)
	}
	svcLabels, _ := get(svc.Content, "metadata", "labels").(map[string]any)
	match, _ := get(sm.Content, "spec", "selector", "matchLabels").(map[string]any)
	for k, v := range match {
		if svcLabels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%v, which the Service's labels %v lack", k, v, svcLabels)
		}
	}
	ports, _ := get(svc.Content, "spec", "ports").([]any)
	if len(ports) != 1 || get(ports[0].(map[string]any), "targetPort") != "metrics" {
		t.Errorf("Service ports = %v, want one to the container's metrics port", ports)
	}
	endpoints, _ := get(sm.Content, "spec", "endpoints").([]any)
	if len(endpoints) != 1 || get(endpoints[0].(map[string]any), "port") != "metrics" || get(endpoints[0].(map[string]any), "path") != "/metrics" {
		t.Errorf("ServiceMonitor endpoints = %v, want /metrics on port metrics", endpoints)
	}
	checkSelectors(t, objs)
	d, _ := Find(objs, "Deployment", namespace, release)
	podLabels, _ := get(d.Content, "spec", "template", "metadata", "labels").(map[string]any)
	sel, _ := get(svc.Content, "spec", "selector").(map[string]any)
	for k, v := range sel {
		if podLabels[k] != v {
			t.Errorf("the metrics Service selects %s=%v, the operator's pods have %v", k, v, podLabels)
		}
	}
}

// The values a platform team changes reach the objects, and the admission policy can be left out.
func TestValuesReachTheObjects(t *testing.T) {
	objs := render(t, "--set", "replicas=3", "--set", "image.tag=v1.2.3", "--set", "image.pullPolicy=IfNotPresent",
		"--set", "nodeSelector.pool=system", "--set", "tolerations[0].key=dedicated", "--set", "tolerations[0].operator=Exists",
		"--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=arch",
		"--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists",
		"--set", "resources.limits.memory=1Gi", "--set", "config.metricsAddress=:9090", "--set", "config.workers=32",
		"--set", "admissionPolicy.enabled=false", "--set", "podDisruptionBudget.enabled=false")
	d, ok := Find(objs, "Deployment", namespace, release)
	if !ok {
		t.Fatal("no Deployment")
	}
	pod := func(path ...string) any {
		return get(d.Content, append([]string{"spec", "template", "spec"}, path...)...)
	}
	containers, _ := pod("containers").([]any)
	c := containers[0].(map[string]any)
	ports, _ := c["ports"].([]any)
	for what, pair := range map[string][2]any{
		"replicas":               {get(d.Content, "spec", "replicas"), float64(3)},
		"image":                  {c["image"], "ghcr.io/flinkfsm/flinkfsm:v1.2.3"},
		"imagePullPolicy":        {c["imagePullPolicy"], "IfNotPresent"},
		"nodeSelector.pool":      {get(d.Content, "spec", "template", "spec", "nodeSelector", "pool"), "system"},
		"tolerations[0].key":     {pod("tolerations").([]any)[0].(map[string]any)["key"], "dedicated"},
		"memory limit":           {get(c, "resources", "limits", "memory"), "1Gi"},
		"metrics containerPort":  {ports[0].(map[string]any)["containerPort"], float64(9090)},
		"affinity present":       {pod("affinity") != nil, true},
		"POD_NAMESPACE from env": {get(c["env"].([]any)[0].(map[string]any), "name"), "POD_NAMESPACE"},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("Deployment %s = %v, want %v", what, pair[0], pair[1])
		}
	}
	cm, _ := Find(objs, "ConfigMap", namespace, "flinkfsm-config")
	file, _ := ConfigFile(cm)
	if cfg := loadConfig(t, file); cfg.Workers != 32 || cfg.MetricsAddress != ":9090" {
		t.Errorf("config workers %d metricsAddress %q, want 32 and :9090", cfg.Workers, cfg.MetricsAddress)
	}
	for _, o := range objs {
		switch o.Kind {
		case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "PodDisruptionBudget":
			t.Errorf("%s rendered although turned off", o.ID())
		}
	}
}

// Settings that cannot work fail at `helm install`, not in the operator.
func TestChartRefusesSettingsThatCannotWork(t *testing.T) {
	renderFails(t, "rbac.watchNamespaces", "--set", "rbac.scope=namespaced")
	renderFails(t, "value must be one of 'cluster', 'namespaced'", "--set", "rbac.scope=everywhere")
	renderFails(t, "config.leaderElection.enabled", "--set", "config.leaderElection.enabled=false")
	renderFails(t, "/config/metricsAddress", "--set", "config.metricsAddress=localhost")
	// values.schema.json: a misspelt key or a duration without its unit fails here, rather than
	// the operator at start (it refuses unknown keys) or quietly (a bare number is nanoseconds).
	renderFails(t, "additional properties 'wokers' not allowed", "--set", "config.wokers=3")
	renderFails(t, "/config/statusPollInterval", "--set", "config.statusPollInterval=10")
	renderFails(t, "/config/flinkUrlMode", "--set", "config.flinkUrlMode=Proxy")
	renderFails(t, "additional properties 'replica' not allowed", "--set", "replica=3")
	renderFails(t, `config.limitNamespace names "c", which rbac.watchNamespaces lacks`, "--set", "rbac.scope=namespaced",
		"--set", "rbac.watchNamespaces={a,b}", "--set", "config.limitNamespace=a\\,c")
	render(t, "--set", "rbac.scope=namespaced", "--set", "rbac.watchNamespaces={a,b}", "--set", "config.limitNamespace=b")
	// One replica may run without leader election.
	render(t, "--set", "config.leaderElection.enabled=false", "--set", "replicas=1")
}

// `helm lint` passes with the default values and the other modes.
func TestHelmLint(t *testing.T) {
	needHelm(t)
	for _, set := range [][]string{nil, {"--set", "rbac.scope=namespaced", "--set", "rbac.watchNamespaces={a,b}"},
		{"--set", "config.flinkUrlMode=APIServerProxy", "--set", "metrics.serviceMonitor.enabled=true"}} {
		out, err := Helm(testContext(t), append([]string{"lint", "--strict", ChartDir, "--namespace", namespace}, set...)...)
		if err != nil {
			t.Errorf("helm lint %v: %v\n%s", set, err, out)
		}
	}
}

// docs/operations.md's values table names every value of values.yaml, as `a.b.c`, or as `.c`
// after its parent's row (`config.jars.maxBytes` / `.timeout`).
func TestOperationsDocNamesEveryValue(t *testing.T) {
	doc, err := os.ReadFile(repoPath(t, "docs/operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(repoPath(t, ChartDir+"/values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	leaves := map[string]bool{}
	keyPaths("", values, leaves)
	for p := range leaves {
		// Probes, resources and security contexts are documented as a whole.
		parts := strings.Split(p, ".")
		switch parts[0] {
		case "startupProbe", "livenessProbe", "readinessProbe", "resources", "podSecurityContext", "securityContext":
			p = parts[0]
		}
		leaf := p[strings.LastIndex(p, ".")+1:]
		if !strings.Contains(string(doc), "`"+p+"`") && !strings.Contains(string(doc), "`."+leaf+"`") {
			t.Errorf("docs/operations.md does not name value %s", p)
		}
	}
}

// values.schema.json's config section names every config key, no other, with the JSON type its Go
// field decodes from.
func TestValuesSchemaFollowsTheConfig(t *testing.T) {
	data, err := os.ReadFile(repoPath(t, ChartDir+"/values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	cfg, _ := get(schema, "properties", "config").(map[string]any)
	checkSchema(t, "config", cfg, reflect.TypeOf(config.Config{}))
}

var durationType = reflect.TypeOf(flyteconfig.Duration{})

func checkSchema(t *testing.T, path string, s map[string]any, typ reflect.Type) {
	t.Helper()
	if s["additionalProperties"] != false {
		t.Errorf("values.schema.json %s: additionalProperties should be false, so that misspelt keys fail", path)
	}
	props, _ := s["properties"].(map[string]any)
	seen := map[string]bool{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		seen[name] = true
		p := path + "." + name
		prop, ok := props[name].(map[string]any)
		if !ok {
			t.Errorf("values.schema.json lacks %s", p)
			continue
		}
		var want string
		switch {
		case f.Type == durationType:
			want = "string"
		case f.Type.Kind() == reflect.Struct:
			checkSchema(t, p, prop, f.Type)
			continue
		case f.Type.Kind() == reflect.Bool:
			want = "boolean"
		case f.Type.Kind() == reflect.String:
			want = "string"
		case f.Type.Kind() >= reflect.Int && f.Type.Kind() <= reflect.Int64:
			want = "integer"
		case f.Type.Kind() == reflect.Float32 || f.Type.Kind() == reflect.Float64:
			want = "number"
		case f.Type.Kind() == reflect.Slice:
			want = "array"
		default:
			t.Errorf("%s: a %s field this test does not know", p, f.Type)
			continue
		}
		types := prop["type"]
		if l, ok := types.([]any); ok {
			types = l[0]
		}
		if types != want {
			t.Errorf("values.schema.json %s has type %v, want %s (Go %s)", p, prop["type"], want, f.Type)
		}
	}
	for name := range props {
		if !seen[name] {
			t.Errorf("values.schema.json has %s.%s, which the operator's config does not", path, name)
		}
	}
}

// Every object the chart renders, with every optional part turned on, decodes strictly into its
// Kubernetes type: a misspelt field in a template fails here, not silently at the API server.
func TestRenderedObjectsDecodeStrictly(t *testing.T) {
	typed := map[string]func() any{
		"CustomResourceDefinition":         func() any { return &apiextensionsv1.CustomResourceDefinition{} },
		"ServiceAccount":                   func() any { return &corev1.ServiceAccount{} },
		"ClusterRole":                      func() any { return &rbacv1.ClusterRole{} },
		"ClusterRoleBinding":               func() any { return &rbacv1.ClusterRoleBinding{} },
		"Role":                             func() any { return &rbacv1.Role{} },
		"RoleBinding":                      func() any { return &rbacv1.RoleBinding{} },
		"ConfigMap":                        func() any { return &corev1.ConfigMap{} },
		"Deployment":                       func() any { return &appsv1.Deployment{} },
		"PodDisruptionBudget":              func() any { return &policyv1.PodDisruptionBudget{} },
		"Service":                          func() any { return &corev1.Service{} },
		"ValidatingAdmissionPolicy":        func() any { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
		"ValidatingAdmissionPolicyBinding": func() any { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} },
		// No Go type here for the Prometheus Operator's ServiceMonitor and PrometheusRule; their fields
		// are checked by TestMetricsServiceAndServiceMonitorToggles and TestMonitoringToggles.
		"ServiceMonitor": nil,
		"PrometheusRule": nil,
	}
	everything := []string{
		"--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.service.annotations.a=b",
		"--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.grafanaDashboard.enabled=true",
		"--set", "serviceAccount.annotations.a=b", "--set", "imagePullSecrets[0].name=pull",
		"--set", "priorityClassName=system-cluster-critical", "--set", "podAnnotations.a=b", "--set", "podLabels.team=data",
		"--set", "nodeSelector.pool=system", "--set", "tolerations[0].key=dedicated", "--set", "tolerations[0].operator=Exists",
		"--set", "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1",
		"--set", "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey=kubernetes.io/hostname",
		"--set", "topologySpreadConstraints[0].maxSkew=1", "--set", "topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname",
		"--set", "topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway", "--set", "image.pullPolicy=Always",
		"--set", "config.flinkUrlMode=APIServerProxy",
	}
	for name, set := range map[string][]string{
		"default":               nil,
		"everything":            everything,
		"everything namespaced": append([]string{"--set", "rbac.scope=namespaced", "--set", "rbac.watchNamespaces={a,b}"}, everything...),
	} {
		for _, o := range render(t, set...) {
			newObj, ok := typed[o.Kind]
			if !ok {
				t.Errorf("%s: %s is a kind this test does not check; add it to the table", name, o.ID())
				continue
			}
			if newObj == nil {
				continue
			}
			if err := yaml.UnmarshalStrict(o.Raw, newObj()); err != nil {
				t.Errorf("%s: %s: %v", name, o.ID(), err)
			}
		}
	}
}
