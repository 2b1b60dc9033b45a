package flink

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// versionedService renders the Service of one cluster's JobManager. It is headless, so that its name
// resolves straight to the JobManager pod: TaskManagers connect to the RPC and blob ports by it, and
// there is no virtual IP whose endpoints lag behind a restarted JobManager.
func versionedService(o *ClusterOwner, hash string) *corev1.Service {
	svc := service(o, VersionedServiceNameOf(o.Name, hash), map[string]string{AppLabel: o.Name, HashLabel: hash})
	svc.Spec.ClusterIP = corev1.ClusterIPNone
	svc.Spec.Selector = podLabels(o, hash, JobManagerComponent)
	svc.Spec.Ports = []corev1.ServicePort{
		servicePort("rpc", o.RPCPort()),
		servicePort("blob", o.BlobPort()),
		servicePort("query", o.QueryPort()),
		servicePort("ui", o.UIPort()),
		servicePort("metrics", o.MetricsQueryPort()),
	}
	return svc
}

// versionService renders the Service named after a BlueGreen colour, pointed at the JobManager of
// that colour's cluster, so that a colour has one address across its versions.
func versionService(o *ClusterOwner, hash string, version v1beta1.FlinkApplicationVersion) *corev1.Service {
	return jobManagerService(o, hash, VersionServiceNameOf(o.Name, version),
		map[string]string{AppLabel: o.Name, HashLabel: hash, VersionLabel: string(version)})
}

// RenderGenericService renders the owner's stable Service, pointed at the JobManager of the cluster
// with this hash; the operator re-renders it with the new hash once a new cluster's job runs. It
// carries no hash label because it outlives every cluster.
func (o ClusterOwner) RenderGenericService(hash string) *corev1.Service {
	return jobManagerService(&o, hash, GenericServiceNameOf(o.Name), map[string]string{AppLabel: o.Name})
}

// jobManagerService renders a ClusterIP Service for users and tools: the UI and RPC ports of the
// JobManager of the cluster with this hash.
func jobManagerService(o *ClusterOwner, hash, name string, labels map[string]string) *corev1.Service {
	svc := service(o, name, labels)
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	svc.Spec.Selector = podLabels(o, hash, JobManagerComponent)
	svc.Spec.Ports = []corev1.ServicePort{
		servicePort("ui", o.UIPort()),
		servicePort("rpc", o.RPCPort()),
	}
	return svc
}

// service renders a Service's metadata. Services carry only the operator's labels: unlike pods,
// nothing selects or groups them by the owner's own labels.
func service(o *ClusterOwner, name string, labels map[string]string) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(o, name, labels),
	}
}

func servicePort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}
}

// RenderJobManagerService renders the Service of the JobManager of the owner's cluster with this
// hash, as RenderCluster does: the address the operator sends that cluster's REST calls to.
func (o ClusterOwner) RenderJobManagerService(hash string) *corev1.Service {
	return versionedService(&o, hash)
}

// JobManagerServiceProblem says how svc, the Service of the JobManager of the owner's cluster with
// this hash as observed, could take a call of the operator's elsewhere than to the pods of that
// JobManager; "" when it routes as the operator rendered it. The tenant may edit the Services of its
// namespace: an ExternalName (or a Service without the operator's selector, whose endpoints anyone
// may write) would have the operator read another team's job and dispose of savepoints, submit
// jobs and upload jars there. What is judged is what decides where a call lands: that the object
// controls the Service, its type, external name and selector. A ClusterIP Service with the
// JobManager pods' selector reaches those pods, in the namespace, whether it is headless (as the
// operator renders it) or has a cluster IP (as the Lyft operator rendered the clusters flinkfsm
// adopts); its ports decide nothing of where, and a cluster of an earlier spec keeps the ports
// that spec gave it. The message names the field, and never repeats more of the tenant's text
// than one DNS name.
func (o ClusterOwner) JobManagerServiceProblem(svc *corev1.Service, hash string) string {
	switch {
	case svc == nil:
		return fmt.Sprintf("does not exist, or is not controlled by %s %s", o.Kind.Kind, o.Name)
	case !o.IsOwnerOf(svc):
		return fmt.Sprintf("metadata.ownerReferences does not name %s %s as its controller", o.Kind.Kind, o.Name)
	case svc.DeletionTimestamp != nil:
		return "is being deleted"
	case svc.Spec.Type != "" && svc.Spec.Type != corev1.ServiceTypeClusterIP:
		return fmt.Sprintf("spec.type is %s, not ClusterIP", svc.Spec.Type)
	case svc.Spec.ExternalName != "":
		return fmt.Sprintf("spec.externalName is set (%.253s)", svc.Spec.ExternalName)
	case !selectsJobManager(svc.Spec.Selector, o.Name, hash):
		return fmt.Sprintf("spec.selector is not the JobManager pods' (%s=%s, %s=%s, %s=%s)",
			AppLabel, o.Name, HashLabel, hash, ComponentLabel, JobManagerComponent)
	}
	return ""
}

// selectsJobManager tells whether a selector is exactly podLabels of the owner's JobManager with
// this hash. A pass asks it before each call; it builds no map.
func selectsJobManager(selector map[string]string, owner, hash string) bool {
	return len(selector) == 3 && selector[AppLabel] == owner && selector[HashLabel] == hash &&
		selector[ComponentLabel] == JobManagerComponent
}
