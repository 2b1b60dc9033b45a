package flinkapplication

import (
	"fmt"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// leftoverClustersGone deletes an application's clusters other than the one its job is started on
// and the stable deployment's, and tells whether the JobManagers of all of them are gone, terminating
// pods included. Such a cluster is left by a deploy given up on (a failed update or first deploy, a
// start-over): its job may run on there, its id dropped when Flink could not say whether it stopped,
// and it runs for as long as its JobManager does. No job is submitted while one is left, nor does a
// deleted application go (leftoverClustersGoneBeforeDelete), and the pass that deletes one never
// submits: what it deleted is only gone once Kubernetes says so.
func leftoverClustersGone(rc *Context, target string) (Outcome, bool) {
	return deleteLeftoverClusters(rc, target, "before starting a job", "no job is started until it is gone")
}

// leftoverClustersGoneBeforeDelete is leftoverClustersGone for a deleted application, whose job is
// on target: a job left on another cluster must not run on once the application is gone, when an
// application created again under its name could start another beside it (explorer seed 10000241).
func leftoverClustersGoneBeforeDelete(rc *Context, target string) (Outcome, bool) {
	return deleteLeftoverClusters(rc, target, "before the application goes", "the application stays until it is gone")
}

func deleteLeftoverClusters(rc *Context, target, before, until string) (Outcome, bool) {
	keep := []string{target, liveCluster(rc.Job)}
	deleted, err := deleteClustersExcept(rc, keep...)
	if err != nil {
		return failed(err), false
	}
	for _, h := range deleted {
		rc.event(false, "ClusterDeleted", fmt.Sprintf("deleted Flink cluster %s, left by a deploy given up on, %s",
			flink.VersionedServiceNameOf(rc.Meta.Name, h), before))
	}
	left := deleted
	for hash, c := range rc.Clusters {
		if !contains(keep, hash) && !c.JobManagerGone() {
			left = append(left, hash)
		}
	}
	if len(left) == 0 {
		return Outcome{}, true
	}
	names := make([]string, len(left))
	for i, h := range left {
		names[i] = flink.VersionedServiceNameOf(rc.Meta.Name, h)
	}
	waitingOn(rc, fmt.Sprintf("the JobManager of deleted cluster %s may still run a job of this application; %s",
		strings.Join(names, ", "), until))
	return stay(0), false
}
