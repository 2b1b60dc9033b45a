package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every flinkfsm kind.
const GroupName = "flink.k8s.io"

// The names of the four kinds, as objects' owner references, FlinkSnapshots' spec.owner.kind and
// the operator's queue keys spell them.
const (
	FlinkApplicationKind    = "FlinkApplication"
	FlinkSessionClusterKind = "FlinkSessionCluster"
	FlinkSessionJobKind     = "FlinkSessionJob"
	FlinkSnapshotKind       = "FlinkSnapshot"
)

// SchemeGroupVersion is the group and version the generated clients speak.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1beta1"}

// Kind returns the group-qualified kind for the given kind name.
func Kind(kind string) schema.GroupKind { return SchemeGroupVersion.WithKind(kind).GroupKind() }

// Resource returns the group-qualified resource for the given resource name.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder registers the kinds of this version with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the kinds of this version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&FlinkApplication{}, &FlinkApplicationList{},
		&FlinkSessionCluster{}, &FlinkSessionClusterList{},
		&FlinkSessionJob{}, &FlinkSessionJobList{},
		&FlinkSnapshot{}, &FlinkSnapshotList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
