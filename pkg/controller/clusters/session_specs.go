package clusters

import (
	"encoding/json"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// A FlinkSessionCluster records the spec each Flink cluster it runs or keeps was rendered from
// (status.clusters); both session kinds read it.

// RecordedSessionSpec is the spec the session cluster's Flink cluster of hash was rendered from, as
// its status records it; ok is false when it records none (a cluster created by an older operator).
func RecordedSessionSpec(st *v1beta1.FlinkSessionClusterStatus, hash string) (v1beta1.FlinkSessionClusterSpec, bool) {
	for _, r := range st.Clusters {
		if r.Hash == hash && hash != "" {
			var spec v1beta1.FlinkSessionClusterSpec
			if json.Unmarshal([]byte(r.Spec), &spec) == nil {
				return spec, true
			}
		}
	}
	return v1beta1.FlinkSessionClusterSpec{}, false
}

// SessionKeepsJobs tells whether Flink HA brings the jobs of the session cluster's Flink cluster of
// hash back with its JobManager: the cluster runs it with HA, as deployed or as its recorded spec
// says, or, with no spec recorded, HA ConfigMaps of it are left (ha, by hash). A session cluster
// being deleted keeps nothing.
func SessionKeepsJobs(c *v1beta1.FlinkSessionCluster, hash string, ha map[string][]string) bool {
	if c == nil || c.DeletionTimestamp != nil {
		return false
	}
	if c.Status.DeployHash == hash && flink.ConfigHasHighAvailability(c.Spec.FlinkConfig) {
		return true
	}
	if spec, ok := RecordedSessionSpec(&c.Status, hash); ok {
		// The session cluster keeps that cluster while jobs are on it, and creates its JobManager
		// again when it ran with HA, whatever HA type it ran with.
		return flink.ConfigHasHighAvailability(spec.FlinkConfig)
	}
	return len(ha[hash]) > 0
}
