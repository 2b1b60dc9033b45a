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

// The names of a cluster's objects derive from its owner's name and the cluster's hash alone, so
// that whoever knows the owner's name (a session job knows its cluster's) can find them.

// JobManagerNameOf is the name of the JobManager Deployment of owner's cluster with this hash.
func JobManagerNameOf(owner, hash string) string { return owner + "-" + hash + "-jm" }

// TaskManagerNameOf is the name of the TaskManager Deployment of owner's cluster with this hash.
func TaskManagerNameOf(owner, hash string) string { return owner + "-" + hash + "-tm" }

// VersionedServiceNameOf is the Service of the JobManager of owner's cluster with this hash: the
// address the operator sends that cluster's REST calls to, and the cluster's jobmanager.rpc.address.
func VersionedServiceNameOf(owner, hash string) string { return owner + "-" + hash }

// VersionServiceNameOf is the Service of a BlueGreen colour: <owner>-blue or <owner>-green.
func VersionServiceNameOf(owner string, version v1beta1.FlinkApplicationVersion) string {
	return owner + "-" + string(version)
}

// GenericServiceNameOf is the stable Service that follows the live cluster's JobManager, for users
// and ingresses that should not care which cluster is live.
func GenericServiceNameOf(owner string) string { return owner }
