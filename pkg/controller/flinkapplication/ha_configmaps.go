package flinkapplication

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
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
//     haCleanupWait) for their JobManager pods to go. deleteMode None leaves Flink alone, so its HA
//     ConfigMaps stay with the state they point to; so do a FlinkSessionCluster's while a job's
//     own HA ConfigMap says that Flink has not finished with that job.

// The HA ConfigMaps of a cluster id are the object's own only when its status names that cluster
// (ownClusterHashes), and go only when the guardian of durable state knows nothing that still needs
// them (durable_state.go): a namesake's, an object of another kind of the same name, are left.

// haCleanupWait bounds how long a deletion waits for its JobManager pods to go before it removes
// their HA ConfigMaps. Past it the object goes and an Event names what is left.
const haCleanupWait = 5 * time.Minute

// removeLeftHAConfigMaps deletes the HA ConfigMaps of the object's clusters that are gone for good.
// A failed delete is tried again at the next pass; it never holds the object's own work.
func removeLeftHAConfigMaps(rc *Context) {
	if rc.Owned == nil || len(rc.HAConfigMaps) == 0 || rc.Meta.DeletionTimestamp != nil {
		return
	}
	var g *guardian.Namespace
	own := ownClusterHashes(rc)
	for _, hash := range slices.Sorted(maps.Keys(rc.HAConfigMaps)) {
		if haClusterInUse(rc, hash) || !own[hash] {
			continue
		}
		if g == nil {
			g = haGuardian(rc, true)
		}
		if !mayRemoveHAConfigMaps(rc, g, own, hash) {
			continue
		}
		if err := deleteHAConfigMaps(rc, hash); err != nil {
			klog.FromContext(rc).Error(err, "removing Flink HA ConfigMaps", "cluster", flink.HAClusterIDOf(rc.Meta.Name, hash))
			return
		}
	}
}

// haClusterInUse tells whether the cluster with this hash may still run, or run again, from its HA
// ConfigMaps: the object's spec, deployment and records name it, or its JobManager is still there.
func haClusterInUse(rc *Context, hash string) bool {
	inUse := []string{rc.Hash, rc.Owned.DeployHash, rc.Owned.UpdatingHash}
	if j := rc.Job; j != nil {
		for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(j), jobstate.Candidate(j)} {
			if r != nil {
				inUse = append(inUse, r.ClusterHash)
			}
		}
	}
	return clusters.HAClusterInUse(hash, rc.Clusters[hash], inUse...)
}

// deleteHAConfigMaps deletes the HA ConfigMaps of the cluster with this hash, as many as a pass
// deletes, and says so (clusters.DeleteHAConfigMaps).
func deleteHAConfigMaps(rc *Context, hash string) error {
	left, events, err := clusters.DeleteHAConfigMaps(rc, rc.Writer(), rc.Meta.Name, hash, rc.HAConfigMaps[hash])
	if err != nil {
		return stepError(err)
	}
	rc.HAConfigMaps[hash] = left
	if len(left) == 0 {
		delete(rc.HAConfigMaps, hash)
	}
	rc.Announce(events)
	return nil
}

// removeHAConfigMapsBeforeFinalizer runs when the object is about to let its finalizer go, its job
// stopped. It reports true, with what to do, while the finalizer must wait.
func removeHAConfigMapsBeforeFinalizer(rc *Context) (Outcome, bool) {
	if rc.Owned == nil || len(rc.HAConfigMaps) == 0 {
		return Outcome{}, false
	}
	if rc.Settings != nil && rc.Settings.DeleteMode == v1beta1.DeleteModeNone {
		return Outcome{}, false
	}
	if job := haJobLeft(rc); job != "" {
		rc.Event(true, "HAConfigMapsKept", fmt.Sprintf("Flink's HA ConfigMaps are kept: %s. Remove them with "+
			"kubectl delete configmap -l %s once the job's state is no longer needed", job, haSelectorsOf(rc)))
		return Outcome{}, false
	}
	if clusters.JobManagersLeft(rc.Clusters) {
		if _, err := rc.DeleteClustersExcept(); err != nil {
			return failed(err), true
		}
		if rc.Meta.DeletionTimestamp != nil && rc.Now.After(rc.Meta.DeletionTimestamp.Add(haCleanupWait)) {
			rc.Event(true, "HAConfigMapsKept", fmt.Sprintf("JobManager pods still run %s after the deletion, so Flink's HA "+
				"ConfigMaps are left; remove them with kubectl delete configmap -l %s once the pods are gone", haCleanupWait, haSelectorsOf(rc)))
			return Outcome{}, false
		}
		const msg = "waiting for the JobManager pods to go before removing Flink's HA ConfigMaps, which a running JobManager writes again"
		if rc.Machine.Reason == msg {
			return stay(0), true
		}
		return Outcome{Reason: "RemovingHAConfigMaps", Message: msg}, true
	}
	g, own := haGuardian(rc, false), ownClusterHashes(rc)
	more := false
	for _, hash := range slices.Sorted(maps.Keys(rc.HAConfigMaps)) {
		if !mayRemoveHAConfigMaps(rc, g, own, hash) {
			continue
		}
		if err := deleteHAConfigMaps(rc, hash); err != nil {
			return failed(err), true
		}
		more = more || len(rc.HAConfigMaps[hash]) > 0
	}
	if more {
		// More than a pass deletes: the finalizer waits for the next.
		return stay(0), true
	}
	return Outcome{}, false
}

// haJobLeft names, for a FlinkSessionCluster, a job whose own HA ConfigMap is still there
// (clusters.HAJobLeft). A FlinkApplication stops its job, or records its state, before it lets go.
func haJobLeft(rc *Context) string {
	if rc.Job != nil {
		return ""
	}
	return clusters.HAJobLeft(rc.Meta.Name, rc.HAConfigMaps)
}

// namesakesHAData says, when the cluster the spec asks for would start over HA ConfigMaps that are
// not this object's (an earlier object of its name, deleted with deleteMode None, left them with
// the same spec), what they are: a JobManager of that cluster id would recover that object's job as
// this one's cluster's, and this object would then run someone else's job. "" when there are none.
func namesakesHAData(rc *Context) string {
	names := rc.HAConfigMaps[rc.Hash]
	if len(names) == 0 || ownClusterHashes(rc)[rc.Hash] {
		return ""
	}
	id := flink.HAClusterIDOf(rc.Meta.Name, rc.Hash)
	return fmt.Sprintf("Flink HA ConfigMaps of cluster id %s exist that this object did not write (%s): an earlier object of "+
		"this name left them, and a JobManager of that id would recover its job as this one's. Delete them once that job's "+
		"state is no longer needed (kubectl delete configmap -l %s), or change spec.restartNonce to deploy under another "+
		"cluster id", id, clusters.NamesWithin(names, 300), flink.HAConfigMapsOf(id))
}

// haSelectorsOf is the label selector of the HA ConfigMaps of the object's clusters that are left,
// for the commands its messages suggest (clusters.HASelectors).
func haSelectorsOf(rc *Context) string { return clusters.HASelectors(rc.Meta.Name, rc.HAConfigMaps) }
