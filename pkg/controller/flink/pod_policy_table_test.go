package flink

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/internal/repo"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func repoFile(t *testing.T, path string) []byte {
	t.Helper()
	root, err := repo.Root()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, path))
	require.NoError(t, err)
	return data
}

// deploy/policy.yaml is what the table renders: a hand edit, or a table change without
// `make generate`, fails here as it fails make verify.
func TestTheAdmissionPolicyIsRenderedFromTheTable(t *testing.T) {
	if !bytes.Equal(repoFile(t, AdmissionPolicyPath), AdmissionPolicy()) {
		t.Fatalf("%s is not what the pod policy's table renders: run `go run ./hack/podpolicy` (make generate)", AdmissionPolicyPath)
	}
	policy := compileAdmissionPolicy(t, AdmissionPolicy()).policy
	var expressions []string
	for _, v := range policy.Spec.Validations {
		expressions = append(expressions, v.Expression)
	}
	for _, r := range podRules {
		for _, v := range r.validations() {
			assert.Contains(t, expressions, strings.TrimSpace(v.expression), r.name)
		}
	}
	for _, a := range policyAnnotations {
		assert.Contains(t, string(AdmissionPolicy()), "'"+a.key+"' in variables.annotations", a.key)
	}
}

// Every rule is held to both layers by TestBothLayersOfThePodPolicyAgree: refused without its
// annotation and admitted with it, in the spec's own fields where it has them and in a pod template.
// A rule without an annotation is a baseline control on fields only a pod template has.
func TestEveryRuleHasCasesForBothLayers(t *testing.T) {
	cases := slices.Concat(policyCases(), templatePolicyCases())
	for _, c := range slices.Concat(secretCases(), templateSecretCases()) {
		cases = append(cases, c.policyCase)
	}
	inTemplate := func(c policyCase) bool {
		return strings.Contains(strings.Split(c.want, ":")[0], "podTemplate.")
	}
	for _, r := range podRules {
		if r.pod == nil || (r.check == nil) != (r.expression == "") || (r.podOK == nil) != (r.podRefusal == nil) || r.check == nil && r.podOK == nil {
			t.Errorf("%s: a rule judges a pod in Go, and the spec in both layers: by check and its CEL, by its pod form, or both", r.name)
		}
		if r.annotation == "" && (len(r.crdFields) == 0 || r.check != nil) {
			t.Errorf("%s: a rule no namespace may relax judges fields only a pod template has", r.name)
		}
		refused := slices.ContainsFunc(cases, func(c policyCase) bool { return c.rule == r.name && c.want != "" && c.ns == nil })
		refusedInTemplate := slices.ContainsFunc(cases, func(c policyCase) bool { return c.rule == r.name && inTemplate(c) && c.ns == nil })
		assert.True(t, refused, "%s: no case where both layers refuse it", r.name)
		assert.True(t, refusedInTemplate, "%s: no case where both layers refuse it in a pod template", r.name)
		if r.annotation != "" {
			relaxed := slices.ContainsFunc(cases, func(c policyCase) bool { _, ok := c.ns[r.annotation]; return c.rule == r.name && c.want == "" && ok })
			assert.True(t, relaxed, "%s: no case where %s relaxes it in both layers", r.name, r.annotation)
		}
		// A rule that asks who writes the object admits one user and refuses another, and the
		// operator, which cannot ask, refuses as for the second.
		if r.requester {
			split := slices.ContainsFunc(secretCases(), func(c secretCase) bool { return c.rule == r.name && c.want == "" && c.unverified != "" })
			assert.True(t, split, "%s: no case a user who may is admitted in and the operator refuses without the admission policy", r.name)
		}
	}
	for _, c := range cases {
		if c.rule != "" && !slices.ContainsFunc(podRules, func(r podRule) bool { return r.name == c.rule }) {
			t.Errorf("%s: no rule %q", c.name, c.rule)
		}
	}
}

