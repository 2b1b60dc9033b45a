package portable

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/deploy/helmtest"
	"github.com/flinkfsm/flinkfsm/integ/localcluster"
)

// These tests need no cluster: TestMain starts one only for the tests that ask for it.

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestSelectTargetWithoutEnvironmentIsTheLocalCluster(t *testing.T) {
	for _, vars := range []map[string]string{nil, {EnvExternal: "0"}, {EnvExternal: "false"},
		// KUBECONFIG alone is the user's own cluster, not a request to run against it.
		{EnvKubeconfig: "/home/me/.kube/config"}} {
		got, err := SelectTarget(env(vars))
		if err != nil {
			t.Fatalf("%v: %v", vars, err)
		}
		if got.External || got.Install || got.StateVolume || got.Kubeconfig != "" {
			t.Errorf("%v: %+v, want the local cluster", vars, got)
		}
		if got.WaitTimeout != 60*time.Second || got.Jar != DefaultJar || got.FlinkImage != DefaultFlinkImage {
			t.Errorf("%v: %+v, want the local defaults", vars, got)
		}
	}
}

func TestSelectTargetExternalNeedsKubeconfig(t *testing.T) {
	_, err := SelectTarget(env(map[string]string{EnvExternal: "1"}))
	if err == nil || !strings.Contains(err.Error(), "KUBECONFIG") {
		t.Fatalf("FLINKFSM_EXTERNAL=1 without KUBECONFIG: %v, want an error naming KUBECONFIG", err)
	}
}

