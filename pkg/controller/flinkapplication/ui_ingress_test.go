package flinkapplication

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The Flink UI's Ingress comes with the application's generic Service, routes to it (so it follows
// the live cluster without changing), shows its URL in status as the Lyft operator did, follows
// changes of spec.ingress without a redeploy, and goes when nothing asks for it any more.
func TestTheUIIngressFollowsTheSpecWithoutARedeploy(t *testing.T) {
	w := newWorld(t)
	w.env.Config.Ingress.HostDomains = []string{"flink.example.com", "ui.example.com"}
	app := wordcount("wc")
	app.Spec.Ingress = &v1beta1.IngressSpec{Template: "{{name}}.flink.example.com"}
	w.create(app)
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	ing, err := w.kube.NetworkingV1().Ingresses(ns).Get(context.Background(), "wc", metav1.GetOptions{})
	require.NoError(t, err, "the Ingress is created with the generic Service")
	assert.Equal(t, "wc.flink.example.com", ing.Spec.Rules[0].Host)
	assert.Equal(t, flink.GenericServiceNameOf("wc"), ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name)
	assert.Equal(t, "http://wc.flink.example.com/#/overview", running.Status.ClusterStatus.ClusterOverviewURL)
	assert.Equal(t, "http://wc.flink.example.com/#/jobs/"+running.Status.JobStatus.JobID, running.Status.JobStatus.JobOverviewURL)

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.Ingress = &v1beta1.IngressSpec{Template: "ui.example.com/{{name}}", TLS: []v1beta1.IngressTLS{{SecretName: "cert"}}}
	})
	after := w.runUntil("wc", "the Ingress moved", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.ClusterStatus.ClusterOverviewURL == "https://ui.example.com/wc/#/overview"
	})
	ing, err = w.kube.NetworkingV1().Ingresses(ns).Get(context.Background(), "wc", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "ui.example.com", ing.Spec.Rules[0].Host)
	assert.Equal(t, "/wc", ing.Spec.Rules[0].HTTP.Paths[0].Path)
	assert.Equal(t, v1beta1.PhaseRunning, after.Status.Phase)
	assert.Equal(t, running.Status.JobStatus.JobID, after.Status.JobStatus.JobID, "an Ingress change restarts nothing")

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Ingress = nil })
	w.runUntil("wc", "the Ingress gone", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.ClusterStatus.ClusterOverviewURL == ""
	})
	_, err = w.kube.NetworkingV1().Ingresses(ns).Get(context.Background(), "wc", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "no Ingress once nothing asks for one: %v", err)
}

// An operator configured as the Lyft operator was, with ingressUrlFormat, gives every application
// an Ingress at the URL it gave, with the application's ingressAnnotations.
func TestTheLyftIngressURLFormatGivesEveryApplicationItsUI(t *testing.T) {
	w := newWorld(t)
	w.env.Config.IngressURLFormat = "{{$jobCluster}}.lyft.example.com"
	w.env.Config.Ingress.HostDomains = []string{"lyft.example.com"}
	app := wordcount("wc")
	app.Spec.IngressAnnotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
	w.create(app)
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	ing, err := w.kube.NetworkingV1().Ingresses(ns).Get(context.Background(), "wc", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "wc.lyft.example.com", ing.Spec.Rules[0].Host)
	assert.Equal(t, "nginx", ing.Annotations["kubernetes.io/ingress.class"])
	assert.Equal(t, "http://wc.lyft.example.com/#/overview", running.Status.ClusterStatus.ClusterOverviewURL)
}

