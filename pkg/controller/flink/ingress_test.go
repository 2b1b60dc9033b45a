package flink

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

func TestNoIngressUnlessTheSpecOrTheOperatorAsks(t *testing.T) {
	ing, err := UIIngress(testApp(), UIIngressPolicy{})
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
	ing, err := UIIngress(app, UIIngressPolicy{URLFormat: "{{$jobCluster}}.flink.example.com", HostDomains: []string{"flink.example.com"}, AllowedAnnotations: ingressAnnotations})
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
	ing, err := UIIngress(app, UIIngressPolicy{URLFormat: "{{$jobCluster}}.ignored.example.com", HostDomains: []string{"flink.example.com"}, AllowedAnnotations: []string{"a", "b"}})
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
	_, err := UIIngress(app, UIIngressPolicy{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.ingress.template")
	_, err = UIIngress(testApp(), UIIngressPolicy{URLFormat: "{{$jobCluster}}..example.com"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ingressUrlFormat")
}

// ingressAnnotations is an allowlist as the operator's default has it: the Lyft ingress class.
var ingressAnnotations = []string{"kubernetes.io/ingress.class", "nginx.ingress.kubernetes.io/proxy-body-size"}

// teamDomains grants each namespace its own domain, as a platform shared by teams would.
var teamDomains = UIIngressPolicy{HostDomains: []string{"{{namespace}}.flink.example.com"}, AllowedAnnotations: ingressAnnotations}

func withIngress(template string, edit func(*v1beta1.IngressSpec)) *v1beta1.FlinkApplication {
	app := testApp()
	app.Spec.Ingress = &v1beta1.IngressSpec{Template: template}
	if edit != nil {
		edit(app.Spec.Ingress)
	}
	return app
}

// refusal is the error UIIngress gives, and that it makes no Ingress with it.
func refusal(t *testing.T, app *v1beta1.FlinkApplication, policy UIIngressPolicy) string {
	t.Helper()
	ing, err := UIIngress(app, policy)
	if err == nil {
		t.Errorf("an Ingress for %+v under %+v, want a refusal", app.Spec.Ingress, policy)
		return ""
	}
	assert.Nil(t, ing)
	return err.Error()
}

// An Ingress takes the traffic of every host it names, whoever else uses it: an application may
// claim hosts only in the domains the operator grants its namespace, its TLS hosts included.
func TestAnIngressClaimsHostsOnlyInItsNamespacesDomains(t *testing.T) {
	for _, template := range []string{"flink.flink.example.com", "wordcount.flink.flink.example.com/{{name}}", "{{name}}.{{namespace}}.flink.example.com"} {
		ing, err := UIIngress(withIngress(template, nil), teamDomains)
		require.NoError(t, err, template)
		require.NotNil(t, ing, template)
	}
	for _, c := range []struct{ template, want string }{
		{"payments.team-b.flink.example.com", "spec.ingress.template: host payments.team-b.flink.example.com is not in a domain the operator grants namespace flink (flink.flink.example.com)"},
		{"grafana.example.com", "spec.ingress.template: host grafana.example.com is not in a domain"},
		{"evilflink.flink.example.com", "spec.ingress.template: host evilflink.flink.example.com is not in a domain"},
		{"flink.example.com", "spec.ingress.template: host flink.example.com is not in a domain"},
	} {
		assert.Contains(t, refusal(t, withIngress(c.template, nil), teamDomains), c.want)
	}
	tls := withIngress("ui.flink.flink.example.com", func(in *v1beta1.IngressSpec) {
		in.TLS = []v1beta1.IngressTLS{{SecretName: "a"}, {Hosts: []string{"*.flink.flink.example.com", "*.team-b.flink.example.com"}, SecretName: "b"}}
	})
	assert.Contains(t, refusal(t, tls, teamDomains), "spec.ingress.tls[1].hosts[1]: host *.team-b.flink.example.com is not in a domain the operator grants namespace flink")

	// Without domains, no host is granted: the operator says so, and where the host came from.
	assert.Contains(t, refusal(t, withIngress("ui.flink.flink.example.com", nil), UIIngressPolicy{}),
		"spec.ingress.template: host ui.flink.flink.example.com is not in a domain the operator grants namespace flink (it grants none: its ingress.hostDomains is empty)")
	assert.Contains(t, refusal(t, testApp(), UIIngressPolicy{URLFormat: "{{$jobCluster}}.lyft.example.com"}),
		"the operator's ingressUrlFormat: host wordcount.lyft.example.com is not in a domain")
	// A domain without {{namespace}} is the operator's to share with every namespace.
	ing, err := UIIngress(testApp(), UIIngressPolicy{URLFormat: "{{$jobCluster}}.lyft.example.com", HostDomains: []string{"lyft.example.com"}})
	require.NoError(t, err)
	assert.Equal(t, "wordcount.lyft.example.com", ing.Spec.Rules[0].Host)
}

// An annotation configures the ingress controller every namespace shares (nginx's snippets run
// what they say in it, auth-url sends the UI's requests where it says): a spec may set only the
// annotations the operator's allowlist names, each value one plain line.
func TestOnlyTheAllowedAnnotationsReachTheIngress(t *testing.T) {
	annotated := func(field string, annotations map[string]string) *v1beta1.FlinkApplication {
		app := withIngress("ui.flink.flink.example.com", nil)
		if field == "ingressAnnotations" {
			app.Spec.IngressAnnotations = annotations
		} else {
			app.Spec.Ingress.Annotations = annotations
		}
		return app
	}
	ing, err := UIIngress(annotated("annotations", map[string]string{"kubernetes.io/ingress.class": "nginx", "nginx.ingress.kubernetes.io/proxy-body-size": "100m"}), teamDomains)
	require.NoError(t, err)
	assert.Equal(t, "100m", ing.Annotations["nginx.ingress.kubernetes.io/proxy-body-size"])
	for _, c := range []struct {
		field       string
		annotations map[string]string
		want        string
	}{
		{"annotations", map[string]string{"kubernetes.io/ingress.class": "nginx", "nginx.ingress.kubernetes.io/configuration-snippet": "more_set_headers x;"},
			"spec.ingress.annotations[nginx.ingress.kubernetes.io/configuration-snippet]: the operator does not let a spec set this annotation (allowed: kubernetes.io/ingress.class, nginx.ingress.kubernetes.io/proxy-body-size; its ingress.allowedAnnotations)"},
		{"ingressAnnotations", map[string]string{"nginx.ingress.kubernetes.io/server-snippet": "location /x {}"}, "spec.ingressAnnotations[nginx.ingress.kubernetes.io/server-snippet]: the operator does not let"},
		{"annotations", map[string]string{"nginx.ingress.kubernetes.io/auth-url": "http://evil.example.com"}, "spec.ingress.annotations[nginx.ingress.kubernetes.io/auth-url]: the operator does not let"},
		{"annotations", map[string]string{"external-dns.alpha.kubernetes.io/hostname": "www.example.com"}, "spec.ingress.annotations[external-dns.alpha.kubernetes.io/hostname]"},
		{"annotations", map[string]string{"nginx.ingress.kubernetes.io/proxy-body-size": "1m;\nlocation / {}"},
			"spec.ingress.annotations[nginx.ingress.kubernetes.io/proxy-body-size]: the value is not one line of at most 256 bytes without"},
		{"ingressAnnotations", map[string]string{"kubernetes.io/ingress.class": strings.Repeat("n", 257)}, "spec.ingressAnnotations[kubernetes.io/ingress.class]: the value is not one line"},
	} {
		assert.Contains(t, refusal(t, annotated(c.field, c.annotations), teamDomains), c.want)
	}
	// An allowlist entry ending in * allows the keys it prefixes.
	prefixed := teamDomains
	prefixed.AllowedAnnotations = []string{"example.com/*"}
	_, err = UIIngress(annotated("annotations", map[string]string{"example.com/team": "data"}), prefixed)
	assert.NoError(t, err)
	assert.Contains(t, refusal(t, annotated("annotations", map[string]string{"example.org/team": "data"}), prefixed), "spec.ingress.annotations[example.org/team]")
}

// The UI's path is written into the ingress controller's routes, which may read it as a pattern
// (ImplementationSpecific lets nginx take it for a regular expression) or resolve it: only plain
// segments are taken, so that it routes the same, as written, under every controller.
func TestAnIngressPathIsPlainSegments(t *testing.T) {
	for _, path := range []string{"", "/", "/{{namespace}}/{{name}}", "/{{namespace}}/{{name}}/", "/flink_ui/v-1~x"} {
		_, err := UIIngress(withIngress("ui.flink.flink.example.com"+path, nil), teamDomains)
		assert.NoError(t, err, path)
	}
	for _, path := range []string{"/a/../b", "/a/./b", "//a", "/a//b", "/.*", "/a.b", "/(x)", "/a%2e%2e", "/a b", "/a\tb", "/a\x00", "/a?x=1", "/a#x",
		"/" + strings.Repeat("a", 256)} {
		assert.Contains(t, refusal(t, withIngress("ui.flink.flink.example.com"+path, nil), teamDomains),
			"spec.ingress.template: the path is not plain: the UI's path is segments of letters, digits, '-', '_' and '~' between single slashes, at most 256 bytes", "path %q", path)
	}
	assert.Contains(t, refusal(t, testApp(), UIIngressPolicy{URLFormat: "{{$jobCluster}}.flink.example.com/ui/../x", HostDomains: []string{"flink.example.com"}}),
		"the operator's ingressUrlFormat: the path is not plain")
}

// Labels the API server would refuse on the Ingress are refused first, naming the field, so that no
// spec makes the operator's writes fail.
func TestIngressLabelsAreLabels(t *testing.T) {
	app := withIngress("ui.flink.flink.example.com", func(in *v1beta1.IngressSpec) { in.Labels = map[string]string{"team": "data", "bad key": "x"} })
	assert.Contains(t, refusal(t, app, teamDomains), "spec.ingress.labels[bad key]: not a label key")
	app = withIngress("ui.flink.flink.example.com", func(in *v1beta1.IngressSpec) { in.Labels = map[string]string{"team": "data science"} })
	assert.Contains(t, refusal(t, app, teamDomains), "spec.ingress.labels[team]: not a label value")
}

// An IngressClass is a controller and where it listens (an internal network, the internet): the
// platform names those a spec may choose, and the legacy class annotation is judged as the field.
func TestAnIngressChoosesOnlyAnAllowedClass(t *testing.T) {
	internal, public := "internal", "public"
	policy := teamDomains
	policy.AllowedClasses = []string{internal}
	app := withIngress("ui.flink.flink.example.com", nil)
	app.Spec.Ingress.ClassName = &internal
	ing, err := UIIngress(app, policy)
	require.NoError(t, err)
	assert.Equal(t, internal, *ing.Spec.IngressClassName)

	app.Spec.Ingress.ClassName = &public
	assert.Contains(t, refusal(t, app, policy), `spec.ingress.className: the operator does not let a spec choose IngressClass "public" (allowed: internal; its ingress.allowedClasses)`)

	app.Spec.Ingress.ClassName = nil
	app.Spec.IngressAnnotations = map[string]string{"kubernetes.io/ingress.class": public}
	assert.Contains(t, refusal(t, app, policy), `spec.ingressAnnotations[kubernetes.io/ingress.class]: the operator does not let a spec choose IngressClass "public"`)

	// Without a list, any class: Lyft's manifests name theirs by the annotation.
	_, err = UIIngress(app, teamDomains)
	assert.NoError(t, err)
}
