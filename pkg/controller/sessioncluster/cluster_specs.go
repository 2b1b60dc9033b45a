package sessioncluster

import (
	"encoding/json"
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// A FlinkSessionCluster records the spec each Flink cluster it runs or keeps was rendered from
// (status.clusters). A kept cluster is one that session jobs still have jobs on after the spec
// changed: its objects that go missing are created again as they were, its JobManager included,
// which Flink HA needs to bring the cluster's jobs back so that they can move (attack review s8: a
// session job waited for hours for a JobManager nothing created again). A session job reads from
// it whether its job's cluster runs with HA (clusters.SessionKeepsJobs), whatever the spec says now.

// maxClusterSpecs bounds status.clusters (the CRD says the same): the running cluster, the one
// being started and the kept ones.
const maxClusterSpecs = 8

// status is the session cluster's status as the pass works on it.
func (p *Pass) status() *v1beta1.FlinkSessionClusterStatus { return &p.Cluster.Status }

// recordClusterSpec records the spec as it is now as the one the cluster of hash is rendered from.
func recordClusterSpec(p *Pass, hash string) error {
	b, err := json.Marshal(p.cached.Spec)
	if err != nil {
		return err
	}
	st := p.status()
	for i := range st.Clusters {
		if st.Clusters[i].Hash == hash {
			st.Clusters[i].Spec = string(b)
			return nil
		}
	}
	st.Clusters = append(st.Clusters, v1beta1.SessionClusterSpecRecord{Hash: hash, Spec: string(b)})
	for len(st.Clusters) > maxClusterSpecs {
		dropped := false
		for i, r := range st.Clusters {
			if r.Hash != st.DeployHash && r.Hash != st.UpdatingHash && r.Hash != hash {
				st.Clusters = append(st.Clusters[:i], st.Clusters[i+1:]...)
				dropped = true
				break
			}
		}
		if !dropped {
			break
		}
	}
	return nil
}

// ownerOfCluster is what the cluster of hash is rendered from: the recorded spec, over the session
// cluster's metadata; the spec as it is now when none is recorded.
func ownerOfCluster(p *Pass, hash string) flink.ClusterOwner {
	spec, ok := clusters.RecordedSessionSpec(p.status(), hash)
	if !ok {
		return p.ClusterOwner
	}
	c := p.cached.DeepCopy()
	c.Spec = spec
	return flink.OwnerFromSessionCluster(c)
}

// keepClusterSpecs records the running cluster's spec when an older operator did not and the spec
// is still its own, and forgets the records of clusters that are gone and neither run nor started.
func keepClusterSpecs(p *Pass) error {
	st := p.status()
	if _, ok := clusters.RecordedSessionSpec(st, st.DeployHash); !ok && st.DeployHash != "" && st.DeployHash == p.Hash {
		if err := recordClusterSpec(p, st.DeployHash); err != nil {
			return err
		}
	}
	kept := st.Clusters[:0]
	for _, r := range st.Clusters {
		if c := p.Clusters[r.Hash]; r.Hash == st.DeployHash || r.Hash == st.UpdatingHash || r.Hash == p.Hash ||
			c != nil && (c.JobManager != nil || c.TaskManager != nil || c.Service != nil) {
			kept = append(kept, r)
		}
	}
	st.Clusters = kept
	return nil
}

// bringBackJobManagers creates again the missing objects of a kept cluster that ran with Flink HA
// and has jobs on it, from the spec it was rendered from: its JobManager recovers the jobs, which
// then move to the running cluster.
func bringBackJobManagers(p *Pass) error {
	st := p.status()
	for hash, c := range p.Clusters {
		if hash == st.DeployHash || hash == st.UpdatingHash || c.JobManager != nil {
			continue
		}
		spec, ok := clusters.RecordedSessionSpec(st, hash)
		if !ok || !flink.ConfigHasHighAvailability(spec.FlinkConfig) || len(jobsOnCluster(p, hash)) == 0 && !jobstate.LeftJobOn(st, hash) {
			continue
		}
		if err := createCluster(p, ownerOfCluster(p, hash), hash); err != nil {
			return err
		}
		p.Event(true, "ClusterRecreated", fmt.Sprintf("the JobManager of Flink cluster %s was missing and was created again from the spec "+
			"it was rendered from: Flink HA recovers its jobs, which then move to %s", flink.VersionedServiceNameOf(p.Meta.Name, hash),
			flink.VersionedServiceNameOf(p.Meta.Name, st.DeployHash)))
	}
	return nil
}
