package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
)

// A replica whose pod informer cannot list pods (its RBAC lacks them: a broken install) is alive —
// restarting it would not help — but not ready, and /readyz names the informer that never synced. It
// starts no worker, so it acts on nothing.
func TestReadyzNamesAnInformerThatCannotSync(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)

	role := operatorClusterRole(t)
	var rules []rbacv1.PolicyRule
	for _, r := range role.Rules {
		if len(r.APIGroups) == 1 && r.APIGroups[0] == "" && len(r.Resources) == 1 && r.Resources[0] == "pods" {
			continue
		}
		rules = append(rules, r)
	}
	name := "flinkfsm-no-pods-" + s.ns
	user := fmt.Sprintf("system:serviceaccount:%s:flinkfsm", s.ns)
	rbac := env.Kube.RbacV1()
	if _, err := env.Kube.CoreV1().ServiceAccounts(s.ns).Create(s.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "flinkfsm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoles().Create(s.ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(s.ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "flinkfsm", Namespace: s.ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(s.ctx, name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(s.ctx, name, metav1.DeleteOptions{})
	})

	config, err := env.WriteOperatorConfig("no-pods", map[string]string{"leaderElection": "{enabled: false}"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := env.StartReplicaWith("no-pods", localenv.ReplicaOptions{ConfigFile: config, Impersonate: user})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Kill)
	started := regexp.MustCompile(`"flinkfsm operator started".*metrics="([^"]+)"`)
	var addr string
	s.eventually("the replica serving its probes", func() (bool, string) {
		log, _ := os.ReadFile(env.ReplicaLog("no-pods"))
		if m := started.FindSubmatch(log); m != nil {
			addr = string(m[1])
			return true, ""
		}
		return false, "not started"
	})
	probe := func(path string) (int, string) {
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// The other informers sync; the pod informer's list is refused, and /readyz names it alone and
	// keeps doing so.
	onlyPods := func() (bool, string) {
		code, body := probe("/readyz")
		return code == http.StatusInternalServerError && strings.Contains(body, "informers not synced: Pod in all namespaces\n"),
			fmt.Sprintf("%d %q", code, body)
	}
	s.eventually("/readyz naming the Pod informer alone", onlyPods)
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if ok, why := onlyPods(); !ok {
			t.Fatalf("/readyz answered %s; want 500 naming the Pod informer alone", why)
		}
	}
	if code, body := probe("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz answered %d %q; a replica waiting for a cache is alive", code, body)
	}
	if code, body := probe("/metrics"); code != http.StatusOK || !strings.Contains(body, "flinkfsm_ready 0") {
		t.Errorf("/metrics answered %d without flinkfsm_ready 0", code)
	}
	if r.Exited() {
		t.Errorf("the replica exited")
	}
}

// operatorClusterRole is the ClusterRole of deploy/rbac.yaml.
func operatorClusterRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile("../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var role rbacv1.ClusterRole
		if err := dec.Decode(&role); err != nil {
			break
		}
		if role.Kind == "ClusterRole" {
			return &role
		}
	}
	t.Fatal("deploy/rbac.yaml has no ClusterRole")
	return nil
}
