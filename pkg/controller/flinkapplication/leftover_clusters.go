package flinkapplication

import (
	"fmt"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
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
	keep := []string{target, jobstate.LiveCluster(rc.Job)}
	deleted, err := rc.DeleteClustersExcept(keep...)
	if err != nil {
		return failed(err), false
	}
	for _, h := range deleted {
		rc.Event(false, "ClusterDeleted", fmt.Sprintf("deleted Flink cluster %s, left by a deploy given up on, %s",
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
	rc.WaitOn(fmt.Sprintf("the JobManager of deleted cluster %s may still run a job of this application; %s",
		strings.Join(names, ", "), until))
	if d := rc.Meta.DeletionTimestamp; d != nil && rc.Now.After(d.Add(kindpass.HACleanupWait)) {
		// The wait is not given up: a job left running there would run on beside the job of an
		// application created again under this name. Pods that do not go (a node that is down)
		// need the user, who is told how.
		rc.Event(true, "LeftoverJobManagerRunning", fmt.Sprintf("the JobManager pods of deleted cluster %s still run %s after the "+
			"deletion, and may run a job of this application; the application stays until they are gone. If their node is down, "+
			"remove them with kubectl delete pod --force -n %s -l '%s=%s,%s in (%s)'", strings.Join(names, ", "), kindpass.HACleanupWait,
			rc.Meta.Namespace, k8.AppLabel, rc.Meta.Name, k8.HashLabel, strings.Join(left, ",")))
	}
	return stay(0), false
}
