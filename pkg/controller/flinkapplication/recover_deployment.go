package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// recoverDeployment handles a live cluster whose JobManager Deployment is gone. A JobManager pod
// that is still terminating may still run the job, so nothing starts until it is gone. Then the
// cluster is created again under the same hash. With Flink HA its new JobManager recovers the job
// from the HA store under the same cluster id, and the recorded job is waited for and adopted.
// Without HA the job went with its JobManager and starts again from the newest state known
// (ChooseRestore), or the application fails with the reason.
func recoverDeployment(rc *Context) Outcome {
	st := &rc.App.Status
	if c := rc.Clusters[jobstate.LiveCluster(&st.JobOwnerStatus)]; c != nil && c.JobManagerPods > 0 {
		return stay(0)
	}
	js := &st.JobStatus
	lost := js.JobID
	msg := fmt.Sprintf("the JobManager Deployment of %s is gone", flink.VersionedServiceName(rc.App, jobstate.LiveCluster(&st.JobOwnerStatus)))
	if rc.Settings.Suspend {
		if out, wait := recreateHAJobManager(rc); wait {
			// Flink HA runs the job again: the suspend stops it with its state once it is back.
			return out
		}
		choice := rc.ChooseRestore(lost, nil)
		if choice.InDoubt {
			// Suspended, it would resume from older state than the savepoint in doubt.
			return rc.DeployFailed("RecoveryFailed", fmt.Sprintf("%s and job %s with it, and %s; %s", msg, lost, choice.Problem, rc.RestoreByHand()))
		}
		if choice.Path != "" {
			st.Deployments.NextRestorePath = choice.Path
		}
		return rc.Suspended("RecoverDeployment", msg+" and job "+lost+" with it")
	}
	app := stableApp(rc)
	if app == nil {
		// Recorded by an operator version that kept no stable spec: deploy the spec as it is.
		st.Deployments.NextRestorePath = rc.ChooseRestore(lost, nil).Path
		js.JobID, js.ClusterHash, js.State, js.Health = "", "", "", v1beta1.Red
		return warnTo(PhaseUpdating, "RecoverDeployment", fmt.Sprintf("%s; deploying the spec from %s", msg, lifecycle.DescribeState(st.Deployments.NextRestorePath)))
	}
	if err := createCluster(rc, flink.OwnerFromApplication(app), jobstate.LiveCluster(&st.JobOwnerStatus)); err != nil {
		return failed(err)
	}
	if failedAndLeftFailed(rc, lost) {
		rc.Event(false, "RecoverDeployment", fmt.Sprintf("%s; created it again. Job %s FAILED and restartFailedJob is not set: it is not started again", msg, lost))
		return stay(0)
	}
	if flink.HighAvailability(app) && lost != "" {
		// Should HA not have the job, it is submitted again from the newest state known, and not at
		// all while that state is in doubt or missing (haRecoveryMissed).
		st.Deployments.NextRestorePath = ""
		if choice := rc.ChooseRestoreInPlace(lost, nil); choice.Problem == "" {
			st.Deployments.NextRestorePath = choice.Path
		}
		return restartInPlace(rc, "RecoverDeployment", fmt.Sprintf("%s; created it again, and Flink HA recovers job %s", msg, lost), true)
	}
	choice := rc.ChooseRestoreInPlace(lost, nil)
	if choice.InDoubt {
		return rc.DeployFailed("RecoveryFailed", fmt.Sprintf("%s and job %s with it, and %s; %s", msg, lost, choice.Problem, rc.RestoreByHand()))
	}
	if choice.Problem != "" {
		return rc.DeployFailed("RecoveryFailed", fmt.Sprintf("%s and job %s with it, and %s; restore it by hand (spec.savepointPath), "+
			"or set fallbackWithoutState to start it without state", msg, lost, choice.Problem))
	}
	rc.UseRestore(choice)
	return restartInPlace(rc, "RecoverDeployment", fmt.Sprintf("%s and job %s with it; created it again, restoring from %s", msg, lost, lifecycle.DescribeState(choice.Path)), false)
}

