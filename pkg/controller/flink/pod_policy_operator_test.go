package flink

import corev1 "k8s.io/api/core/v1"

// operatorPolicy is the operator's pod policy in a namespace with these annotations (nil: a
// Namespace it may not read), where its config says the admission policy enforces, or not.
func operatorPolicy(annotations map[string]string, admissionPolicyEnforced bool) PodPolicy {
	var ns *corev1.Namespace
	if annotations != nil {
		ns = &corev1.Namespace{}
		ns.Annotations = annotations
	}
	p := PodPolicyFrom(ns)
	p.AdmissionPolicyEnforced = admissionPolicyEnforced
	return p
}
