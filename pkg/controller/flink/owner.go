package flink

import (
	"math"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClusterOwner is what rendering a Flink cluster needs of the object that owns it, whatever its kind.
// A FlinkApplication and a FlinkSessionCluster each build one (OwnerFromApplication,
// OwnerFromSessionCluster), so that neither has to be dressed as the other to be rendered; a kind
// added later builds one the same way.
//
// The constructors copy the object shallowly: the value shares the object's maps and slices, which
// rendering reads and never writes, and every rendered object gets copies of its own.
type ClusterOwner struct {
	// ObjectMeta is the owner's metadata. Its name and namespace name and place the cluster's
	// objects, its UID goes into their owner references, its labels and annotations are copied to
	// the pods (see objectLabels, podAnnotations) and its AppArmor annotations are checked by the
	// pod policy.
	metav1.ObjectMeta
	// Kind is the owner's kind, for the owner references that let the garbage collector delete the
	// cluster with its owner.
	Kind schema.GroupVersionKind

	// Spec shapes the cluster: images, pods, ports, volumes and the Flink configuration.
	Spec v1beta1.ClusterSpec
	// TaskManagerConfig shapes the TaskManager pods. It is not in ClusterSpec because a session
	// cluster's carries a TaskManager count and an application's does not.
	TaskManagerConfig v1beta1.TaskManagerConfig
	// TaskManagers is how many TaskManager pods run: for an application the fewest whose slots fit
	// its parallelism, for a session cluster its replicas.
	TaskManagers int32
	// Parallelism is the number of task slots the owner's jobs are sized to: an application's
	// spec.parallelism as written, a session cluster's replicas × taskSlots. Only the hash reads it.
	Parallelism int32
	// RestartNonce starts a new cluster when it changes; only the hash reads it.
	RestartNonce string
	// JarInImage is the path in the image of the jar the JobManager copies into its upload directory
	// each time it starts (an application's jarURI); "" for none.
	JarInImage string
	// KeepCheckpointsFor is how long after the next checkpoint is due a completed one must stay on
	// storage for the operator's records of it (see CheckpointsToRetain); 0 leaves Flink's retention
	// as the spec sets it. The operator's configuration decides it, so the hash never reads it.
	KeepCheckpointsFor time.Duration
}

// sessionClusterKind is the kind in the owner references of a session cluster's objects. It is
// fixed rather than read from TypeMeta, which typed clients leave empty.
var sessionClusterKind = v1beta1.SchemeGroupVersion.WithKind("FlinkSessionCluster")

// OwnerFromApplication is the owner of a FlinkApplication's clusters. Its kind is the one app's
// TypeMeta names, FlinkApplication when it names none, so that an application view of another kind
// keeps producing that kind's owner references.
func OwnerFromApplication(app *v1beta1.FlinkApplication) ClusterOwner {
	o := ClusterOwner{
		ObjectMeta:        app.ObjectMeta,
		Kind:              k8.ApplicationKind(app),
		Spec:              app.Spec.ClusterSpec,
		TaskManagerConfig: app.Spec.TaskManagerConfig,
		Parallelism:       app.Spec.Parallelism,
		RestartNonce:      string(app.Spec.RestartNonce),
		JarInImage:        app.Spec.JarInImage(),
	}
	// The fewest TaskManagers whose slots fit the parallelism. A parallelism below 1 (which the CRD
	// rejects) counts as 1, so that a cluster always has a TaskManager. In int64, because
	// parallelism + slots - 1 overflows an int32 near its maximum: parallelism 2147483647 over 2
	// slots would come to a negative count. The quotient always fits.
	p, slots := int64(max(app.Spec.Parallelism, 1)), int64(o.TaskSlots())
	o.TaskManagers = int32((p + slots - 1) / slots)
	return o
}

// OwnerFromSessionCluster is the owner of a FlinkSessionCluster's clusters: replicas TaskManagers
// (1 when unset or below 1), sized as if to a parallelism of replicas × taskSlots.
func OwnerFromSessionCluster(c *v1beta1.FlinkSessionCluster) ClusterOwner {
	o := ClusterOwner{
		ObjectMeta:        c.ObjectMeta,
		Kind:              sessionClusterKind,
		Spec:              c.Spec.ClusterSpec,
		TaskManagerConfig: c.Spec.TaskManagerConfig.TaskManagerConfig,
		TaskManagers:      1,
		RestartNonce:      string(c.Spec.RestartNonce),
	}
	if r := c.Spec.TaskManagerConfig.Replicas; r != nil && *r > 0 {
		o.TaskManagers = *r
	}
	// In int64: a product past an int32 would wrap. It is clamped, as the session cluster's hash has
	// always had it; such a spec is refused before it deploys.
	o.Parallelism = int32(min(int64(o.TaskManagers)*int64(o.TaskSlots()), math.MaxInt32))
	return o
}

// ownerReference makes the owner the controller of one of its cluster's objects.
func (o *ClusterOwner) ownerReference() metav1.OwnerReference {
	return k8.ControllerReference(&o.ObjectMeta, o.Kind)
}

// IsOwnerOf reports whether the owner is the controller of obj; see k8.IsControlledBy.
func (o *ClusterOwner) IsOwnerOf(obj metav1.Object) bool {
	return k8.IsControlledByName(obj, o.Name, o.UID, o.Kind)
}

// TaskSlots is the number of task slots in each TaskManager.
func (o ClusterOwner) TaskSlots() int32 {
	if s := o.TaskManagerConfig.TaskSlots; s != nil && *s > 0 {
		return *s
	}
	return DefaultTaskSlots
}

// JobManagerReplicas is the number of JobManager pods; more than one only helps with high availability.
func (o ClusterOwner) JobManagerReplicas() int32 {
	if r := o.Spec.JobManagerConfig.Replicas; r != nil && *r > 0 {
		return *r
	}
	return DefaultJobManagers
}

// RPCPort is the JobManager's RPC port (jobmanager.rpc.port).
func (o ClusterOwner) RPCPort() int32 { return portOr(o.Spec.RPCPort, DefaultRPCPort) }

// BlobPort is the blob server port (blob.server.port).
func (o ClusterOwner) BlobPort() int32 { return portOr(o.Spec.BlobPort, DefaultBlobPort) }

// QueryPort is the queryable state port (query.server.port).
func (o ClusterOwner) QueryPort() int32 { return portOr(o.Spec.QueryPort, DefaultQueryPort) }

// UIPort is the JobManager's REST and web UI port (rest.port); the operator's REST calls use it too.
func (o ClusterOwner) UIPort() int32 { return portOr(o.Spec.UIPort, DefaultUIPort) }

// MetricsQueryPort is the port of Flink's internal metrics query service.
func (o ClusterOwner) MetricsQueryPort() int32 {
	return portOr(o.Spec.MetricsQueryPort, DefaultMetricsQueryPort)
}

func portOr(p *int32, def int32) int32 {
	if p != nil && *p > 0 {
		return *p
	}
	return def
}
