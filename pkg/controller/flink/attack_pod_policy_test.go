package flink

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// docs/security.md: the pods read a Secret only if whoever wrote the spec may read it. A csi volume
// (a type the pod policy allows) names a Secret in nodePublishSecretRef, which the kubelet reads and
// hands to the CSI driver to mount the volume with: the job then reads what that Secret's
// credentials open (a secrets store, a bucket). Both layers must judge it as the Secret references
// they know, naming the field.
func TestACSIVolumesNodePublishSecretIsASecretReference(t *testing.T) {
	admission := loadAdmissionPolicy(t)
	app := testApp()
	app.APIVersion, app.Kind = "flink.k8s.io/v1beta1", "FlinkApplication"
	app.Spec.Volumes = []corev1.Volume{{Name: "vault", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
		Driver: "secrets-store.csi.k8s.io", NodePublishSecretRef: &corev1.LocalObjectReference{Name: "cloud-credentials"}}}}}
	const field = "spec.volumes[0].csi.nodePublishSecretRef.name"
	got := admission.review(t, admissionRequest{obj: app, resource: "flinkapplications", who: requester{name: "mallory"}})
	require.Len(t, got, 1, "the admission policy refuses it")
	assert.Contains(t, got[0], field)
	err := operatorPolicy(nil, false).Check(app)
	require.Error(t, err, "the operator refuses it")
	assert.Contains(t, err.Error(), field)
}