// A cluster with a default IngressClass has the API server fill in the class of an Ingress that
// names none. The operator, which asked for none, takes that as its Ingress as wanted, instead of
// patching it at every pass.
func TestAnIngressClassTheClusterDefaultedIsNotFoughtOver(t *testing.T) {
	w := newWorld(t)
	w.env.Config.Ingress.HostDomains = []string{"flink.example.com"}
	app := wordcount("wc")
	app.Spec.Ingress = &v1beta1.IngressSpec{Template: "{{name}}.flink.example.com"}
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	ings := w.kube.NetworkingV1().Ingresses(ns)
	ing, err := ings.Get(context.Background(), "wc", metav1.GetOptions{})
	require.NoError(t, err)
	class := "nginx"
	ing.Spec.IngressClassName = &class // as the DefaultIngressClass admission plugin does
	_, err = ings.Update(context.Background(), ing, metav1.UpdateOptions{})
	require.NoError(t, err)
	patches := func() int {
		n := 0
		for _, a := range w.kube.Actions() {
			if a.GetVerb() == "patch" && a.GetResource().Resource == "ingresses" {
				n++
			}
		}
		return n
	}
	before := patches()
	for i := 0; i < 10; i++ {
		_, _ = w.reconcile("wc")
		w.clock.Step(w.env.Config.StatusPollInterval.Duration)
	}
	assert.Equal(t, before, patches(), "no Ingress patch while nothing the spec asks for changed")
}

// refusals are the Events of a refused Ingress among events.
func refusals(events []string) []string {
	var out []string
	for _, e := range events {
		if strings.Contains(e, "IngressRefused") {
			out = append(out, e)
		}
	}
	return out
}

// An Ingress the spec may not claim (a host outside its namespace's domains, an annotation the
// operator does not allow) is not made, and one made before goes: the operator says why, naming the
// field, once, and the job runs on untouched.
func TestAnIngressTheSpecMayNotClaimIsRefusedAndTheJobRunsOn(t *testing.T) {
	w := newWorld(t)
	w.env.Config.Ingress.HostDomains = []string{"{{namespace}}.flink.example.com"}
	app := wordcount("wc")
	app.Spec.Ingress = &v1beta1.IngressSpec{Template: "payments.other-team.flink.example.com"}
	w.create(app)
	running := w.runUntil("wc", "Running, the refusal said", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && strings.Contains(a.Status.Reason, "no Ingress")
	})
	ingresses := w.kube.NetworkingV1().Ingresses(ns)
	_, err := ingresses.Get(context.Background(), "wc", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "no Ingress for another namespace's host: %v", err)
	const hostRefusal = "spec.ingress.template: host payments.other-team.flink.example.com is not in a domain the operator grants namespace jobs (jobs.flink.example.com)"
	assert.Contains(t, running.Status.Reason, "no Ingress for the Flink UI: "+hostRefusal)
	events := refusals(w.events())
	require.Len(t, events, 1, "the refusal is said once")
	assert.Contains(t, events[0], hostRefusal)
	for i := 0; i < 5; i++ {
		_, _ = w.reconcile("wc")
		w.clock.Step(w.env.Config.StatusPollInterval.Duration)
	}
	assert.Empty(t, refusals(w.events()), "and not again at every pass")

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.Ingress = &v1beta1.IngressSpec{Template: "ui.jobs.flink.example.com/{{name}}"}
	})
	made := w.runUntil("wc", "the Ingress made", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.ClusterStatus.ClusterOverviewURL == "http://ui.jobs.flink.example.com/wc/#/overview"
	})
	assert.NotContains(t, made.Status.Reason, "no Ingress", "status no longer says it is refused")

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.Ingress.Annotations = map[string]string{"nginx.ingress.kubernetes.io/server-snippet": "location /admin { proxy_pass http://10.0.0.1; }"}
	})
	after := w.runUntil("wc", "the Ingress gone", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.ClusterStatus.ClusterOverviewURL == ""
	})
	_, err = ingresses.Get(context.Background(), "wc", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the Ingress asked for before goes: %v", err)
	events = refusals(w.events())
	require.Len(t, events, 1)
	assert.Contains(t, events[0], "spec.ingress.annotations[nginx.ingress.kubernetes.io/server-snippet]: the operator does not let a spec set this annotation")
	assert.Equal(t, v1beta1.PhaseRunning, after.Status.Phase)
	assert.Equal(t, running.Status.JobStatus.JobID, after.Status.JobStatus.JobID, "the job runs on")
}

