package migrate

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// ApacheGroup is the Apache Flink Kubernetes operator's API group.
const ApacheGroup = "flink.apache.org"

// apacheVersion is the version its objects are read and patched in: 1.16 serves only this one.
const apacheVersion = "v1beta1"

// Kind is a kind of Apache object a migration moves, and the flinkfsm kind it becomes.
type Kind struct {
	// Name is the Apache kind, as its objects, FlinkStateSnapshots' spec.jobReference.kind and
	// messages spell it.
	Name string
	// Resource is its plural resource name.
	Resource string
	// Target is the flinkfsm kind it is converted to.
	Target string
}

var (
	// FlinkDeployment in application mode (spec.job set) becomes a FlinkApplication.
	FlinkDeployment = Kind{Name: "FlinkDeployment", Resource: "flinkdeployments", Target: v1beta1.FlinkApplicationKind}
	// FlinkSessionJob becomes a FlinkSessionJob on the FlinkSessionCluster of the same cluster name.
	FlinkSessionJob = Kind{Name: "FlinkSessionJob", Resource: "flinksessionjobs", Target: v1beta1.FlinkSessionJobKind}
)

// Resource returns the group, version and resource a dynamic client reads the kind with.
func (k Kind) resource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: ApacheGroup, Version: apacheVersion, Resource: k.Resource}
}

// Resources the migration reads besides the two kinds it moves: the snapshots the Apache operator
// records a suspend's savepoint in when kubernetes.operator.snapshot.resource.enabled is on.
var (
	// FlinkDeployments is the Apache FlinkDeployment resource.
	FlinkDeployments = FlinkDeployment.resource()
	// FlinkSessionJobs is the Apache FlinkSessionJob resource.
	FlinkSessionJobs = FlinkSessionJob.resource()
	// FlinkStateSnapshots is the Apache FlinkStateSnapshot resource.
	FlinkStateSnapshots = schema.GroupVersionResource{Group: ApacheGroup, Version: apacheVersion, Resource: "flinkstatesnapshots"}
)

// ListKinds names the list kind of each Apache resource, which a fake dynamic client needs to list.
var ListKinds = map[schema.GroupVersionResource]string{
	FlinkDeployments:    "FlinkDeploymentList",
	FlinkSessionJobs:    "FlinkSessionJobList",
	FlinkStateSnapshots: "FlinkStateSnapshotList",
}

// ParseObject reads KIND/NAME as kubectl spells the Apache kinds: flinkdeployment/NAME (plural,
// the short name flinkdep, or with .flink.apache.org) or flinksessionjob/NAME (or sessionjob).
func ParseObject(arg string) (Kind, string, error) {
	kind, name, found := strings.Cut(arg, "/")
	if !found || name == "" || strings.Contains(name, "/") {
		return Kind{}, "", fmt.Errorf("%q: name the Apache object as flinkdeployment/NAME or flinksessionjob/NAME", arg)
	}
	switch strings.TrimSuffix(strings.ToLower(kind), "."+ApacheGroup) {
	case "flinkdeployment", "flinkdeployments", "flinkdep":
		return FlinkDeployment, name, nil
	case "flinksessionjob", "flinksessionjobs", "sessionjob":
		return FlinkSessionJob, name, nil
	}
	return Kind{}, "", fmt.Errorf("%q: migrate moves an Apache FlinkDeployment (flinkdeployment/NAME) or FlinkSessionJob (flinksessionjob/NAME)", arg)
}
