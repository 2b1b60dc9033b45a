package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// recoverDeployment handles a live cluster whose JobManager Deployment is gone. Without HA the job
// went with its JobManager, so the cluster is created again and the job restored from the newest
// state known: its last checkpoint, or else the state it started from. A JobManager pod that is still
// terminating may still run the job, so nothing starts until it is gone.
func recoverDeployment(rc *Context) Outcome {
	st := &rc.App.Status
	if c := rc.Clusters[st.DeployHash]; c != nil && c.JobManagerPods > 0 {
		return stay(0)
	}
	js := &st.JobStatus
	path := js.LastCheckpointPath
	if path == "" {
		path = js.RestorePath
	}
	lost := js.JobID
	st.SavepointPath = path
	js.JobID, js.ClusterHash, js.State, js.Health = "", "", "", v1beta1.Red
	if suspending(rc.App) {
		return suspended(rc, "RecoverDeployment", fmt.Sprintf("the JobManager Deployment is gone and job %s with it", lost))
	}
	return warnTo(v1beta1.PhaseUpdating, "RecoverDeployment", fmt.Sprintf(
		"the JobManager Deployment of %s is gone and job %s with it; recreating the cluster and restoring from %s",
		flink.VersionedServiceName(rc.App, st.DeployHash), lost, describeState(path)))
}

// restartFailedJob starts a job that ended FAILED again on its cluster, from its newest checkpoint
// (or the state it started from), because the user set restartFailedJob.
func restartFailedJob(rc *Context) Outcome {
	st := &rc.App.Status
	if st.LastStableSpec == nil {
		return stay(0)
	}
	hash, jobID := liveJob(st)
	path, _ := newestCheckpoint(rc, hash, jobID)
	if path == "" {
		path = st.JobStatus.RestorePath
	}
	st.SavepointPath = path
	st.UpdatingHash, st.UpdatingSpec, st.InPlaceUpdatedFromHash = st.LastStableSpec.SpecHash, st.LastStableSpec.Spec, hash
	st.JobStatus.JobID, st.JobStatus.ClusterHash = "", ""
	return warnTo(v1beta1.PhaseSubmitting, "RestartingFailedJob", fmt.Sprintf(
		"job %s FAILED and restartFailedJob is set; starting it again from %s", jobID, describeState(path)))
}
