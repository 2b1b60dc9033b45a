package flinkapplication

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The Flink UI's Ingress comes with the application's generic Service, routes to it (so it follows
// the live cluster without changing), shows its URL in status as the Lyft operator did, follows
// changes of spec.ingress without a redeploy, and goes when nothing asks for it any more.
func TestTheUIIngressFollowsTheSpecWithoutARedeploy(t *testing.T) {
	w := newWorld(t)
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
