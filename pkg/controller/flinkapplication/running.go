package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// handleRunning watches the live job and starts what the spec asks for: an update, an in-place
// rescale or a suspend. It recovers a cluster whose JobManager Deployment disappeared and, when
// asked to, restarts a job that failed. Clusters of earlier specs are removed here, once the job runs
// on the live one.
func handleRunning(rc *Context) Outcome {
	st := &rc.App.Status
	if c := rc.Clusters[jobstate.LiveCluster(&st.JobOwnerStatus)]; c == nil || c.JobManager == nil {
		// First, because nothing else can be asked of a JobManager that is gone.
		return recoverDeployment(rc)
	}
	change := classifyChange(rc)
	if rc.Settings.Suspend || change != noChange {
		// The pass that leaves Running reads nothing more of the job, which runs on until the next
		// phase stops it: a JobManager lost before then restarts it from the checkpoint recorded
		// last, which Flink subsumes once num-retained newer ones complete, however long the
		// operator looked away. So the newest is recorded first, when due.
		rc.RecordDueCheckpoint()
	}
	if rc.Settings.Suspend {
		return rc.SuspendJob()
	}
	switch change {
	case upgradeChange:
		return moveTo(PhaseUpdating, "SpecChanged", fmt.Sprintf("spec changed (cluster hash %s -> %s)", jobstate.RunningSpecHash(&st.JobOwnerStatus), rc.Hash))
	case scaleChange:
		return moveTo(PhaseRescaling, "ParallelismChanged", fmt.Sprintf("parallelism changed to %d with scaleMode InPlace; keeping cluster %s",
			rc.App.Spec.Parallelism, jobstate.LiveCluster(&st.JobOwnerStatus)))
	}
	if err := removeStaleClusters(rc); err != nil {
		return failed(err)
	}
	refusal, err := ensureUIIngress(rc)
	if err != nil {
		return failed(err)
	}
	reportUIIngress(rc, refusal)
	rc.ObserveLiveJob()
	if hash, jobID := jobstate.LiveJob(&st.JobOwnerStatus); jobID != "" {
		v := rc.Flink().View(hash, jobID)
		if v.Rerun != "" {
			return rc.FollowRerun(v)
		}
		if out, back := scalingWayBack(rc, v); back {
			return out
		}
		switch {
		case v.Liveness == jobs.Stopped && v.Details == nil && failedAndLeftFailed(rc, jobID):
			// Forgotten by a JobManager that restarted: the job is still one Flink ended.
		case v.Liveness == jobs.Stopped && v.Details == nil:
			rc.Event(true, "JobLost", fmt.Sprintf("job %s is lost: %s", jobID, v.Evidence))
			return recoverStoppedJob(rc, v, "JobLost", fmt.Sprintf("job %s is lost (%s)", jobID, v.Evidence))
		case v.State() == client.JobFailed && rc.App.Spec.RestartFailedJob:
			return recoverStoppedJob(rc, v, "RestartingFailedJob", fmt.Sprintf("job %s FAILED and restartFailedJob is set", jobID))
		}
	}
	if out, busy := rc.SavepointOnDemand(); busy {
		return rc.WakeForPeriodicSnapshots(out)
	}
	if out, busy := autoscale(rc); busy {
		return out
	}
	return rc.WakeForPeriodicSnapshots(stay(0))
}

// handleDeployFailed rests after a failed deploy, watching whatever job still runs, until the spec
// changes. Going back to the running spec returns to Running without a redeploy.
func handleDeployFailed(rc *Context) Outcome {
	st := &rc.App.Status
	if rc.Settings.Suspend {
		return rc.SuspendJob()
	}
	if _, jobID := jobstate.LiveJob(&st.JobOwnerStatus); jobID != "" && rc.Hash == jobstate.RunningSpecHash(&st.JobOwnerStatus) && rc.Hash != st.FailedDeployHash {
		st.FailedDeployHash = ""
		return moveTo(PhaseRunning, "SpecRestored", "spec is back to the running one")
	}
	switch classifyChange(rc) {
	case upgradeChange:
		return moveTo(PhaseUpdating, "SpecChanged", fmt.Sprintf("spec changed (cluster hash %s); deploying", rc.Hash))
	case scaleChange:
		return moveTo(PhaseRescaling, "ParallelismChanged", fmt.Sprintf("parallelism changed to %d with scaleMode InPlace", rc.App.Spec.Parallelism))
	}
	if err := removeStaleClusters(rc); err != nil {
		return failed(err)
	}
	rc.ObserveLiveJob()
	return stay(0)
}

// handleSuspended rests with no cluster until the job is wanted Running again, then deploys the
// current spec from the state recorded when it was suspended.
func handleSuspended(rc *Context) Outcome {
	st := &rc.App.Status
	if !rc.Settings.Suspend {
		return moveTo(PhaseUpdating, "Resuming", fmt.Sprintf("spec.state is Running; resuming from %s", lifecycle.DescribeState(st.Deployments.NextRestorePath)))
	}
	if _, err := rc.DeleteClustersExcept(); err != nil {
		return failed(err)
	}
	return stay(untilChanged)
}

func removeStaleClusters(rc *Context) error {
	gone, err := rc.DeleteClustersExcept(jobstate.LiveCluster(rc.Job))
	for _, h := range gone {
		rc.Event(false, "ClusterDeleted", fmt.Sprintf("deleted Flink cluster %s", flink.VersionedServiceNameOf(rc.Meta.Name, h)))
	}
	return err
}