func TestSelectTargetExternalDefaults(t *testing.T) {
	got, err := SelectTarget(env(map[string]string{EnvExternal: "1", EnvKubeconfig: "/tmp/kind.kubeconfig"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Target{External: true, Kubeconfig: "/tmp/kind.kubeconfig", Install: true,
		OperatorImage: "flinkfsm:dev", FlinkURLMode: "APIServerProxy", Namespace: "flinkfsm-system",
		FlinkImage: "flinkfsm/flink-statemachine:1.20", Jar: "StateMachineExample.jar",
		EntryClass: "org.apache.flink.streaming.examples.statemachine.StateMachineExample", FlinkVersion: "1.20",
		StateVolume: true, WaitTimeout: 5 * time.Minute}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestSelectTargetExternalOverrides(t *testing.T) {
	got, err := SelectTarget(env(map[string]string{EnvExternal: "true", EnvKubeconfig: "/k",
		EnvOperatorImage: "localhost:5000/team/flinkfsm:pr-7", EnvFlinkURLMode: "ServiceDNS",
		EnvFlinkImage: "registry.local/flink-jobs:2", EnvJar: "MyJob.jar", EnvEntryClass: "com.example.Main",
		EnvNamespace: "ops", EnvStorageClass: "standard", EnvHelmValues: "/home/me/values.yaml"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.OperatorImage != "localhost:5000/team/flinkfsm:pr-7" || got.FlinkURLMode != "ServiceDNS" ||
		got.FlinkImage != "registry.local/flink-jobs:2" || got.Jar != "MyJob.jar" || got.EntryClass != "com.example.Main" ||
		got.Namespace != "ops" || got.StorageClass != "standard" || !got.Install {
		t.Errorf("overrides not honoured: %+v", got)
	}
	values, err := got.ChartValues()
	if err != nil {
		t.Fatal(err)
	}
	image := values["image"].(map[string]any)
	if image["repository"] != "localhost:5000/team/flinkfsm" || image["tag"] != "pr-7" {
		t.Errorf("chart image %v, want the registry's port kept in the repository", image)
	}
	args := strings.Join(got.HelmInstallArgs("chart", "/tmp/suite.yaml"), " ")
	if !strings.Contains(args, "--namespace ops --create-namespace -f /tmp/suite.yaml -f /home/me/values.yaml") {
		t.Errorf("install args %s: want the user's values after the suite's, in namespace ops", args)
	}
	if claim := got.StateClaim("ns"); claim.Spec.StorageClassName == nil || *claim.Spec.StorageClassName != "standard" {
		t.Errorf("the state claim's class is %v, want standard", claim.Spec.StorageClassName)
	}
}

func TestSelectTargetSkipInstall(t *testing.T) {
	got, err := SelectTarget(env(map[string]string{EnvExternal: "1", EnvKubeconfig: "/k", EnvSkipInstall: "1"}))
	if err != nil {
		t.Fatal(err)
	}
	if !got.External || got.Install {
		t.Errorf("FLINKFSM_SKIP_INSTALL=1: %+v, want external without install", got)
	}
	if !strings.Contains(got.String(), "already installed") {
		t.Errorf("String() = %q", got.String())
	}
}

func TestSelectTargetRefusesWhatItCannotRun(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"a flag that is neither 1 nor 0": {EnvExternal: "yes"},
		"Template URL mode":              {EnvExternal: "1", EnvKubeconfig: "/k", EnvFlinkURLMode: "Template"},
		"a misspelt URL mode":            {EnvExternal: "1", EnvKubeconfig: "/k", EnvFlinkURLMode: "apiserverproxy"},
		"an image by digest":             {EnvExternal: "1", EnvKubeconfig: "/k", EnvOperatorImage: "flinkfsm@sha256:0123"},
		"an image with an empty tag":     {EnvExternal: "1", EnvKubeconfig: "/k", EnvOperatorImage: "flinkfsm:"},
		"a skip-install typo":            {EnvExternal: "1", EnvKubeconfig: "/k", EnvSkipInstall: "y"},
	} {
		if got, err := SelectTarget(env(vars)); err == nil {
			t.Errorf("%s: accepted as %+v", name, got)
		}
	}
}

func TestSplitImage(t *testing.T) {
	for image, want := range map[string][2]string{
		"flinkfsm:dev":                     {"flinkfsm", "dev"},
		"flinkfsm":                         {"flinkfsm", "latest"},
		"ghcr.io/flinkfsm/flinkfsm:v0.3.1": {"ghcr.io/flinkfsm/flinkfsm", "v0.3.1"},
		"localhost:5000/flinkfsm":          {"localhost:5000/flinkfsm", "latest"},
	} {
		repo, tag, err := splitImage(image)
		if err != nil || repo != want[0] || tag != want[1] {
			t.Errorf("splitImage(%q) = %q, %q, %v; want %q, %q", image, repo, tag, err, want[0], want[1])
		}
	}
}

// The application spec of each target: against real Flink, memory Flink starts with and
// savepoints on a volume every cluster of the namespace mounts.
func TestAppSpecPerTarget(t *testing.T) {
	local, _ := SelectTarget(env(nil))
	spec := local.AppSpec()
	if len(spec.Volumes) != 0 || spec.JobManagerConfig.SystemMemoryFraction != nil {
		t.Errorf("local spec has volumes %v or memory fractions: the simulator needs neither", spec.Volumes)
	}
	ext, _ := SelectTarget(env(map[string]string{EnvExternal: "1", EnvKubeconfig: "/k"}))
	spec = ext.AppSpec()
	if spec.Image != DefaultFlinkImage || spec.JarName != DefaultJar || spec.EntryClass != DefaultEntryClass {
		t.Errorf("external spec runs %s %s %s", spec.Image, spec.JarName, spec.EntryClass)
	}
	if spec.FlinkConfig["web.upload.dir"] != FlinkUploadDir {
		t.Errorf("web.upload.dir %v, want %s: the image's jar is in its flink-web-upload", spec.FlinkConfig["web.upload.dir"], FlinkUploadDir)
	}
	if sp := spec.FlinkConfig["state.savepoints.dir"]; sp != "file:///flink-state/savepoints" {
		t.Errorf("savepoints go to %v, want the state volume", sp)
	}
	if len(spec.Volumes) != 1 || spec.Volumes[0].PersistentVolumeClaim == nil || spec.Volumes[0].PersistentVolumeClaim.ClaimName != StateVolumeClaim ||
		len(spec.VolumeMounts) != 1 || spec.VolumeMounts[0].MountPath != StateMountPath {
		t.Errorf("external spec volumes %+v mounts %+v, want the state claim at %s", spec.Volumes, spec.VolumeMounts, StateMountPath)
	}
	// The operator sizes Flink from the containers' memory less the fraction: at least what Flink
	// 1.20's defaults need (about 1 GiB for a TaskManager).
	tm := spec.TaskManagerConfig.Resources.Requests.Memory().Value()
	if flink := float64(tm) * (1 - *spec.TaskManagerConfig.SystemMemoryFraction); flink < 1<<30 {
		t.Errorf("TaskManager process size %.0f bytes, below what Flink needs", flink)
	}
}

// The chart renders, with the values the suite installs it with, an operator of the chosen image
// that reaches Flink the chosen way: `helm template` of what `helm upgrade --install` would apply.
func TestChartValuesRender(t *testing.T) {
	if built, path, err := helmtest.HelmBuilt(); err != nil || !built {
		if os.Getenv(localcluster.RequireClusterEnv) == "" {
			t.Skipf("helm is not built (%s, %v); `make helm` builds it", path, err)
		}
	}
	target, err := SelectTarget(env(map[string]string{EnvExternal: "1", EnvKubeconfig: "/k",
		EnvOperatorImage: "flinkfsm:test", EnvFlinkURLMode: "APIServerProxy"}))
	if err != nil {
		t.Fatal(err)
	}
	values, err := target.ChartValues()
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	valuesFile := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(valuesFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := target.HelmInstallArgs(helmtest.ChartDir, valuesFile)
	if strings.Join(args[:5], " ") != "upgrade --install flinkfsm deploy/helm/flinkfsm --namespace" || !contains(args, "--wait") {
		t.Errorf("install args %v", args)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	objs, _, err := helmtest.Template(ctx, ReleaseName, target.Namespace, "-f", valuesFile)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := helmtest.Find(objs, "Deployment", target.Namespace, "flinkfsm")
	if !ok {
		t.Fatal("no Deployment flinkfsm rendered")
	}
	if raw := string(d.Raw); !strings.Contains(raw, `image: "flinkfsm:test"`) || !strings.Contains(raw, "imagePullPolicy: IfNotPresent") {
		t.Errorf("the Deployment does not run flinkfsm:test IfNotPresent (kind-loaded images are not pulled):\n%s", raw)
	}
	cm, ok := helmtest.Find(objs, "ConfigMap", target.Namespace, "flinkfsm-config")
	if !ok {
		t.Fatal("no ConfigMap flinkfsm-config rendered")
	}
	file, err := helmtest.ConfigFile(cm)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Operator map[string]any `json:"operator"`
	}
	if err := yaml.Unmarshal([]byte(file), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Operator["flinkUrlMode"] != "APIServerProxy" || cfg.Operator["statusPollInterval"] != "5s" {
		t.Errorf("rendered config: flinkUrlMode %v, statusPollInterval %v:\n%s", cfg.Operator["flinkUrlMode"], cfg.Operator["statusPollInterval"], file)
	}
	// APIServerProxy needs the services/proxy grant the chart adds for it.
	if role, ok := helmtest.Find(objs, "ClusterRole", "", "flinkfsm-proxy"); !ok || !strings.Contains(string(role.Raw), "services/proxy") {
		t.Errorf("no ClusterRole flinkfsm-proxy grants services/proxy for APIServerProxy")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
