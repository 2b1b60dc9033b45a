package kindpass

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// Flink's Kubernetes HA services leave ConfigMaps behind every cluster that ran with HA (package
// flink, HAConfigMapCluster), and each update of an application runs a new cluster under a new
// cluster id. They are removed here once nothing can need them:
//
//   - while the object lives, those of a cluster that is gone (no JobManager Deployment and no
//     JobManager pod left to write them again) and that no record of the object still names: not
//     the running cluster, not one being deployed, not the spec's. The operator deletes a cluster
//     only once its job is stopped with its state recorded in the ledger, or never ran; the running
//     cluster's are kept, because with HA a JobManager created again recovers its job from them;
//   - when the object is deleted, once its job was stopped per deleteMode: the clusters are deleted
//     then rather than by garbage collection afterwards, and the finalizer waits (at most
//     HACleanupWait) for their JobManager pods to go. deleteMode None leaves Flink alone, so its HA
//     ConfigMaps stay with the state they point to; so do a FlinkSessionCluster's while a job's
//     own HA ConfigMap says that Flink has not finished with that job.

// The HA ConfigMaps of a cluster id are the object's own only when its status names that cluster
// (OwnClusterHashes), and go only when the guardian of durable state knows nothing that still needs
// them (durable_state.go): a namesake's, an object of another kind of the same name, are left.

// HACleanupWait bounds how long a deletion waits for its JobManager pods to go before it removes
// their HA ConfigMaps. Past it the object goes and an Event names what is left.
const HACleanupWait = 5 * time.Minute

// RemoveLeftHAConfigMaps deletes the HA ConfigMaps of the object's clusters that are gone for good.
// A failed delete is tried again at the next pass; it never holds the object's own work.
func RemoveLeftHAConfigMaps(p *Pass) {
	if p.Owned == nil || len(p.HAConfigMaps) == 0 || p.Meta.DeletionTimestamp != nil {
		return
	}
	var g *guardian.Namespace
	own := OwnClusterHashes(p)
	for _, hash := range slices.Sorted(maps.Keys(p.HAConfigMaps)) {
		if haClusterInUse(p, hash) || !own[hash] {
			continue
		}
		if g == nil {
			g = haGuardian(p, true)
		}
		if !mayRemoveHAConfigMaps(p, g, own, hash) {
			continue
		}
		if err := deleteHAConfigMaps(p, hash); err != nil {
			klog.FromContext(p).Error(err, "removing Flink HA ConfigMaps", "cluster", flink.HAClusterIDOf(p.Meta.Name, hash))
			return
		}
	}
}

// haClusterInUse tells whether the cluster with this hash may still run, or run again, from its HA
// ConfigMaps: the object's spec, deployment and records name it, or its JobManager is still there.
func haClusterInUse(p *Pass, hash string) bool {
	inUse := []string{p.Hash, p.Owned.DeployHash, p.Owned.UpdatingHash}
	if j := p.Job; j != nil {
		for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(j), jobstate.Candidate(j)} {
			if r != nil {
				inUse = append(inUse, r.ClusterHash)
			}
		}
	}
	return clusters.HAClusterInUse(hash, p.Clusters[hash], inUse...)
}

// deleteHAConfigMaps deletes the HA ConfigMaps of the cluster with this hash, as many as a pass
// deletes, and says so (clusters.DeleteHAConfigMaps).
func deleteHAConfigMaps(p *Pass, hash string) error {
	left, events, err := clusters.DeleteHAConfigMaps(p, p.Writer(), p.Meta.Name, hash, p.HAConfigMaps[hash])
	if err != nil {
		return lifecycle.StepError(err)
	}
	p.HAConfigMaps[hash] = left
	if len(left) == 0 {
		delete(p.HAConfigMaps, hash)
	}
	p.Announce(events)
	return nil
}

