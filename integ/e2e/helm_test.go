package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/deploy/helmtest"
	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// The operator installed from the Helm chart: `helm template` of deploy/helm/flinkfsm applied to
// the cluster with kubectl (CRDs, RBAC, ConfigMap, the Deployment, whose pods kwok only pretends to
// run) in the cluster scope, a real `helm install` in the namespaced one; then
// the operator process run with the ConfigMap's config as the cluster holds it and as the chart's
// service account (impersonated), so that the chart's RBAC, and nothing more, is what it may do.
// It deploys an application to Running, in both RBAC scopes.
func TestOperatorInstalledFromTheHelmChart(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel: the environment's own operator is stopped, so that only the chart's acts.
	env.KillOperator()
	t.Cleanup(func() { _ = env.StartOperator() })
	for _, scope := range []string{"cluster", "namespaced"} {
		t.Run(scope, func(t *testing.T) {
			defer stopEnvOnPanic()
			s := newScenario(t)
			chart := installChart(t, s, scope)

			// The impersonated identity is the service account's alone: no more than the chart grants.
			cannot := []authorizationv1.ResourceAttributes{{Verb: "create", Resource: "namespaces"},
				{Verb: "create", Group: "flink.k8s.io", Resource: "flinkapplications", Namespace: s.ns}}
			if scope == "namespaced" {
				cannot = append(cannot, authorizationv1.ResourceAttributes{Verb: "list", Group: "flink.k8s.io", Resource: "flinkapplications", Namespace: "default"})
			}
			for _, attrs := range cannot {
				if chart.can(s.ctx, t, attrs) {
					t.Fatalf("the service account %s may %s %s in %q: the impersonation does not hold", chart.user, attrs.Verb, attrs.Resource, attrs.Namespace)
				}
			}

			r, err := env.StartReplicaWith("helm-"+scope, localenv.ReplicaOptions{
				ConfigFile:  chart.configFile,
				Impersonate: chart.user,
				Env:         chart.env,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.Kill)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the chart's operator logs to %s; refusals there:\n%s", env.ReplicaLog("helm-"+scope),
						strings.Join(deniedLines(env.ReplicaLog("helm-"+scope)), "\n"))
				}
			})

			app := s.createRunning("wordcount", nil)
			if app.Status.JobStatus.JobID == "" {
				t.Errorf("%s is Running without a job id", app.Name)
			}
			// Leader election, with the chart's Role for Leases in the release namespace.
			chart.waitLeader(s, r)
			// The chart's readiness probe, on the chart's metrics port, answers.
			if err := ready(chart.metricsAddress); err != nil {
				t.Error(err)
			}
			if denied := deniedLines(env.ReplicaLog("helm-" + scope)); len(denied) > 0 {
				t.Errorf("the operator was refused requests under the chart's RBAC (a rule the chart lacks):\n%s", strings.Join(denied, "\n"))
			}
		})
	}
}