// recoverStoppedJob starts a job again on its own cluster after it stopped without being asked to
// (lost with its JobManager process, or FAILED with restartFailedJob), from the newest state known.
func recoverStoppedJob(rc *Context, v *jobs.View, reason, what string) Outcome {
	choice := rc.ChooseRestoreInPlace(v.Ref.ID, v.Answered())
	if choice.Unanswered != nil {
		return failed(choice.Unanswered)
	}
	if choice.InDoubt {
		return rc.DeployFailed("RecoveryFailed", fmt.Sprintf("%s, and %s; %s", what, choice.Problem, rc.RestoreByHand()))
	}
	if choice.Problem != "" {
		return rc.DeployFailed("RecoveryFailed", fmt.Sprintf("%s, and %s; restore it by hand (spec.savepointPath), "+
			"or set fallbackWithoutState to start it without state", what, choice.Problem))
	}
	rc.UseRestore(choice)
	return restartInPlace(rc, reason, fmt.Sprintf("%s; starting it again from %s", what, lifecycle.DescribeState(choice.Path)), false)
}

// restartInPlace runs the last stable spec again on the live cluster, from status.savepointPath.
// keepJob waits for the recorded job instead (Flink HA recovers it); the fence adopts it.
func restartInPlace(rc *Context, reason, msg string, keepJob bool) Outcome {
	st := &rc.App.Status
	s := jobstate.Stable(&st.JobOwnerStatus)
	if s == nil {
		return stay(0)
	}
	lost := *s
	jobstate.StopRecorded(&st.JobOwnerStatus)
	c := jobstate.RecordRestart(&st.JobOwnerStatus, v1beta1.DeploymentRestart)
	if keepJob {
		jobstate.TakeJob(c, &lost)
	}
	st.JobStatus.State = ""
	return warnTo(PhaseSubmitting, reason, msg)
}

// haRecoveryMissed fails a restart in place that counted on Flink HA when the new JobManager does not
// know the job (its HA data went with the Deployment, say) and the newest state known of it is in
// doubt or missing: the job is not submitted again from older state, nor without state.
func haRecoveryMissed(rc *Context, c *v1beta1.DeploymentRecord) *Outcome {
	if c.Kind != v1beta1.DeploymentRestart || c.JobID == "" || c.SubmittedAt != nil || rc.App == nil {
		return nil
	}
	// The cluster runs the spec the record deployed, whatever a pending update says of HA.
	if app := withSpec(rc.App, c.Spec); app == nil && !flink.HighAvailability(rc.App) || app != nil && !flink.HighAvailability(app) {
		return nil
	}
	if rc.Flink().View(c.ClusterHash, c.JobID).Liveness != jobs.Stopped {
		return nil
	}
	choice := rc.ChooseRestoreInPlace(c.JobID, nil)
	if choice.Problem == "" {
		return nil
	}
	out := rc.DeployFailed("RecoveryFailed", fmt.Sprintf("Flink HA did not recover job %s, and %s; %s", c.JobID, choice.Problem, rc.RestoreByHand()))
	return &out
}

// failedAndLeftFailed tells whether the live job is one Flink was seen to end FAILED (status shows
// that very job FAILED: jobStatus.state goes with jobStatus.jobID) and restartFailedJob is not
// set. It is not started again when its JobManager restarts without HA and forgets it, nor when
// its JobManager Deployment is created again: a job Flink ended is not a job lost with its
// JobManager, and the user said a failed job waits for them.
func failedAndLeftFailed(rc *Context, jobID string) bool {
	js := &rc.App.Status.JobStatus
	return !rc.App.Spec.RestartFailedJob && jobID != "" && js.JobID == jobID && js.State == v1beta1.JobFailed
}