// RemoveHAConfigMapsBeforeFinalizer runs when the object is about to let its finalizer go, its job
// stopped. It reports true, with what to do, while the finalizer must wait.
func RemoveHAConfigMapsBeforeFinalizer(p *Pass) (fsm.Outcome, bool) {
	if p.Owned == nil || len(p.HAConfigMaps) == 0 {
		return fsm.Outcome{}, false
	}
	if p.Settings != nil && p.Settings.DeleteMode == v1beta1.DeleteModeNone {
		return fsm.Outcome{}, false
	}
	if job := HAJobLeft(p); job != "" {
		p.Event(true, "HAConfigMapsKept", fmt.Sprintf("Flink's HA ConfigMaps are kept: %s. Remove them with "+
			"kubectl delete configmap -l %s once the job's state is no longer needed", job, haSelectorsOf(p)))
		return fsm.Outcome{}, false
	}
	if clusters.JobManagersLeft(p.Clusters) {
		if _, err := p.DeleteClustersExcept(); err != nil {
			return fsm.Failed(err), true
		}
		if p.Meta.DeletionTimestamp != nil && p.Now.After(p.Meta.DeletionTimestamp.Add(HACleanupWait)) {
			p.Event(true, "HAConfigMapsKept", fmt.Sprintf("JobManager pods still run %s after the deletion, so Flink's HA "+
				"ConfigMaps are left; remove them with kubectl delete configmap -l %s once the pods are gone", HACleanupWait, haSelectorsOf(p)))
			return fsm.Outcome{}, false
		}
		const msg = "waiting for the JobManager pods to go before removing Flink's HA ConfigMaps, which a running JobManager writes again"
		if p.Machine.Reason == msg {
			return fsm.Stay(0), true
		}
		return fsm.Outcome{Reason: "RemovingHAConfigMaps", Message: msg}, true
	}
	g, own := haGuardian(p, false), OwnClusterHashes(p)
	more := false
	for _, hash := range slices.Sorted(maps.Keys(p.HAConfigMaps)) {
		if !mayRemoveHAConfigMaps(p, g, own, hash) {
			continue
		}
		if err := deleteHAConfigMaps(p, hash); err != nil {
			return fsm.Failed(err), true
		}
		more = more || len(p.HAConfigMaps[hash]) > 0
	}
	if more {
		// More than a pass deletes: the finalizer waits for the next.
		return fsm.Stay(0), true
	}
	return fsm.Outcome{}, false
}

// HAJobLeft names, for a FlinkSessionCluster, a job whose own HA ConfigMap is still there
// (clusters.HAJobLeft). A FlinkApplication stops its job, or records its state, before it lets go.
func HAJobLeft(p *Pass) string {
	if p.Job != nil {
		return ""
	}
	return clusters.HAJobLeft(p.Meta.Name, p.HAConfigMaps)
}

// NamesakesHAData says, when the cluster the spec asks for would start over HA ConfigMaps that are
// not this object's (an earlier object of its name, deleted with deleteMode None, left them with
// the same spec), what they are: a JobManager of that cluster id would recover that object's job as
// this one's cluster's, and this object would then run someone else's job. "" when there are none.
func NamesakesHAData(p *Pass) string {
	names := p.HAConfigMaps[p.Hash]
	if len(names) == 0 || OwnClusterHashes(p)[p.Hash] {
		return ""
	}
	id := flink.HAClusterIDOf(p.Meta.Name, p.Hash)
	return fmt.Sprintf("Flink HA ConfigMaps of cluster id %s exist that this object did not write (%s): an earlier object of "+
		"this name left them, and a JobManager of that id would recover its job as this one's. Delete them once that job's "+
		"state is no longer needed (kubectl delete configmap -l %s), or change spec.restartNonce to deploy under another "+
		"cluster id", id, clusters.NamesWithin(names, 300), flink.HAConfigMapsOf(id))
}

// haSelectorsOf is the label selector of the HA ConfigMaps of the object's clusters that are left,
// for the commands its messages suggest (clusters.HASelectors).
func haSelectorsOf(p *Pass) string { return clusters.HASelectors(p.Meta.Name, p.HAConfigMaps) }