// Upgrading the operator as docs/operations.md says: `helm upgrade` with a changed config rolls
// the pods (the config checksum changes); the new pod stands by, ready, while the old one leads;
// SIGTERM to the old one (the rolling update's next step) makes it release the Lease, so the new
// one takes over within the retry period rather than the lease duration, and acts.
func TestHelmUpgradeHandsTheLeaseToTheNewReplica(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel: the environment's own operator is stopped, so that only the chart's acts.
	env.KillOperator()
	t.Cleanup(func() { _ = env.StartOperator() })
	s := newScenario(t)
	chart := installChart(t, s, "namespaced")
	old, err := env.StartReplicaWith("helm-upgrade-old", localenv.ReplicaOptions{ConfigFile: chart.configFile, Impersonate: chart.user, Env: chart.env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(old.Kill)
	app := s.createRunning("wordcount", nil)
	chart.waitLeader(s, old)

	deploymentName := chart.release + "-flinkfsm"
	checksum := func() string {
		d, err := env.Kube.AppsV1().Deployments(chart.namespace).Get(s.ctx, deploymentName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Annotations["checksum/config"]
	}
	before := checksum()
	// Both replicas run on this host, so the new one needs another metrics port; pods would not.
	newAddress := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Minute)
	defer cancel()
	if out, err := helmtest.Helm(ctx, "upgrade", chart.release, helmtest.ChartDir, "--namespace", chart.namespace,
		"-f", chart.valuesFile, "--set", "config.workers=2", "--set", "config.metricsAddress="+newAddress,
		"--kubeconfig", env.Cluster.KubeconfigPath); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if checksum() == before {
		t.Errorf("helm upgrade changed the config but not the pod template's checksum/config: the pods would not roll")
	}
	newConfig := filepath.Join(t.TempDir(), "config.yaml")
	if file := writeConfigMapFile(t, s, chart.namespace, deploymentName+"-config", newConfig); !strings.Contains(file, "workers: 2") {
		t.Fatalf("the upgraded ConfigMap does not carry workers: 2:\n%s", file)
	}

	replacement, err := env.StartReplicaWith("helm-upgrade-new", localenv.ReplicaOptions{ConfigFile: newConfig, Impersonate: chart.user, Env: chart.env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(replacement.Kill)
	// The new pod is ready as a standby: the rolling update goes on to stop an old one.
	s.eventually("the new replica ready as a standby", func() (bool, string) {
		if err := ready(newAddress); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	if holder := chart.leaseHolder(s); !strings.Contains(holder, fmt.Sprintf("_%d_", old.Pid())) {
		t.Fatalf("the lease moved to %q before the old replica was stopped", holder)
	}

	stopped := time.Now()
	if err := old.Terminate(40 * time.Second); err != nil {
		t.Error(err)
	}
	chart.waitLeader(s, replacement)
	// The lease duration is 15 s (the chart's default); a released lease is taken within the
	// retry period (2 s), plus this machine's slowness.
	if took := time.Since(stopped); took >= 15*time.Second {
		t.Errorf("the new replica led %s after SIGTERM to the old one: the lease expired instead of being released", took.Round(100*time.Millisecond))
	} else {
		t.Logf("lease handed over %s after SIGTERM", took.Round(100*time.Millisecond))
	}

	// The new leader acts: an update of the application goes through.
	s.update(app.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	s.waitRunning(app.Name, app.Status.DeployHash)
	if denied := deniedLines(env.ReplicaLog("helm-upgrade-new")); len(denied) > 0 {
		t.Errorf("the upgraded operator was refused requests under the chart's RBAC:\n%s", strings.Join(denied, "\n"))
	}
}

// chartInstall is the operator installed from the chart in its own namespace.
type chartInstall struct {
	release        string
	valuesFile     string
	namespace      string
	user           string
	configFile     string
	metricsAddress string
	// env is the operator container's environment as the kubelet would resolve it.
	env    []string
	client kubernetes.Interface
}

// installChart renders the chart for the local cluster (Flink reached through the simulator, short
// intervals, a free metrics port) and applies it with kubectl, as `helm template | kubectl apply`.
func installChart(t *testing.T, s *scenario, scope string) *chartInstall {
	t.Helper()
	ns, err := env.Kube.CoreV1().Namespaces().Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "helm-operator-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	release := ns.Name
	port := freePort(t)
	values := map[string]any{
		"rbac": map[string]any{"scope": scope},
		"config": map[string]any{
			"flinkUrlMode":           "Template",
			"flinkUrlTemplate":       env.FlinkURL + "/{{.Namespace}}/{{.Service}}",
			"metricsAddress":         fmt.Sprintf("127.0.0.1:%d", port),
			"workers":                4,
			"waitPollInterval":       "500ms",
			"statusPollInterval":     "2s",
			"jobStabilizationPeriod": jobStabilizationPeriod.String(),
			"clusterStartTimeout":    "60s",
			"readinessTimeout":       "30s",
			"maxBackoffDuration":     "5s",
		},
	}
	// The namespaced scope goes through `helm install`, which refuses to take over objects another
	// owner made: the admission policy is the environment's (the same as the chart's).
	helmInstall := scope == "namespaced"
	if helmInstall {
		values["rbac"].(map[string]any)["watchNamespaces"] = []string{s.ns}
		values["admissionPolicy"] = map[string]any{"enabled": false}
	}
	valuesYAML, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	valuesFile := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(valuesFile, valuesYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(s.ctx, 15*time.Minute) // the first call may build helm
	defer cancel()
	objs, rendered, err := helmtest.Template(ctx, release, ns.Name, "-f", valuesFile)
	if err != nil {
		t.Fatal(err)
	}
	if helmInstall {
		out, err := helmtest.Helm(ctx, "install", release, helmtest.ChartDir, "--namespace", ns.Name, "-f", valuesFile,
			"--kubeconfig", env.Cluster.KubeconfigPath)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("helm install:\n%s", out)
		// NOTES.txt tells how to check the install.
		if want := "rollout status deployment/" + release + "-flinkfsm"; !strings.Contains(string(out), want) {
			t.Errorf("helm install's notes do not say %q:\n%s", want, out)
		}
		t.Cleanup(func() {
			// helm uninstall leaves the CRDs (crds/ is never deleted), so the environment keeps them.
			_, _ = helmtest.Helm(context.Background(), "uninstall", release, "--namespace", ns.Name, "--kubeconfig", env.Cluster.KubeconfigPath)
		})
	} else {
		manifest := filepath.Join(dir, "chart.yaml")
		if err := os.WriteFile(manifest, rendered, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, stderr, err := env.Cluster.Kubectl(ctx, "apply", "--server-side", "-f", manifest); err != nil {
			t.Fatalf("kubectl apply of the chart: %v: %s", err, stderr)
		}
		// Cluster-wide grants go with the test; the CRDs and the admission policy are the
		// environment's own (the chart's are the same), so they stay.
		t.Cleanup(func() {
			for _, o := range objs {
				if o.Kind == "ClusterRole" || o.Kind == "ClusterRoleBinding" {
					_, _, _ = env.Cluster.Kubectl(context.Background(), "delete", strings.ToLower(o.Kind), o.Name, "--ignore-not-found")
				}
			}
		})
	}

	d, ok := helmtest.Find(objs, "Deployment", ns.Name, release+"-flinkfsm")
	if !ok {
		t.Fatalf("the chart rendered no Deployment %s-flinkfsm", release)
	}
	var deployment struct {
		Spec struct {
			Template struct {
				Spec corev1.PodSpec `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(d.Raw, &deployment); err != nil {
		t.Fatal(err)
	}
	account := deployment.Spec.Template.Spec.ServiceAccountName
	if _, err := env.Kube.CoreV1().ServiceAccounts(ns.Name).Get(s.ctx, account, metav1.GetOptions{}); err != nil {
		t.Fatalf("the Deployment runs as service account %q, which the chart did not create: %v", account, err)
	}
	// The Deployment is valid and its pods start (kwok pretends to run them).
	s.eventually("the chart's Deployment available", func() (bool, string) {
		got, err := env.Kube.AppsV1().Deployments(ns.Name).Get(s.ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return got.Spec.Replicas != nil && got.Status.AvailableReplicas == *got.Spec.Replicas,
			fmt.Sprintf("%d of %v replicas available", got.Status.AvailableReplicas, got.Spec.Replicas)
	})

	// The operator's config is the ConfigMap's, as the cluster holds it and the pods would mount it;
	// its other volume is the emptyDir fetched jars are written to.
	var config *corev1.ConfigMapVolumeSource
	for _, v := range deployment.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			config = v.ConfigMap
		}
	}
	if config == nil {
		t.Fatalf("the Deployment's volumes are %+v, want its ConfigMap", deployment.Spec.Template.Spec.Volumes)
	}
	configFile := filepath.Join(dir, "config.yaml")
	writeConfigMapFile(t, s, ns.Name, config.Name, configFile)

	// The container's environment (POD_NAMESPACE, which places the Lease; the memory limit), resolved
	// for a pod of the Deployment.
	var containerEnv []string
	for _, e := range deployment.Spec.Template.Spec.Containers[0].Env {
		switch {
		case e.ValueFrom == nil:
			containerEnv = append(containerEnv, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			containerEnv = append(containerEnv, e.Name+"="+ns.Name)
		case e.ValueFrom.ResourceFieldRef != nil && e.ValueFrom.ResourceFieldRef.Resource == "limits.memory":
			// The container's memory limit in bytes, as the downward API resolves it.
			limit := deployment.Spec.Template.Spec.Containers[0].Resources.Limits.Memory()
			containerEnv = append(containerEnv, fmt.Sprintf("%s=%d", e.Name, limit.Value()))
		default:
			t.Fatalf("the operator container's env %s comes from %+v, which this test cannot resolve", e.Name, e.ValueFrom)
		}
	}

	user := fmt.Sprintf("system:serviceaccount:%s:%s", ns.Name, account)
	cfg := env.Cluster.RestConfig()
	cfg.Impersonate.UserName = user
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &chartInstall{release: release, valuesFile: valuesFile, namespace: ns.Name, user: user, configFile: configFile,
		metricsAddress: fmt.Sprintf("127.0.0.1:%d", port), env: containerEnv, client: client}
}

// can asks the API server whether the chart's service account may do something.
func (c *chartInstall) can(ctx context.Context, t *testing.T, attrs authorizationv1.ResourceAttributes) bool {
	t.Helper()
	review, err := c.client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
		&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return review.Status.Allowed
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// deniedLines are the log lines where the API server refused the operator something.
func deniedLines(logPath string) []string {
	data, _ := os.ReadFile(logPath)
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `is forbidden: User \"system:serviceaccount:`) || strings.Contains(line, `is forbidden: User "system:serviceaccount:`) {
			out = append(out, line)
		}
	}
	if len(out) > 10 {
		out = append(out[:10], fmt.Sprintf("… and %d more", len(out)-10))
	}
	return out
}

// writeConfigMapFile writes the operator config file of a ConfigMap, as the cluster holds it.
func writeConfigMapFile(t *testing.T, s *scenario, namespace, name, path string) string {
	t.Helper()
	cm, err := env.Kube.CoreV1().ConfigMaps(namespace).Get(s.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(cm.Data["config.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	return cm.Data["config.yaml"]
}

// waitLeader waits until the replica holds the chart's Lease, in the release namespace.
func (c *chartInstall) waitLeader(s *scenario, r *localenv.Replica) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("replica %s holds the lease", r.Name), func() (bool, string) {
		holder := c.leaseHolder(s)
		return strings.Contains(holder, fmt.Sprintf("_%d_", r.Pid())), "held by " + holder
	})
}

func (c *chartInstall) leaseHolder(s *scenario) string {
	// The Lease is named after the release's shard: its namespaces in the namespaced scope.
	leases, err := env.Kube.CoordinationV1().Leases(c.namespace).List(s.ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var names []string
	for _, l := range leases.Items {
		if strings.HasPrefix(l.Name, config.DefaultLeaseName) {
			names = append(names, l.Name)
			if l.Spec.HolderIdentity != nil {
				return *l.Spec.HolderIdentity
			}
		}
	}
	return fmt.Sprintf("no holder (leases %v)", names)
}

// ready is the chart's readiness probe: GET /readyz on the metrics address.
func ready(metricsAddress string) error {
	resp, err := http.Get("http://" + metricsAddress + "/readyz")
	if err != nil {
		return fmt.Errorf("the readiness probe's /readyz: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz answered %s, want 200", resp.Status)
	}
	return nil
}
