package flink

import (
	"fmt"
	"maps"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// The Flink UI's Ingress. It routes to the application's generic Service (GenericServiceName),
// which the operator points at the live cluster's JobManager on every deploy, rollback and BlueGreen
// promotion, so the Ingress itself never changes with the cluster and its URL stays the same.

// uiAddress is where the UI is served: a host and a path.
type uiAddress struct {
	host, path string
	// field is where the address came from, for refusals.
	field string
}

// UIIngressPolicy is what the operator's configuration lets an application's UI Ingress claim
// (config.IngressPolicy), with its Lyft ingressUrlFormat.
type UIIngressPolicy struct {
	// URLFormat is the operator's ingressUrlFormat: the UI's address of an application without
	// spec.ingress.
	URLFormat string
	// HostDomains are the domains the Ingress may claim hosts in, {{namespace}} for the
	// application's namespace.
	HostDomains []string
	// AllowedAnnotations are the annotation keys a spec may set, or prefixes of them ending in "*".
	AllowedAnnotations []string
	// AllowedClasses are the IngressClasses a spec may choose; empty, any.
	AllowedClasses []string
}

// uiAddressOf is the UI's address an application asks for: spec.ingress.template, else the
// operator's ingressUrlFormat (the Lyft operator's setting); ok is false when neither is set.
func uiAddressOf(app *v1beta1.FlinkApplication, urlFormat string) (uiAddress, bool, error) {
	template, field := urlFormat, "the operator's ingressUrlFormat"
	if in := app.Spec.Ingress; in != nil {
		template, field = in.Template, "spec.ingress.template"
	}
	if template == "" {
		return uiAddress{}, false, nil
	}
	expanded := strings.NewReplacer("{{$jobCluster}}", app.Name, "{{name}}", app.Name, "{{namespace}}", app.Namespace).Replace(template)
	host, path, _ := strings.Cut(expanded, "/")
	if errs := validation.IsDNS1123Subdomain(host); len(errs) > 0 {
		return uiAddress{}, false, fmt.Errorf("%s gives the host %q, which is not a DNS name: %s", field, host, strings.Join(errs, "; "))
	}
	return uiAddress{host: host, path: "/" + path, field: field}, true, nil
}

// UIIngress is the Ingress of the application's Flink UI; nil when the application asks for none
// (see uiAddressOf), and an error naming the field when it asks for what the policy does not allow
// (ingress_policy.go). It is controlled by the application, so deleting the application removes it.
func UIIngress(app *v1beta1.FlinkApplication, policy UIIngressPolicy) (*networkingv1.Ingress, error) {
	addr, ok, err := uiAddressOf(app, policy.URLFormat)
	if !ok || err != nil {
		return nil, err
	}
	if err := policy.judge(app, addr); err != nil {
		return nil, err
	}
	o := OwnerFromApplication(app)
	labels := objectLabels(&o, map[string]string{k8.AppLabel: app.Name})
	annotations := maps.Clone(app.Spec.IngressAnnotations)
	var tls []networkingv1.IngressTLS
	if app.Spec.IngressTLSSecretName != "" {
		tls = append(tls, networkingv1.IngressTLS{Hosts: []string{addr.host}, SecretName: app.Spec.IngressTLSSecretName})
	}
	var className *string
	if in := app.Spec.Ingress; in != nil {
		className = in.ClassName
		for k, v := range in.Labels {
			if _, owned := labels[k]; !owned {
				labels[k] = v
			}
		}
		if len(in.Annotations) > 0 && annotations == nil {
			annotations = map[string]string{}
		}
		maps.Copy(annotations, in.Annotations)
		for _, t := range in.TLS {
			hosts := t.Hosts
			if len(hosts) == 0 {
				hosts = []string{addr.host}
			}
			tls = append(tls, networkingv1.IngressTLS{Hosts: hosts, SecretName: t.SecretName})
		}
	}
	pathType := networkingv1.PathTypeImplementationSpecific
	return &networkingv1.Ingress{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{Name: GenericServiceName(app), Namespace: app.Namespace, Labels: labels,
			Annotations: annotations, OwnerReferences: []metav1.OwnerReference{o.ownerReference()}},
		Spec: networkingv1.IngressSpec{
			IngressClassName: className,
			TLS:              tls,
			Rules: []networkingv1.IngressRule{{Host: addr.host, IngressRuleValue: networkingv1.IngressRuleValue{
				HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: addr.path, PathType: &pathType,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: GenericServiceName(app), Port: networkingv1.ServiceBackendPort{Number: UIPort(app)},
					}},
				}}},
			}}},
		},
	}, nil
}

// UIURL is the URL of the application's Flink UI through its Ingress, "" without one: https when
// the Ingress has a certificate for its host.
func UIURL(ing *networkingv1.Ingress) string {
	if ing == nil || len(ing.Spec.Rules) == 0 || ing.Spec.Rules[0].HTTP == nil || len(ing.Spec.Rules[0].HTTP.Paths) == 0 {
		return ""
	}
	host, path := ing.Spec.Rules[0].Host, ing.Spec.Rules[0].HTTP.Paths[0].Path
	scheme := "http"
	for _, t := range ing.Spec.TLS {
		for _, h := range t.Hosts {
			if h == host {
				scheme = "https"
			}
		}
	}
	return scheme + "://" + host + strings.TrimSuffix(path, "/")
}
