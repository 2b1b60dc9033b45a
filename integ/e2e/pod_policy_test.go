package e2e

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A namespace relaxes the pod policy with its annotations: the admission policy
// and the operator then allow what it lists, and only that.
func TestANamespaceRelaxesThePodPolicy(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	withFlinkSA := func(spec *v1beta1.FlinkApplicationSpec) { spec.ServiceAccountName = "flink" }
	app := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: "refused", Namespace: s.ns}, Spec: appSpec()}
	withFlinkSA(&app.Spec)
	_, err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Create(s.ctx, app, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec.serviceAccountName") {
		t.Fatalf("service account flink without the namespace's allowance: %v", err)
	}
	ns, err := env.Kube.CoreV1().Namespaces().Get(s.ctx, s.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Annotations = map[string]string{"flinkfsm.io/allowed-service-accounts": "default, flink"}
	if _, err := env.Kube.CoreV1().Namespaces().Update(s.ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.eventually("the namespace's allowance applied", func() (bool, string) {
		_, err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Create(s.ctx, app, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil, fmt.Sprint(err)
	})
	s.createRunning("allowed", withFlinkSA)
	// Still no root: the namespace allows service accounts only.
	root := int64(0)
	_, err = env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Create(s.ctx, &v1beta1.FlinkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: s.ns},
		Spec: func() v1beta1.FlinkApplicationSpec {
			spec := appSpec()
			spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &root}
			return spec
		}(),
	}, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec.securityContext") {
		t.Errorf("root in a namespace that allows only service accounts: %v", err)
	}
}
