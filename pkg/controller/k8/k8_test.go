package k8

import (
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func app(name string, uid types.UID) *v1beta1.FlinkApplication {
	return &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid}}
}

func TestOwnerReference(t *testing.T) {
	withType := app("wc", "u1")
	withType.TypeMeta = metav1.TypeMeta{APIVersion: "flink.k8s.io/v1beta1", Kind: "FlinkApplication"}

	for name, a := range map[string]*v1beta1.FlinkApplication{"no TypeMeta": app("wc", "u1"), "TypeMeta": withType} {
		t.Run(name, func(t *testing.T) {
			ref := OwnerReference(a)
			assert.Equal(t, "flink.k8s.io/v1beta1", ref.APIVersion)
			assert.Equal(t, "FlinkApplication", ref.Kind)
			assert.Equal(t, "wc", ref.Name)
			assert.Equal(t, types.UID("u1"), ref.UID)
			assert.True(t, *ref.Controller)
			assert.True(t, *ref.BlockOwnerDeletion)
		})
	}
}

func TestIsOwnedBy(t *testing.T) {
	owner := app("wc", "u1")
	notController := OwnerReference(owner)
	notController.Controller = nil
	otherKind := OwnerReference(owner)
	otherKind.Kind = "Deployment"
	otherGroup := OwnerReference(owner)
	otherGroup.APIVersion = "apps/v1"

	tests := []struct {
		name string
		refs []metav1.OwnerReference
		app  *v1beta1.FlinkApplication
		want bool
	}{
		{"controller ref", []metav1.OwnerReference{OwnerReference(owner)}, owner, true},
		{"no refs", nil, owner, false},
		{"owner but not controller", []metav1.OwnerReference{notController}, owner, false},
		{"same name, other UID (recreated app)", []metav1.OwnerReference{OwnerReference(app("wc", "u2"))}, owner, false},
		{"other name", []metav1.OwnerReference{OwnerReference(app("other", "u1"))}, owner, false},
		{"other kind", []metav1.OwnerReference{otherKind}, owner, false},
		{"other group", []metav1.OwnerReference{otherGroup}, owner, false},
		{"app without UID (fake clients)", []metav1.OwnerReference{OwnerReference(owner)}, app("wc", ""), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "x", OwnerReferences: tt.refs}}
			assert.Equal(t, tt.want, IsOwnedBy(obj, tt.app))
		})
	}
}

func TestHashOf(t *testing.T) {
	assert.Equal(t, "0a1b2c3d", HashOf(&metav1.ObjectMeta{Labels: map[string]string{HashLabel: "0a1b2c3d"}}))
	assert.Equal(t, "", HashOf(&metav1.ObjectMeta{}))
}
