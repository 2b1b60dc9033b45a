package flink

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// Labels the operator puts on its objects; see package k8.
const (
	AppLabel       = k8.AppLabel
	HashLabel      = k8.HashLabel
	ComponentLabel = k8.ComponentLabel
	// VersionLabel carries a BlueGreen version's colour on its pods and objects, as the Lyft
	// operator names it.
	VersionLabel = "flink-application-version"
)

// VersionEnv is the environment variable that tells a BlueGreen version's processes their colour.
const VersionEnv = "FLINK_APPLICATION_VERSION"

// Values of ComponentLabel, and the argument the Flink image's entrypoint takes to start each component.
const (
	JobManagerComponent  = "jobmanager"
	TaskManagerComponent = "taskmanager"
)

// Lyft's defaults, kept so that its users' manifests produce the same clusters.
const (
	DefaultTaskSlots        int32 = 16
	DefaultJobManagers      int32 = 1
	DefaultRPCPort          int32 = 6123
	DefaultQueryPort        int32 = 6124
	DefaultBlobPort         int32 = 6125
	DefaultUIPort           int32 = 8081
	DefaultMetricsQueryPort int32 = 50101
)

// JobManagerName is the name of the JobManager Deployment of the cluster with this hash.
func JobManagerName(app *v1beta1.FlinkApplication, hash string) string {
	return app.Name + "-" + hash + "-jm"
}

// TaskManagerName is the name of the TaskManager Deployment of the cluster with this hash.
func TaskManagerName(app *v1beta1.FlinkApplication, hash string) string {
	return app.Name + "-" + hash + "-tm"
}

// VersionedServiceName is the Service of one cluster's JobManager: the address the operator sends
// that cluster's REST calls to, and the cluster's jobmanager.rpc.address.
func VersionedServiceName(app *v1beta1.FlinkApplication, hash string) string {
	return app.Name + "-" + hash
}

// VersionServiceName is the Service of a BlueGreen colour: <app>-blue or <app>-green.
func VersionServiceName(app *v1beta1.FlinkApplication, version v1beta1.FlinkApplicationVersion) string {
	return app.Name + "-" + string(version)
}

// GenericServiceName is the stable Service that follows the live cluster's JobManager, for users and
// ingresses that should not care which cluster is live.
func GenericServiceName(app *v1beta1.FlinkApplication) string {
	return app.Name
}

// TaskSlots is the number of task slots in each TaskManager.
func TaskSlots(app *v1beta1.FlinkApplication) int32 {
	if s := app.Spec.TaskManagerConfig.TaskSlots; s != nil && *s > 0 {
		return *s
	}
	return DefaultTaskSlots
}

// TaskManagerReplicas is the fewest TaskManagers whose slots fit the job's parallelism. A parallelism
// below 1 (which the CRD rejects) counts as 1, so that a cluster always has a TaskManager.
func TaskManagerReplicas(app *v1beta1.FlinkApplication) int32 {
	// In int64, because parallelism + slots - 1 overflows an int32 near its maximum: parallelism
	// 2147483647 over 2 slots would come to a negative count. The quotient always fits.
	p, slots := int64(max(app.Spec.Parallelism, 1)), int64(TaskSlots(app))
	return int32((p + slots - 1) / slots)
}

// JobManagerReplicas is the number of JobManager pods; more than one only helps with high availability.
func JobManagerReplicas(app *v1beta1.FlinkApplication) int32 {
	if r := app.Spec.JobManagerConfig.Replicas; r != nil && *r > 0 {
		return *r
	}
	return DefaultJobManagers
}

// RPCPort is the JobManager's RPC port (jobmanager.rpc.port).
func RPCPort(app *v1beta1.FlinkApplication) int32 { return portOr(app.Spec.RPCPort, DefaultRPCPort) }

// BlobPort is the blob server port (blob.server.port).
func BlobPort(app *v1beta1.FlinkApplication) int32 { return portOr(app.Spec.BlobPort, DefaultBlobPort) }

// QueryPort is the queryable state port (query.server.port).
func QueryPort(app *v1beta1.FlinkApplication) int32 {
	return portOr(app.Spec.QueryPort, DefaultQueryPort)
}

// UIPort is the JobManager's REST and web UI port (rest.port); the operator's REST calls use it too.
func UIPort(app *v1beta1.FlinkApplication) int32 { return portOr(app.Spec.UIPort, DefaultUIPort) }

// MetricsQueryPort is the port of Flink's internal metrics query service.
func MetricsQueryPort(app *v1beta1.FlinkApplication) int32 {
	return portOr(app.Spec.MetricsQueryPort, DefaultMetricsQueryPort)
}

func portOr(p *int32, def int32) int32 {
	if p != nil && *p > 0 {
		return *p
	}
	return def
}
