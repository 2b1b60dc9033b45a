package flinkapplication

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// Under Flink HA an application's JobManager gone is no evidence that its job stopped: Flink
// suspends the job and keeps it in the HA data, and the next JobManager of that cluster id runs it
// again from its newest checkpoint. Explorer seed 57002531: a suspend took the job for stopped,
// recorded older state and deleted the cluster; the resume created the same cluster, HA ran the
// job again, and a spec change submitted a second job beside it. So the job is Unknown while its
// JobManager is gone (kindpass.Pass.KeepsJobs), every phase but a deletion creates the JobManager
// again (recreatingHAJobManager), and a phase's attempts wait for it without spending its retries
// while it comes up (haJobManagerComingBack), within the phase's deadline. Should the HA data be
// gone too, the JobManager created again answers that it does not know the job: evidence.

// haJob is the job of the application on its live cluster that runs with Flink HA, with the
// application as that job's record deployed it: the stable record's job, or the job a restart or
// rescale in place started or waits to adopt there. nil when there is none.
func haJob(rc *Context) (*v1beta1.DeploymentRecord, *v1beta1.FlinkApplication) {
	if rc.App == nil || rc.Job == nil {
		return nil, nil
	}
	live := jobstate.LiveCluster(rc.Job)
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(rc.Job), jobstate.Candidate(rc.Job)} {
		if r == nil || r.JobID == "" || live == "" || r.ClusterHash != live {
			continue
		}
		if app := withSpec(rc.App, r.Spec); app != nil && flink.HighAvailability(app) {
			return r, app
		}
	}
	return nil, nil
}

// haBringsJobBack tells whether Flink HA runs a job of the application again once a JobManager of
// the cluster with this hash is created again. A deletion does not create it again.
func haBringsJobBack(rc *Context, hash string) bool {
	if rc.App == nil || rc.App.DeletionTimestamp != nil {
		return false
	}
	rec, _ := haJob(rc)
	return rec != nil && rec.ClusterHash == hash
}

// recreateHAJobManager creates the live cluster again, from the spec its job's record deployed,
// when its JobManager is gone and Flink HA brings the job back with it.
func recreateHAJobManager(rc *Context) (Outcome, bool) {
	if rc.Job == nil {
		return Outcome{}, false
	}
	if live := jobstate.LiveCluster(rc.Job); live == "" || !rc.Clusters[live].JobManagerGone() {
		// The common pass: nothing to create, and no recorded spec decoded to learn it.
		return Outcome{}, false
	}
	rec, app := haJob(rc)
	if rec == nil || !rc.Clusters[rec.ClusterHash].JobManagerGone() || !haBringsJobBack(rc, rec.ClusterHash) {
		return Outcome{}, false
	}
	if err := createCluster(rc, flink.OwnerFromApplication(app), rec.ClusterHash); err != nil {
		return failed(err), true
	}
	rc.Event(true, "RecoverDeployment", fmt.Sprintf("the JobManager of %s is gone; created it again, and Flink HA recovers job %s",
		flink.VersionedServiceName(rc.App, rec.ClusterHash), rec.JobID))
	return stay(0), true
}

// recreatingHAJobManager runs handle once recreateHAJobManager has nothing to do. Running
// recovers a JobManager Deployment gone itself (recoverDeployment).
func recreatingHAJobManager(handle func(*Context) Outcome) func(*Context) Outcome {
	return func(rc *Context) Outcome {
		if out, wait := recreateHAJobManager(rc); wait {
			return out
		}
		return handle(rc)
	}
}

// haJobManagerComingBack says, while the JobManager of the application's HA job is gone to be
// created again or is on its way up, what an attempt of the phase that failed on it waits for
// instead of spending one of its retries (fsm.Machine.HeldBy): a JobManager Flink HA brings the job
// back with, and one the operator itself created, may take minutes to come up. "" for an error of
// the API server (a refused object is no JobManager's to bring back: attack review s11, an update
// held for ever on an admission webhook's refusal), for a JobManager that cannot come up as it is
// (no replica asked for, a pod problem Kubernetes reports), and once the phase is older than
// clusterStartTimeout, the bound of a cluster's start: then the attempts count again, and a phase
// without a deadline ends as its retries do (a deletion in DeleteBlocked, which says how to go on).
func haJobManagerComingBack(rc *Context, err error) string {
	var refused apierrors.APIStatus
	if err == nil || errors.As(err, &refused) {
		return ""
	}
	rec, _ := haJob(rc)
	if rec == nil {
		return ""
	}
	if limit, started := rc.Config.ClusterStartTimeout.Duration, rc.Machine.PhaseStartedAt; limit > 0 && started != nil && rc.Now.Sub(started.Time) >= limit {
		return ""
	}
	c := rc.Clusters[rec.ClusterHash]
	switch {
	case c.JobManagerGone() && haBringsJobBack(rc, rec.ClusterHash),
		c != nil && c.JobManager != nil && c.Problem == "" && clusters.Replicas(c.JobManager) > 0 &&
			c.ReadyJobManagerPods == 0 && c.JobManager.Status.AvailableReplicas == 0:
		return fmt.Sprintf("the JobManager of %s is coming back; Flink HA recovers job %s once it is up",
			flink.VersionedServiceName(rc.App, rec.ClusterHash), rec.JobID)
	}
	return ""
}
