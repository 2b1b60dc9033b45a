package flink

import (
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	corev1 "k8s.io/api/core/v1"
)

// The FlinkApplication forms of what this package renders and reads. Each is its ClusterOwner (or
// name, or Flink configuration) form applied to OwnerFromApplication(app), kept so that the
// application's controller reads as it did; other kinds call the other forms directly.

// RenderCluster renders the application's cluster with this hash; see ClusterOwner.RenderCluster.
func RenderCluster(app *v1beta1.FlinkApplication, hash string, version v1beta1.FlinkApplicationVersion) (*Cluster, error) {
	return OwnerFromApplication(app).RenderCluster(hash, version)
}

// RenderGenericService renders the application's stable Service; see ClusterOwner.RenderGenericService.
func RenderGenericService(app *v1beta1.FlinkApplication, hash string) *corev1.Service {
	return OwnerFromApplication(app).RenderGenericService(hash)
}

// RenderFlinkConfig renders the Flink configuration of the application's cluster with this hash;
// see ClusterOwner.RenderFlinkConfig.
func RenderFlinkConfig(app *v1beta1.FlinkApplication, hash string) (jm, tm string, err error) {
	return OwnerFromApplication(app).RenderFlinkConfig(hash)
}

// JobManagerName is the name of the JobManager Deployment of the cluster with this hash.
func JobManagerName(app *v1beta1.FlinkApplication, hash string) string {
	return JobManagerNameOf(app.Name, hash)
}

// TaskManagerName is the name of the TaskManager Deployment of the cluster with this hash.
func TaskManagerName(app *v1beta1.FlinkApplication, hash string) string {
	return TaskManagerNameOf(app.Name, hash)
}

// VersionedServiceName is the Service of one cluster's JobManager; see VersionedServiceNameOf.
func VersionedServiceName(app *v1beta1.FlinkApplication, hash string) string {
	return VersionedServiceNameOf(app.Name, hash)
}

// VersionServiceName is the Service of a BlueGreen colour: <app>-blue or <app>-green.
func VersionServiceName(app *v1beta1.FlinkApplication, version v1beta1.FlinkApplicationVersion) string {
	return VersionServiceNameOf(app.Name, version)
}

// GenericServiceName is the application's stable Service; see GenericServiceNameOf.
func GenericServiceName(app *v1beta1.FlinkApplication) string { return GenericServiceNameOf(app.Name) }

// TaskSlots is the number of task slots in each TaskManager.
func TaskSlots(app *v1beta1.FlinkApplication) int32 { return OwnerFromApplication(app).TaskSlots() }

// TaskManagerReplicas is the fewest TaskManagers whose slots fit the job's parallelism, at least 1.
func TaskManagerReplicas(app *v1beta1.FlinkApplication) int32 {
	return OwnerFromApplication(app).TaskManagers
}

// JobManagerReplicas is the number of JobManager pods; more than one only helps with high availability.
func JobManagerReplicas(app *v1beta1.FlinkApplication) int32 {
	return OwnerFromApplication(app).JobManagerReplicas()
}

// RPCPort is the JobManager's RPC port (jobmanager.rpc.port).
func RPCPort(app *v1beta1.FlinkApplication) int32 { return OwnerFromApplication(app).RPCPort() }

// BlobPort is the blob server port (blob.server.port).
func BlobPort(app *v1beta1.FlinkApplication) int32 { return OwnerFromApplication(app).BlobPort() }

// QueryPort is the queryable state port (query.server.port).
func QueryPort(app *v1beta1.FlinkApplication) int32 { return OwnerFromApplication(app).QueryPort() }

// UIPort is the JobManager's REST and web UI port (rest.port); the operator's REST calls use it too.
func UIPort(app *v1beta1.FlinkApplication) int32 { return OwnerFromApplication(app).UIPort() }

// MetricsQueryPort is the port of Flink's internal metrics query service.
func MetricsQueryPort(app *v1beta1.FlinkApplication) int32 {
	return OwnerFromApplication(app).MetricsQueryPort()
}

// JobManagerResources is the JobManager container's resources; see ClusterOwner.JobManagerResources.
func JobManagerResources(app *v1beta1.FlinkApplication) corev1.ResourceRequirements {
	return OwnerFromApplication(app).JobManagerResources()
}

// TaskManagerResources is the TaskManager container's resources; see ClusterOwner.TaskManagerResources.
func TaskManagerResources(app *v1beta1.FlinkApplication) corev1.ResourceRequirements {
	return OwnerFromApplication(app).TaskManagerResources()
}

// RetainsCheckpointsOnCancel tells whether the application's checkpoints survive a cancel.
func RetainsCheckpointsOnCancel(app *v1beta1.FlinkApplication) bool {
	return ConfigRetainsCheckpointsOnCancel(app.Spec.FlinkConfig)
}

// CheckpointSurvival is how long the application's completed checkpoints are sure to stay on
// storage; see ConfigCheckpointSurvival.
func CheckpointSurvival(app *v1beta1.FlinkApplication) (time.Duration, bool) {
	return ConfigCheckpointSurvival(app.Spec.FlinkConfig)
}

// AdaptiveScheduler tells whether the application's clusters run Flink's adaptive scheduler; see
// ConfigSelectsAdaptiveScheduler.
func AdaptiveScheduler(app *v1beta1.FlinkApplication) bool {
	return ConfigSelectsAdaptiveScheduler(app.Spec.FlinkConfig)
}

// HighAvailability tells whether the application's clusters run Flink HA; see ConfigHasHighAvailability.
func HighAvailability(app *v1beta1.FlinkApplication) bool {
	return ConfigHasHighAvailability(app.Spec.FlinkConfig)
}

// Check names the first field of the application whose pods the policy does not allow; see
// PodPolicy.CheckCluster.
func (p PodPolicy) Check(app *v1beta1.FlinkApplication) error {
	return p.CheckCluster(OwnerFromApplication(app))
}
