package flink

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

// The operator applies the admission policy's rules itself, so a cluster without the policy is safe.
func TestThePodPolicyNamesTheFieldItRefuses(t *testing.T) {
	root, no := int64(0), false
	for _, c := range []struct {
		name string
		edit func(app *corev1.PodSecurityContext) *corev1.PodSecurityContext
		vols []corev1.Volume
		sa   string
		cm   map[string]string
		want string
	}{
		{name: "the defaults pass", want: ""},
		{name: "hostPath", vols: []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}},
			want: "spec.volumes[0]: hostPath volume root"},
		{name: "hostPath allowed", vols: []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}},
			cm: map[string]string{AllowHostPathAnnotation: "true"}, want: ""},
		{name: "root", edit: func(*corev1.PodSecurityContext) *corev1.PodSecurityContext {
			return &corev1.PodSecurityContext{RunAsUser: &root}
		},
			want: "spec.securityContext"},
		{name: "runAsNonRoot false", edit: func(*corev1.PodSecurityContext) *corev1.PodSecurityContext {
			return &corev1.PodSecurityContext{RunAsNonRoot: &no}
		}, want: "spec.securityContext"},
		{name: "root allowed", edit: func(*corev1.PodSecurityContext) *corev1.PodSecurityContext {
			return &corev1.PodSecurityContext{RunAsUser: &root}
		},
			cm: map[string]string{AllowRootAnnotation: "true"}, want: ""},
		{name: "sysctls", edit: func(*corev1.PodSecurityContext) *corev1.PodSecurityContext {
			return &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1"}}}
		}, want: "spec.securityContext.sysctls"},
		{name: "service account", sa: "admin", want: "spec.serviceAccountName: service account admin"},
		{name: "service account allowed", sa: "flink", cm: map[string]string{AllowedServiceAccountsAnnotation: "default, flink"}, want: ""},
		{name: "any service account", sa: "admin", cm: map[string]string{AllowedServiceAccountsAnnotation: "*"}, want: ""},
	} {
		app := testApp()
		if c.edit != nil {
			app.Spec.SecurityContext = c.edit(nil)
		}
		app.Spec.Volumes, app.Spec.ServiceAccountName = c.vols, c.sa
		var ns *corev1.Namespace
		if c.cm != nil {
			ns = &corev1.Namespace{}
			ns.Annotations = c.cm
		}
		err := PodPolicyFrom(ns).Check(app)
		if c.want == "" {
			assert.NoError(t, err, c.name)
		} else if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
		}
	}
}
