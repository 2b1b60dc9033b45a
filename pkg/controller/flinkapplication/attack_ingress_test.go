package flinkapplication

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A tenant's Ingress served by IngressClass "public" (named by spec.ingress.className while the
// operator allowed any class) keeps that class once the spec names none: sameIngress takes a class
// the spec does not name for one the cluster defaulted, and the merge patch never clears it. When the
// platform then restricts ingress.allowedClasses to "internal", the spec (naming no class) passes the
// policy, and the Ingress the operator keeps goes on being served on the internet-facing class the
// policy no longer lets any spec choose. An Ingress the operator keeps should have only a class the
// policy allows, or the class the cluster gives one that names none.
func TestAnIngressKeepsNoClassThePolicyNoLongerAllowsOnceTheSpecNamesNone(t *testing.T) {
	w := newWorld(t)
	w.env.Config.Ingress.HostDomains = []string{"flink.example.com"}
	public := "public"
	app := wordcount("wc")
	app.Spec.Ingress = &v1beta1.IngressSpec{Template: "{{name}}.flink.example.com", ClassName: &public}
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	ingresses := w.kube.NetworkingV1().Ingresses(ns)
	ing, err := ingresses.Get(context.Background(), "wc", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, public, *ing.Spec.IngressClassName)

	// The tenant stops naming a class; the platform then allows only the internal one.
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Ingress.ClassName = nil })
	w.passes("wc", 5)
	w.env.Config.Ingress.AllowedClasses = []string{"internal"}
	w.restartOperator() // the operator restarted with its new configuration
	w.passes("wc", 10)

	ing, err = ingresses.Get(context.Background(), "wc", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	require.NoError(t, err)
	if ing.Spec.IngressClassName != nil {
		assert.NotEqual(t, public, *ing.Spec.IngressClassName,
			"the Ingress is still served by IngressClass %q, which ingress.allowedClasses (internal) does not allow", public)
	}
}
