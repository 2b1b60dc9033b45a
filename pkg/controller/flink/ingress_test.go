package flink

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

func TestNoIngressUnlessTheSpecOrTheOperatorAsks(t *testing.T) {
	ing, err := UIIngress(testApp(), "")
	require.NoError(t, err)
	assert.Nil(t, ing)
	assert.Equal(t, "", UIURL(ing))
}

// The Lyft operator's ingressUrlFormat with its {{$jobCluster}}, and its ingressAnnotations and
// ingressTLSSecretName, make the Ingress it made: named like the generic Service, routing to it on the
// UI port.
func TestTheLyftIngressFormatNamesTheApplication(t *testing.T) {
	app := testApp()
	app.Spec.IngressAnnotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
	app.Spec.IngressTLSSecretName = "ui-cert"
	ing, err := UIIngress(app, "{{$jobCluster}}.flink.example.com")
	require.NoError(t, err)
	require.NotNil(t, ing)
	assert.Equal(t, GenericServiceName(app), ing.Name)
	assert.Equal(t, app.Name, ing.Labels[k8.AppLabel], "the operator's informers select its objects by this label")
	assert.Equal(t, "nginx", ing.Annotations["kubernetes.io/ingress.class"])
	rule := ing.Spec.Rules[0]
	assert.Equal(t, app.Name+".flink.example.com", rule.Host)
	path := rule.HTTP.Paths[0]
	assert.Equal(t, "/", path.Path)
	assert.Equal(t, networkingv1.PathTypeImplementationSpecific, *path.PathType)
	assert.Equal(t, GenericServiceName(app), path.Backend.Service.Name)
	assert.Equal(t, UIPort(app), path.Backend.Service.Port.Number)
	assert.Equal(t, []networkingv1.IngressTLS{{Hosts: []string{rule.Host}, SecretName: "ui-cert"}}, ing.Spec.TLS)
	assert.Equal(t, "https://"+app.Name+".flink.example.com", UIURL(ing))
	assert.Len(t, ing.OwnerReferences, 1, "deleting the application deletes its Ingress")
}

// spec.ingress wins over the operator's format: its template with a path, class, labels, annotations
// over ingressAnnotations, and TLS for the template's host.
func TestSpecIngressTakesAHostAndAPath(t *testing.T) {
	app := testApp()
	class := "internal"
	app.Spec.IngressAnnotations = map[string]string{"a": "lyft", "b": "lyft"}
	app.Spec.Ingress = &v1beta1.IngressSpec{Template: "flink.example.com/{{namespace}}/{{name}}", ClassName: &class,
		Labels: map[string]string{"team": "data", k8.AppLabel: "not-this"}, Annotations: map[string]string{"b": "spec"},
		TLS: []v1beta1.IngressTLS{{SecretName: "cert"}}}
	ing, err := UIIngress(app, "{{$jobCluster}}.ignored.example.com")
	require.NoError(t, err)
	assert.Equal(t, "flink.example.com", ing.Spec.Rules[0].Host)
	assert.Equal(t, "/"+app.Namespace+"/"+app.Name, ing.Spec.Rules[0].HTTP.Paths[0].Path)
	assert.Equal(t, &class, ing.Spec.IngressClassName)
	assert.Equal(t, "data", ing.Labels["team"])
	assert.Equal(t, app.Name, ing.Labels[k8.AppLabel], "the operator's own label is not overridden")
	assert.Equal(t, map[string]string{"a": "lyft", "b": "spec"}, ing.Annotations)
	assert.Equal(t, []networkingv1.IngressTLS{{Hosts: []string{"flink.example.com"}, SecretName: "cert"}}, ing.Spec.TLS)
	assert.Equal(t, "https://flink.example.com/"+app.Namespace+"/"+app.Name, UIURL(ing))
}

func TestAnIngressHostThatIsNoDNSNameIsRefusedNamingWhereItCameFrom(t *testing.T) {
	app := testApp()
	app.Spec.Ingress = &v1beta1.IngressSpec{Template: "Flink_UI.example.com"}
	_, err := UIIngress(app, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.ingress.template")
	_, err = UIIngress(testApp(), "{{$jobCluster}}..example.com")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ingressUrlFormat")
}
