package k8

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// applicationKind is used when an application arrives without TypeMeta, as typed clients and
// informers deliver it.
var applicationKind = v1beta1.SchemeGroupVersion.WithKind("FlinkApplication")

// OwnerReference makes app the controller of an object, so that deleting the application lets the
// garbage collector remove the object, and so that IsOwnedBy recognises it. BlockOwnerDeletion keeps
// a foreground deletion of the application waiting until its clusters are gone.
func OwnerReference(app *v1beta1.FlinkApplication) metav1.OwnerReference {
	return *metav1.NewControllerRef(app, gvkOf(app))
}

// IsOwnedBy reports whether app is the controller of obj. The operator only touches objects it
// controls, never ones that merely carry its labels. The UID is compared when both sides have one,
// so an object left behind by a deleted application of the same name is not adopted.
func IsOwnedBy(obj metav1.Object, app *v1beta1.FlinkApplication) bool {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return false
	}
	want := gvkOf(app)
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != want.Group || ref.Kind != want.Kind || ref.Name != app.Name {
		return false
	}
	return ref.UID == "" || app.UID == "" || ref.UID == app.UID
}

func gvkOf(app *v1beta1.FlinkApplication) schema.GroupVersionKind {
	if gvk := app.GroupVersionKind(); gvk.Kind != "" && gvk.Version != "" {
		return gvk
	}
	return applicationKind
}
