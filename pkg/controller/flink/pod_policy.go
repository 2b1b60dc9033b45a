package flink

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The Namespace annotations that relax the pod policy there; the operator reads them as the
// ValidatingAdmissionPolicy in deploy/policy.yaml does.
const (
	AllowHostPathAnnotation          = "flinkfsm.io/allow-host-path"
	AllowRootAnnotation              = "flinkfsm.io/allow-root"
	AllowedServiceAccountsAnnotation = "flinkfsm.io/allowed-service-accounts"
)

// PodPolicy is what the pods of a cluster may do beyond a "restricted" profile. The right to create
// a FlinkApplication is the right to run its image in pods the operator creates with its own rights;
// this keeps those pods to what the namespace allows.
type PodPolicy struct {
	AllowHostPath bool
	AllowRoot     bool
	// ServiceAccounts the pods may run as; "*" allows any.
	ServiceAccounts []string
}

// PodPolicyFrom reads a namespace's annotations; none give the restricted defaults: no hostPath, no
// root, only the namespace's default service account.
func PodPolicyFrom(ns *corev1.Namespace) PodPolicy {
	p := PodPolicy{ServiceAccounts: []string{"default"}}
	if ns == nil {
		return p
	}
	a := ns.Annotations
	p.AllowHostPath = a[AllowHostPathAnnotation] == "true"
	p.AllowRoot = a[AllowRootAnnotation] == "true"
	if list, ok := a[AllowedServiceAccountsAnnotation]; ok {
		p.ServiceAccounts = nil
		for _, sa := range strings.Split(list, ",") {
			p.ServiceAccounts = append(p.ServiceAccounts, strings.TrimSpace(sa))
		}
	}
	return p
}

// Check names the first field of the spec whose pods the policy does not allow.
func (p PodPolicy) Check(app *v1beta1.FlinkApplication) error {
	s := app.Spec
	if !p.AllowHostPath {
		for i, v := range s.Volumes {
			if v.HostPath != nil {
				return fmt.Errorf("spec.volumes[%d]: hostPath volume %s is not allowed; a namespace may allow hostPath volumes with its %s annotation",
					i, v.Name, AllowHostPathAnnotation)
			}
		}
	}
	if sc := s.SecurityContext; sc != nil && !p.AllowRoot {
		root := sc.RunAsUser != nil && *sc.RunAsUser == 0 || sc.RunAsGroup != nil && *sc.RunAsGroup == 0 ||
			sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot
		switch {
		case root:
			return fmt.Errorf("spec.securityContext: pods may not run as root (runAsUser 0, runAsGroup 0 or runAsNonRoot false); a namespace may allow it with its %s annotation", AllowRootAnnotation)
		case len(sc.Sysctls) > 0:
			return fmt.Errorf("spec.securityContext.sysctls: setting sysctls is not allowed; a namespace may allow it with its %s annotation", AllowRootAnnotation)
		}
	}
	if sa := s.ServiceAccountName; sa != "" && !slices.Contains(p.ServiceAccounts, sa) && !slices.Contains(p.ServiceAccounts, "*") {
		return fmt.Errorf("spec.serviceAccountName: service account %s is not allowed in this namespace (allowed: %s); add it to the namespace's %s annotation",
			sa, strings.Join(p.ServiceAccounts, ", "), AllowedServiceAccountsAnnotation)
	}
	return nil
}