// Host namespaces, privileged containers, capabilities, host ports, /proc mount types and node
// names are fields the CRDs have only inside pod templates, which have no schema: elsewhere the API
// server prunes them from any manifest before a policy sees it. The rules judge every pod, so the
// pods the operator renders have none of them either, templates or not.
func TestWhatTheCRDsCannotAskForTheRenderedPodsDoNotHave(t *testing.T) {
	var absent []string
	for _, r := range podRules {
		absent = append(absent, r.crdFields...)
	}
	for _, crd := range []string{"deploy/crd/flink.k8s.io_flinkapplications.yaml", "deploy/crd/flink.k8s.io_flinksessionclusters.yaml"} {
		var doc map[string]any
		require.NoError(t, yaml.Unmarshal(repoFile(t, crd), &doc))
		for _, name := range propertyNames(doc) {
			assert.NotContains(t, absent, name, "%s has a field %s: the admission policy must check it", crd, name)
		}
	}

	yes, mount := true, corev1.UnmaskedProcMount
	sc := func(s corev1.SecurityContext) []corev1.Container {
		return []corev1.Container{{Name: "c", SecurityContext: &s}}
	}
	for _, c := range []struct {
		pod  corev1.PodSpec
		want string
	}{
		{corev1.PodSpec{HostNetwork: true}, "spec.hostNetwork: pods may not share the node's network, process or IPC namespace"},
		{corev1.PodSpec{HostPID: true}, "spec.hostPID"},
		{corev1.PodSpec{HostIPC: true}, "spec.hostIPC"},
		{corev1.PodSpec{Containers: sc(corev1.SecurityContext{Privileged: &yes})}, "spec.containers[0].securityContext.privileged"},
		{corev1.PodSpec{Containers: sc(corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"CHOWN", "SYS_ADMIN"}}})},
			"spec.containers[0].securityContext.capabilities.add[1]: capability SYS_ADMIN is not allowed"},
		{corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{{ContainerPort: 8081}, {ContainerPort: 6123, HostPort: 6123}}}}},
			"spec.containers[0].ports[1].hostPort"},
		{corev1.PodSpec{Containers: sc(corev1.SecurityContext{ProcMount: &mount})}, "spec.containers[0].securityContext.procMount"},
		{corev1.PodSpec{InitContainers: sc(corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}})},
			"spec.initContainers[0].securityContext.seLinuxOptions.type"},
		{corev1.PodSpec{EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			SecurityContext: &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}}}}},
			"spec.ephemeralContainers[0].securityContext.seccompProfile.type"},
		{corev1.PodSpec{Containers: sc(corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}})},
			"spec.containers[0].securityContext.appArmorProfile.type"},
		{corev1.PodSpec{Containers: sc(corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: &yes}})},
			"spec.containers[0].securityContext.windowsOptions.hostProcess"},
		// Placement, judged on the pods the operator renders as in each layer.
		{corev1.PodSpec{NodeName: "cp-1"}, "spec.nodeName: pods may not name their node"},
		{corev1.PodSpec{Tolerations: []corev1.Toleration{dedicated, anyTaint}}, "spec.tolerations[1]: " + cpRefusal},
		{corev1.PodSpec{Tolerations: []corev1.Toleration{dedicated}, NodeSelector: map[string]string{"kubernetes.io/hostname": "cp-1"}}, ""},
		{corev1.PodSpec{Containers: sc(corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}}})}, ""},
	} {
		got := podRefusal(&corev1.PodTemplateSpec{Spec: c.pod}, PodPolicyFrom(nil))
		if c.want == "" {
			assert.Empty(t, got)
		} else {
			assert.True(t, strings.HasPrefix(got, c.want), "got %q, want %q", got, c.want)
		}
	}

	// The operator's pods, from an application that uses every placement and volume field the
	// policy allows, have none of it.
	app := testApp()
	app.Spec.Volumes = []corev1.Volume{configVolume}
	app.Spec.VolumeMounts = []corev1.VolumeMount{{Name: "conf", MountPath: "/conf"}}
	app.Spec.JobManagerConfig.Tolerations = []corev1.Toleration{dedicated}
	app.Spec.TaskManagerConfig.NodeSelector = map[string]string{"disk": "ssd"}
	assert.NoError(t, PodPolicyFrom(nil).Check(app))
}

// propertyNames are the names of every property of an OpenAPI schema, at any depth.
func propertyNames(node any) []string {
	var out []string
	switch n := node.(type) {
	case map[string]any:
		if props, ok := n["properties"].(map[string]any); ok {
			for name := range props {
				out = append(out, name)
			}
		}
		for _, v := range n {
			out = append(out, propertyNames(v)...)
		}
	case []any:
		for _, v := range n {
			out = append(out, propertyNames(v)...)
		}
	}
	return out
}

// A FlinkSessionCluster has the same fields under the same paths, and meets the same policy.
func TestASessionClusterMeetsTheSamePolicy(t *testing.T) {
	admission := loadAdmissionPolicy(t)
	cluster := &v1beta1.FlinkSessionCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "flink.k8s.io/v1beta1", Kind: "FlinkSessionCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "session", Namespace: "flink"},
		Spec: v1beta1.FlinkSessionClusterSpec{ClusterSpec: v1beta1.ClusterSpec{Image: "flink:1.20", Volumes: []corev1.Volume{nfsVolume},
			JobManagerConfig: v1beta1.JobManagerConfig{Tolerations: []corev1.Toleration{masterTaint}, NodeSelector: map[string]string{"node-role.kubernetes.io/master": ""}}}},
	}
	got := admission.refusals(t, cluster, "flinksessionclusters", nil)
	require.Len(t, got, 2)
	assert.True(t, strings.HasPrefix(got[0], "spec.volumes[0].nfs:"), got[0])
	assert.True(t, strings.HasPrefix(got[1], "spec.jobManagerConfig.tolerations[0]:"), got[1])
	assert.Empty(t, admission.refusals(t, cluster, "flinksessionclusters", map[string]string{
		AllowedVolumeTypesAnnotation: "nfs", AllowControlPlaneNodesAnnotation: "true"}))
}

// docs/security.md lists every rule and every annotation.
func TestTheSecurityDocListsEveryRule(t *testing.T) {
	doc := string(repoFile(t, "docs/security.md"))
	for _, r := range podRules {
		if !strings.Contains(doc, "| "+r.name+" |") {
			t.Errorf("docs/security.md has no row for the rule %s", r.name)
		}
	}
	for _, a := range policyAnnotations {
		if !strings.Contains(doc, "`"+a.key) {
			t.Errorf("docs/security.md does not list %s", a.key)
		}
	}
}
