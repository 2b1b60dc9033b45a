package flink

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The Namespace annotations that relax the pod policy there, one rule each but allow-root, which
// relaxes running as root and unsafe sysctls, as it did before sysctls had a rule of their own. The
// operator reads them as the ValidatingAdmissionPolicy in deploy/policy.yaml does: both are
// rendered from policyAnnotations.
const (
	AllowHostPathAnnotation           = "flinkfsm.io/allow-host-path"
	AllowRootAnnotation               = "flinkfsm.io/allow-root"
	AllowedServiceAccountsAnnotation  = "flinkfsm.io/allowed-service-accounts"
	AllowedVolumeTypesAnnotation      = "flinkfsm.io/allowed-volume-types"
	AllowHostProcessAnnotation        = "flinkfsm.io/allow-host-process"
	AllowSELinuxOptionsAnnotation     = "flinkfsm.io/allow-selinux-options"
	AllowUnconfinedSeccompAnnotation  = "flinkfsm.io/allow-unconfined-seccomp"
	AllowUnconfinedAppArmorAnnotation = "flinkfsm.io/allow-unconfined-apparmor"
	AllowControlPlaneNodesAnnotation  = "flinkfsm.io/allow-control-plane-nodes"
	AllowSecretReferencesAnnotation   = "flinkfsm.io/allow-secret-references"
)

// PodPolicy is what the pods of a cluster may do beyond the default, which is at least Pod Security
// Standards baseline (and restricted's no-root). The right to create a FlinkApplication is the
// right to run its image in pods the operator creates with its own rights; this keeps those pods to
// what the namespace allows. Its rules are the table podRules, which deploy/policy.yaml is rendered
// from, so that the admission policy and the operator apply the same ones.
type PodPolicy struct {
	AllowHostPath bool
	// AllowRoot allows running as root and sysctls outside the safe set.
	AllowRoot bool
	// ServiceAccounts the pods may run as; "*" allows any.
	ServiceAccounts []string
	// VolumeTypes are volume types allowed beyond baselineVolumeTypes; "*" allows any but hostPath.
	VolumeTypes             []string
	AllowHostProcess        bool
	AllowSELinuxOptions     bool
	AllowUnconfinedSeccomp  bool
	AllowUnconfinedAppArmor bool
	AllowControlPlaneNodes  bool
	// AllowSecretReferences lets the pods read any Secret of the namespace the spec names, whoever
	// wrote the spec.
	AllowSecretReferences bool

	// AdmissionPolicyEnforced is not the namespace's: it says that the ValidatingAdmissionPolicy
	// flinkfsm-pod-security is installed and binds every namespace the operator watches (the
	// operator config's admissionPolicyEnforced), so that a Secret reference in a stored object was
	// admitted only for a user who may get the Secret. The operator cannot know who wrote an object;
	// without this it refuses every Secret reference the namespace does not allow (pod_policy_secrets.go).
	AdmissionPolicyEnforced bool
}

// policyAnnotation is one Namespace annotation: how the operator reads it (set) and the CEL
// variable the admission policy reads it into.
type policyAnnotation struct {
	key      string
	variable string
	// list is a comma-separated list (values trimmed); otherwise "true" relaxes the rule.
	list bool
	// none is the list without the annotation.
	none []string
	// allows is what it allows, for the policy's header.
	allows string
	set    func(p *PodPolicy, on bool, list []string)
}