// What the API server (or an ingress controller's admission webhook, which refuses a host another
// Ingress serves) refuses of the Ingress is the Ingress's failure, not the job's.
func TestAnIngressTheAPIServerRefusesLeavesTheJobRunning(t *testing.T) {
	w := newWorld(t)
	w.env.Config.Ingress.HostDomains = []string{"{{namespace}}.flink.example.com"}
	w.kube.PrependReactor("create", "ingresses", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewBadRequest(`admission webhook "validate.nginx.ingress.kubernetes.io" denied the request: host "ui.jobs.flink.example.com" and path "/" is already defined`)
	})
	app := wordcount("wc")
	app.Spec.Ingress = &v1beta1.IngressSpec{Template: "ui.jobs.flink.example.com"}
	w.create(app)
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	for i := 0; i < 20; i++ {
		_, _ = w.reconcile("wc")
		w.clock.Step(w.env.Config.StatusPollInterval.Duration)
	}
	now := w.get("wc")
	assert.Equal(t, v1beta1.PhaseRunning, now.Status.Phase, now.Status.Reason)
	assert.Equal(t, running.Status.JobStatus.JobID, now.Status.JobStatus.JobID, "the job runs on")
	assert.Nil(t, now.Status.LastSeenError, "no retries are spent on the Ingress")
	assert.Contains(t, now.Status.Reason, "no Ingress for the Flink UI: the API server refused it: ")
	assert.Contains(t, now.Status.Reason, "is already defined")
	assert.Len(t, refusals(w.events()), 1)
}

// An Ingress an earlier operator made may carry annotations no spec may set any more (it passed
// the spec's through): the operator removes them, keeps an ingress controller's own, and remembers
// which are its own so that it removes one the spec drops later.
func TestAnnotationsTheOperatorNoLongerSetsAreRemoved(t *testing.T) {
	w := newWorld(t)
	w.env.Config.Ingress.HostDomains = []string{"{{namespace}}.flink.example.com"}
	app := wordcount("wc")
	app.Spec.Ingress = &v1beta1.IngressSpec{Template: "ui.jobs.flink.example.com", Annotations: map[string]string{"kubernetes.io/ingress.class": "nginx"}}
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	ingresses := w.kube.NetworkingV1().Ingresses(ns)
	ing, err := ingresses.Get(context.Background(), "wc", metav1.GetOptions{})
	require.NoError(t, err)
	// As an earlier operator left it: the spec's snippet of then, and no record of what it set.
	ing.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx", "nginx.ingress.kubernetes.io/configuration-snippet": "return 302 https://evil.example.com;"}
	_, err = ingresses.Update(context.Background(), ing, metav1.UpdateOptions{})
	require.NoError(t, err)
	annotations := func() map[string]string {
		for i := 0; i < 3; i++ {
			_, _ = w.reconcile("wc")
			w.clock.Step(w.env.Config.StatusPollInterval.Duration)
		}
		ing, err := ingresses.Get(context.Background(), "wc", metav1.GetOptions{})
		require.NoError(t, err)
		return ing.Annotations
	}
	got := annotations()
	assert.NotContains(t, got, "nginx.ingress.kubernetes.io/configuration-snippet")
	assert.Equal(t, "nginx", got["kubernetes.io/ingress.class"])

	// An ingress controller's annotation, written since, is its own; one the spec drops goes.
	ing, err = ingresses.Get(context.Background(), "wc", metav1.GetOptions{})
	require.NoError(t, err)
	ing.Annotations["ingress.kubernetes.io/backends"] = "{}"
	_, err = ingresses.Update(context.Background(), ing, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Ingress.Annotations = nil })
	got = annotations()
	assert.NotContains(t, got, "kubernetes.io/ingress.class", "dropped from the spec, dropped from the Ingress")
	assert.Equal(t, "{}", got["ingress.kubernetes.io/backends"], "a controller's annotation stays")
}
