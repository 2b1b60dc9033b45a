package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// handleClusterStarting waits until the new cluster is ready for the job: Kubernetes reports its
// Deployments available and Flink reports enough task slots. Then, if the live job still runs (Dual),
// it is stopped per upgradeMode; otherwise the job is submitted.
func handleClusterStarting(rc *Context) Outcome {
	st := &rc.App.Status
	if jobstate.TargetSpecHash(&st.JobOwnerStatus) != rc.Hash {
		target := jobstate.TargetCluster(&st.JobOwnerStatus)
		if target != "" && target != jobstate.LiveCluster(&st.JobOwnerStatus) {
			if err := rc.DeleteCluster(target); err != nil {
				return failed(err)
			}
		} else if wait, ended := endStartedCandidate(rc); !ended {
			return wait
		}
		return moveTo(PhaseUpdating, "SpecChanged", "spec changed while the new cluster was starting; starting over")
	}
	target := jobstate.TargetCluster(&st.JobOwnerStatus)
	_, jobID := jobstate.LiveJob(&st.JobOwnerStatus)
	if forcedRollback(rc) {
		return warnTo(PhaseRollingBack, "ForceRollback", "forceRollback set: abandoning the update before the old job was touched")
	}
	if jobID == "" && rc.Settings.Suspend {
		return rc.Suspended("Suspended", "spec.state is Suspended; the new cluster is not needed")
	}
	c := rc.Clusters[target]
	if c == nil || c.JobManager == nil || c.TaskManager == nil || c.Service == nil {
		// Someone deleted part of the cluster; put it back rather than wait for the deadline.
		if err := createCluster(rc, flink.OwnerFromApplication(rc.App), target); err != nil {
			return failed(err)
		}
		return stay(0)
	}
	if !c.Ready() {
		rc.WaitOn(c.Problem)
		return stay(0)
	}
	ov, err := rc.Flink().Overview(target)
	if err != nil {
		// The JobManager's REST endpoint comes up after the pod is ready; the phase deadline bounds this.
		return stay(0)
	}
	if int32(ov.SlotsTotal) < rc.App.Spec.Parallelism {
		return stay(0)
	}
	ready := fmt.Sprintf("cluster %s ready with %d task slots", flink.VersionedServiceName(rc.App, target), ov.SlotsTotal)
	if jobID != "" && besideLive(rc) {
		return startBeside(rc, ready)
	}
	if jobID != "" {
		return rc.StopLiveJob("ClusterReady", ready)
	}
	if jobstate.Stable(&st.JobOwnerStatus) == nil {
		if why := rc.Settings.RestoreWaiting; why != "" {
			rc.WaitOn(why)
			return stay(0)
		}
		st.Deployments.NextRestorePath = rc.Settings.InitialSavepoint
	}
	return moveTo(PhaseSubmitting, "ClusterReady", fmt.Sprintf("%s; starting the job from %s", ready, lifecycle.DescribeState(st.Deployments.NextRestorePath)))
}

// endStartedCandidate ends the candidate's job before a new spec starts over on a cluster that is
// kept (the live one, when the spec went back to it): its id went out with the move into
// ClusterStarting, and a Submitting pass that was not written (quiet_submission.go) may have started
// it there. Its newest checkpoint, if it made one, is the state the next job starts from. ended is
// false, with what to return, until the job is known not to run.
func endStartedCandidate(rc *Context) (Outcome, bool) {
	st := &rc.App.Status
	c := jobstate.Candidate(&st.JobOwnerStatus)
	if c == nil || c.JobID == "" {
		return Outcome{}, true
	}
	v := rc.Flink().View(c.ClusterHash, c.JobID)
	live, err := rc.Flink().Cancel(v)
	switch {
	case live == jobs.Unknown:
		return failed(err), false
	case live == jobs.Alive:
		return stay(0), false
	}
	if path, _ := rc.AttemptCheckpoint(v, c.ClusterHash); path != "" {
		st.Deployments.NextRestorePath = path
	}
	jobstate.ForgetJob(c)
	return persistThenContinue(), false
}
