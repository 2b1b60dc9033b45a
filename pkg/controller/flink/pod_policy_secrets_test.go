package flink

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The admission policy's refusal of a Secret reference names the field, the Secret and the user;
// the operator's names the same field and Secret, and why it cannot tell.
func TestASecretRefusalSaysWhoMayNot(t *testing.T) {
	admission := loadAdmissionPolicy(t)
	app := testApp()
	app.APIVersion, app.Kind = "flink.k8s.io/v1beta1", "FlinkApplication"
	app.Spec.Volumes = []corev1.Volume{secretVolume("tls", "flink-tls")}
	const field = "spec.volumes[0].secret.secretName: the pods would read Secret flink-tls, which only a user who may get it may reference"
	got := admission.review(t, admissionRequest{obj: app, resource: "flinkapplications", who: requester{name: "mallory"}})
	assert.Equal(t, []string{field + "; mallory may not; a namespace may allow it with its flinkfsm.io/allow-secret-references annotation"}, got)
	err := operatorPolicy(nil, false).Check(app)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), field+"; the operator cannot tell who wrote this object"), err.Error())
	assert.Contains(t, err.Error(), "admissionPolicyEnforced")
	assert.True(t, strings.HasSuffix(err.Error(), "; a namespace may allow it with its flinkfsm.io/allow-secret-references annotation"), err.Error())
}

// An update is asked about the Secrets again whenever it changes what the pods run: a user who may
// not get them could otherwise point the job that reads them elsewhere. The operator's own writes
// (finalizers) and what the kubectl flink verbs set run the same job and are not asked about.
func TestSecretReferencesAreAskedAboutOnEveryChangeOfWhatRuns(t *testing.T) {
	admission := loadAdmissionPolicy(t)
	stored := testApp()
	stored.APIVersion, stored.Kind = "flink.k8s.io/v1beta1", "FlinkApplication"
	stored.Spec.JobManagerConfig.EnvConfig.EnvFrom = []corev1.EnvFromSource{secretEnvFrom("db")}
	operator := requester{name: "system:serviceaccount:flinkfsm-system:flinkfsm"}
	mallory, alice := requester{name: "mallory"}, requester{name: "alice", secrets: []string{"db"}}
	const refused = "spec.jobManagerConfig.envConfig.envFrom[0].secretRef.name: the pods would read Secret db"
	for _, c := range []struct {
		name string
		who  requester
		edit func(app *v1beta1.FlinkApplication)
		want string
	}{
		{"the operator adds its finalizer", operator, func(app *v1beta1.FlinkApplication) { app.Finalizers = []string{"flink.k8s.io/finalizer"} }, ""},
		{"a label", mallory, func(app *v1beta1.FlinkApplication) { app.Labels["team"] = "other" }, ""},
		{"a savepoint", mallory, func(app *v1beta1.FlinkApplication) { app.Spec.SavepointTriggerNonce = "1" }, ""},
		{"a suspend", mallory, func(app *v1beta1.FlinkApplication) { app.Spec.State = v1beta1.JobStateSuspended }, ""},
		{"a restart", mallory, func(app *v1beta1.FlinkApplication) { app.Spec.RestartNonce = "2" }, ""},
		{"a rollback", mallory, func(app *v1beta1.FlinkApplication) { app.Spec.ForceRollback = true }, ""},
		{"a teardown", mallory, func(app *v1beta1.FlinkApplication) { app.Spec.TearDownVersionHash = "1a2b3c4d" }, ""},
		{"another image", mallory, func(app *v1beta1.FlinkApplication) { app.Spec.Image = "exfiltrate:1" }, refused},
		{"another parallelism", mallory, func(app *v1beta1.FlinkApplication) { app.Spec.Parallelism = 6 }, refused},
		{"a field dropped", mallory, func(app *v1beta1.FlinkApplication) { app.Spec.EntryClass = "" }, refused},
		{"another image, by a user who may get the Secret", alice, func(app *v1beta1.FlinkApplication) { app.Spec.Image = "flink-wordcount:2" }, ""},
		{"the Secret dropped", mallory, func(app *v1beta1.FlinkApplication) {
			app.Spec.JobManagerConfig.EnvConfig.EnvFrom = nil
			app.Spec.Image = "flink-wordcount:2"
		}, ""},
	} {
		app := stored.DeepCopy()
		c.edit(app)
		got := admission.review(t, admissionRequest{obj: app, old: stored, resource: "flinkapplications", who: c.who})
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: refused: %q", c.name, got)
		case c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], c.want)):
			t.Errorf("%s: got %q, want one refusal starting %q", c.name, got, c.want)
		}
	}
}

