package k8

import (
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Any object can own a cluster: a session cluster, typed without TypeMeta, is named by the kind its
// caller passes.
func TestControllerReferenceOfAnyKind(t *testing.T) {
	kind := v1beta1.SchemeGroupVersion.WithKind("FlinkSessionCluster")
	owner := &v1beta1.FlinkSessionCluster{ObjectMeta: metav1.ObjectMeta{Name: "sessions", Namespace: "ns", UID: "u1"}}
	ref := ControllerReference(owner, kind)
	assert.Equal(t, metav1.OwnerReference{APIVersion: "flink.k8s.io/v1beta1", Kind: "FlinkSessionCluster", Name: "sessions",
		UID: "u1", Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}, ref)

	obj := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "x", OwnerReferences: []metav1.OwnerReference{ref}}}
	assert.True(t, IsControlledBy(obj, owner, kind))
	assert.True(t, IsControlledBy(obj, &owner.ObjectMeta, kind), "metadata alone is an owner")
	assert.False(t, IsControlledBy(obj, owner, v1beta1.SchemeGroupVersion.WithKind("FlinkApplication")), "another kind")
	assert.False(t, IsOwnedBy(obj, app("sessions", "u1")), "an application of the same name")
	recreated := owner.DeepCopy()
	recreated.UID = "u2"
	assert.False(t, IsControlledBy(obj, recreated, kind), "a recreated owner")
}

func ptrTo[T any](v T) *T { return &v }