var policyAnnotations = []policyAnnotation{
	{key: AllowHostPathAnnotation, variable: "allowHostPath", allows: "hostPath volumes",
		set: func(p *PodPolicy, on bool, _ []string) { p.AllowHostPath = on }},
	{key: AllowedVolumeTypesAnnotation, variable: "extraVolumeTypes", list: true, none: []string{},
		allows: `volume types beyond the baseline list ("nfs,iscsi"; "*" for any but hostPath)`,
		set:    func(p *PodPolicy, _ bool, l []string) { p.VolumeTypes = l }},
	{key: AllowHostProcessAnnotation, variable: "allowHostProcess", allows: "Windows HostProcess pods",
		set: func(p *PodPolicy, on bool, _ []string) { p.AllowHostProcess = on }},
	{key: AllowSELinuxOptionsAnnotation, variable: "allowSELinuxOptions", allows: "any SELinux type, user and role",
		set: func(p *PodPolicy, on bool, _ []string) { p.AllowSELinuxOptions = on }},
	{key: AllowUnconfinedSeccompAnnotation, variable: "allowUnconfinedSeccomp", allows: "seccomp profile Unconfined",
		set: func(p *PodPolicy, on bool, _ []string) { p.AllowUnconfinedSeccomp = on }},
	{key: AllowUnconfinedAppArmorAnnotation, variable: "allowUnconfinedAppArmor", allows: "AppArmor profile Unconfined (field or annotation)",
		set: func(p *PodPolicy, on bool, _ []string) { p.AllowUnconfinedAppArmor = on }},
	{key: AllowRootAnnotation, variable: "allowRoot", allows: "runAsUser/runAsGroup 0, runAsNonRoot false, sysctls outside the safe set",
		set: func(p *PodPolicy, on bool, _ []string) { p.AllowRoot = on }},
	{key: AllowedServiceAccountsAnnotation, variable: "serviceAccounts", list: true, none: []string{"default"},
		allows: `service accounts pods may run as ("default,flink"; "*" for any)`,
		set:    func(p *PodPolicy, _ bool, l []string) { p.ServiceAccounts = l }},
	{key: AllowControlPlaneNodesAnnotation, variable: "allowControlPlaneNodes", allows: "tolerating the control-plane nodes' taint, and naming a node (spec.nodeName)",
		set: func(p *PodPolicy, on bool, _ []string) { p.AllowControlPlaneNodes = on }},
	{key: AllowSecretReferencesAnnotation, variable: "allowSecretReferences", allows: "Secret references by users who may not get the Secret",
		set: func(p *PodPolicy, on bool, _ []string) { p.AllowSecretReferences = on }},
}

// PodPolicyFrom reads a namespace's annotations; none give the defaults: Pod Security Standards
// baseline, no root, only the namespace's default service account, no Secret references unless
// AdmissionPolicyEnforced (which the caller sets from the operator config).
func PodPolicyFrom(ns *corev1.Namespace) PodPolicy {
	var a map[string]string
	if ns != nil {
		a = ns.Annotations
	}
	var p PodPolicy
	for _, pa := range policyAnnotations {
		value, ok := a[pa.key]
		list := pa.none
		if pa.list && ok {
			list = nil
			for _, v := range strings.Split(value, ",") {
				list = append(list, strings.TrimSpace(v))
			}
		}
		pa.set(&p, value == "true", slices.Clone(list))
	}
	return p
}

// CheckCluster names the first field of the owner's spec whose pods the policy does not allow, in
// the order of podRules: each rule judges what is not one pod's (check), then each pod of the spec
// (its own fields that are a pod's, then its pod templates). Then it judges the pods the operator
// renders from the spec and its templates with every rule, so that neither the merge of the layers
// nor a change to the rendering can add what the rules refuse unnoticed.
func (p PodPolicy) CheckCluster(o ClusterOwner) error {
	pods := judgedPods(&o)
	for _, r := range podRules {
		if r.check != nil {
			if msg := r.check(&o, p); msg != "" {
				return errors.New(msg)
			}
		}
		if r.podOK == nil {
			continue
		}
		for _, t := range pods {
			if msg := r.pod(t.template, p); msg != "" {
				if t.path != "" {
					msg = t.path + "." + msg
				}
				return errors.New(msg)
			}
		}
	}
	for _, c := range []component{jobManagerPod(&o, ""), taskManagerPod(&o, "")} {
		rendered := pod(&o, "", c)
		if msg := podRefusal(&rendered, p); msg != "" {
			return fmt.Errorf("the %s pod the operator renders from the spec and its pod templates: %s", c.name, msg)
		}
	}
	return nil
}

// podRefusal is the first refusal of the pod by the rules, in their order, or "".
func podRefusal(t *corev1.PodTemplateSpec, p PodPolicy) string {
	for _, r := range podRules {
		if msg := r.pod(t, p); msg != "" {
			return msg
		}
	}
	return ""
}

// relax is the end of every refusal: which annotation of the Namespace would allow it.
func relax(annotation string) string {
	return "; a namespace may allow it with its " + annotation + " annotation"
}