// A FlinkSessionCluster's Secrets are asked about as an application's, under the same fields.
func TestASessionClusterReadsOnlySecretsItsWriterMayGet(t *testing.T) {
	admission := loadAdmissionPolicy(t)
	cluster := &v1beta1.FlinkSessionCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "flink.k8s.io/v1beta1", Kind: "FlinkSessionCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "session", Namespace: "flink"},
		Spec: v1beta1.FlinkSessionClusterSpec{ClusterSpec: v1beta1.ClusterSpec{Image: "flink:1.20"}, TaskManagerConfig: v1beta1.SessionTaskManagerConfig{
			TaskManagerConfig: v1beta1.TaskManagerConfig{EnvConfig: v1beta1.EnvironmentConfig{EnvFrom: []corev1.EnvFromSource{secretEnvFrom("s3")}}}}},
	}
	request := admissionRequest{obj: cluster, resource: "flinksessionclusters", who: requester{name: "mallory"}}
	got := admission.review(t, request)
	require.Len(t, got, 1)
	assert.True(t, strings.HasPrefix(got[0], "spec.taskManagerConfig.envConfig.envFrom[0].secretRef.name: the pods would read Secret s3"), got[0])
	request.who = requester{name: "alice", secrets: []string{"s3"}}
	assert.Empty(t, admission.review(t, request))
	request.who, request.ns = requester{name: "mallory"}, map[string]string{AllowSecretReferencesAnnotation: "true"}
	assert.Empty(t, admission.review(t, request))
}

// Every authorization check costs 350000 of the 10000000 a policy may spend on one request (and of
// the 1000000 one expression may): a user who may get every Secret of the namespace costs one
// check, a user who may get them one by one one more per Secret, up to maxCheckedSecrets. The
// largest such request leaves most of the budget to the other rules; one Secret more is refused,
// not failed on the budget.
func TestTheSecretCheckStaysWithinTheCostBudget(t *testing.T) {
	admission := loadAdmissionPolicy(t)
	app := testApp()
	app.APIVersion, app.Kind = "flink.k8s.io/v1beta1", "FlinkApplication"
	var names []string
	for i := range maxCheckedSecrets {
		name := fmt.Sprintf("secret-%d", i)
		names = append(names, name)
		app.Spec.JobManagerConfig.EnvConfig.EnvFrom = append(app.Spec.JobManagerConfig.EnvConfig.EnvFrom, secretEnvFrom(name))
		app.Spec.TaskManagerConfig.EnvConfig.EnvFrom = append(app.Spec.TaskManagerConfig.EnvConfig.EnvFrom, secretEnvFrom(name))
		app.Spec.Volumes = append(app.Spec.Volumes, secretVolume(name, name))
	}
	// A spec of some size besides: every Secret named again in env, among plain variables.
	for i := range 100 {
		v := corev1.EnvVar{Name: fmt.Sprintf("VAR_%d", i), Value: "x"}
		if i%10 == 0 {
			v = secretEnv(fmt.Sprintf("VAR_%d", i), names[i/10%len(names)])
		}
		app.Spec.JobManagerConfig.EnvConfig.Env = append(app.Spec.JobManagerConfig.EnvConfig.Env, v)
		app.Spec.TaskManagerConfig.EnvConfig.Env = append(app.Spec.TaskManagerConfig.EnvConfig.Env, v)
	}
	request := admissionRequest{obj: app, resource: "flinkapplications", who: requester{name: "alice", secrets: names}}

	result := admission.evaluate(t, request)
	assert.Empty(t, result.errors)
	assert.Empty(t, result.refusals)
	assert.Equal(t, 1+maxCheckedSecrets, result.checks, "one check for every Secret of the namespace, then one per Secret")
	// The smallest budget the request is decided within, by bisection: a policy out of budget
	// fails to evaluate.
	low, high := int64(0), int64(celconfig.RuntimeCELCostBudget)
	for low+1 < high {
		mid := (low + high) / 2
		request.budget = mid
		if r := admission.evaluate(t, request); len(r.errors) > 0 {
			low = mid
		} else {
			high = mid
		}
	}
	t.Logf("the policy spends %d of its budget of %d on %d Secrets asked about one by one", high, celconfig.RuntimeCELCostBudget, maxCheckedSecrets)
	assert.Less(t, high, int64(celconfig.RuntimeCELCostBudget/2), "the Secret check leaves half the budget to the other rules")
	request.budget = 0

	request.who = requester{name: "alice", secrets: []string{"*"}}
	result = admission.evaluate(t, request)
	assert.Empty(t, result.errors)
	assert.Empty(t, result.refusals)
	assert.Equal(t, 1, result.checks, "a user who may get every Secret of the namespace is asked once")

	one := app.DeepCopy()
	one.Spec.Volumes = append(one.Spec.Volumes, secretVolume("one-more", "one-more"))
	request.obj, request.who = one, requester{name: "alice", secrets: append(names, "one-more")}
	result = admission.evaluate(t, request)
	assert.Empty(t, result.errors)
	assert.Equal(t, []string{fmt.Sprintf("spec: the pods would read more than %d different Secrets, and a user who may not get every Secret of the namespace may reference at most %[1]d; "+
		"a namespace may allow it with its flinkfsm.io/allow-secret-references annotation", maxCheckedSecrets)}, result.refusals)
	request.who.secrets = []string{"*"}
	assert.Empty(t, admission.review(t, request))
}
