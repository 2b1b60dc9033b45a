package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The caches keep of a Deployment what a pass reads (its replicas, labels, annotations and status)
// and not its pod spec, most of the object, which the operator rendered and never reads back.
func TestTheCacheKeepsOfADeploymentWhatAPassReads(t *testing.T) {
	n := int32(2)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "wc-1-jm", Labels: map[string]string{"flink-app": "wc"},
			Annotations:   map[string]string{"flink.k8s.io/checkpoints-retained": "10"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "flinkfsm"}}},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"flink-app": "wc"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "jobmanager", Image: "flink:1.20"}}}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 2},
	}
	out, err := trimForCache(d)
	assert.NoError(t, err)
	got := out.(*appsv1.Deployment)
	assert.Empty(t, got.ManagedFields)
	assert.Empty(t, got.Spec.Template.Spec.Containers)
	assert.Equal(t, int32(2), replicas(got))
	assert.Equal(t, "10", got.Annotations["flink.k8s.io/checkpoints-retained"])
	assert.Equal(t, "wc", got.Spec.Template.Labels["flink-app"])
	assert.Equal(t, int32(2), got.Status.ReadyReplicas)
}
