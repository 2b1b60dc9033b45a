package lifecycle

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// AfterJobStopped decides what follows once the live job stopped with its state recorded in
// status.savepointPath. It reads the spec as it is now, not as it was when the stop began: a suspend
// that was taken back, or an update changed back while the job was cancelling, still resumes the job.
func (p *Pass) AfterJobStopped(reason, msg string) fsm.Outcome {
	st := p.Job
	jobstate.StopRecorded(st)
	if p.Settings.Suspend {
		return p.Suspended(reason, msg)
	}
	if target := jobstate.TargetCluster(st); jobstate.TargetSpecHash(st) == p.Hash && p.Clusters[target].Ready() {
		return fsm.MoveTo(fsm.PhaseSubmitting, reason, msg)
	}
	return fsm.MoveTo(fsm.PhaseUpdating, reason, msg+"; deploying the current spec")
}

// Suspended rests a stopped job in Suspended, whose handler deletes its clusters: only once the
// state to resume from is persisted in status.savepointPath, because a savepoint's result is lost
// with its JobManager.
func (p *Pass) Suspended(reason, msg string) fsm.Outcome {
	st := p.Job
	jobstate.ClearTarget(st)
	jobstate.StopRecorded(st)
	st.JobStatus.State, st.JobStatus.Health = "", ""
	if p.Owned != nil {
		p.Owned.ClusterStatus = v1beta1.FlinkClusterStatus{}
	}
	return fsm.MoveTo(fsm.PhaseSuspended, reason, fmt.Sprintf("%s; job suspended with %s, deleting its cluster", msg, DescribeState(st.Deployments.NextRestorePath)))
}

// Blocked stops retrying a step whose outcome only the user can change, and rests in the phase
// until the spec changes: the same mark giving up leaves.
func (p *Pass) Blocked(reason, msg string) fsm.Outcome {
	return fsm.Rest(p.Pass, fsm.Outcome{Reason: reason, Message: msg, Warning: true, After: fsm.UntilChanged}, msg)
}

// DeployFailed marks the target spec failed, so it is not retried until the spec changes, and rests.
func (p *Pass) DeployFailed(reason, cause string) fsm.Outcome {
	p.Machine.FailedDeployHash = p.Hash
	if st := p.Job; st != nil {
		// A rollback deploys the stable spec, not the one that failed: the spec the user asked for
		// failed first, and marking the stable one instead would deploy the failed spec again unasked.
		if h := jobstate.TargetSpecHash(st); h != "" && !jobstate.RollingBack(st) {
			p.Machine.FailedDeployHash = h
		}
		p.Kind.KeepJobGivenUpOn()
		// A savepoint asked for stays recorded: if it completes after all, its trigger time finds it.
		jobstate.ClearTarget(st)
	}
	return fsm.WarnTo(fsm.PhaseDeployFailed, reason, cause)
}

// AbandonBeforeStop ends a stop that has not touched the job yet when it is no longer wanted:
// forceRollback of an update, or a suspend taken back. Once the job is being stopped it is always
// resumed instead, so a job is never left stopped.
func (p *Pass) AbandonBeforeStop(what string) (fsm.Outcome, bool) {
	st := p.Job
	switch {
	case p.Kind.ForcedRollback():
		return fsm.WarnTo(fsm.PhaseRollingBack, "ForceRollback", fmt.Sprintf("forceRollback set: abandoning the update before the %s", what)), true
	case !p.Settings.Suspend && jobstate.Candidate(st) == nil:
		// A stop that only a suspend asked for; the suspend was taken back.
		msg := fmt.Sprintf("%s is Running again before the %s; the job keeps running", p.Settings.Field("state"), what)
		if p.Machine.FailedDeployHash != "" && p.Hash == p.Machine.FailedDeployHash {
			return fsm.MoveTo(fsm.PhaseDeployFailed, "SuspendCancelled", msg+" on the spec before the one that failed"), true
		}
		return fsm.MoveTo(fsm.PhaseRunning, "SuspendCancelled", msg), true
	}
	return fsm.Outcome{}, false
}

// StateLost ends a stop whose job stopped and left no state to restore: a suspend rests blocked, an
// update fails, and the user names the state or lets the job start without it.
func (p *Pass) StateLost(reason, why string) fsm.Outcome {
	msg := fmt.Sprintf("%s; restore it by hand (%s), or set %s to start it without state",
		why, p.Settings.Field("savepointPath"), p.Settings.Field("fallbackWithoutState"))
	if p.Settings.Suspend && jobstate.Candidate(p.Job) == nil {
		return p.Blocked("SuspendBlocked", msg)
	}
	return p.DeployFailed(reason, msg)
}

// StopLiveJob starts stopping the live job the way the upgrade mode keeps its state: a savepoint
// with cancel, or a cancel (LastState then restores the newest retained checkpoint).
func (p *Pass) StopLiveJob(reason, why string) fsm.Outcome {
	st := p.Job
	_, jobID := jobstate.LiveJob(st)
	st.Deployments.NextRestorePath = ""
	mode := p.Settings.UpgradeMode
	next := fsm.PhaseCancelling
	how := "cancelling it"
	switch mode {
	case v1beta1.UpgradeModeSavepoint:
		next, how = fsm.PhaseSavepointing, "taking a savepoint with cancel"
	case v1beta1.UpgradeModeLastState:
		how = "cancelling it and keeping its newest checkpoint"
	case v1beta1.UpgradeModeStateless:
		how = "cancelling it without keeping state"
	}
	return fsm.MoveTo(next, reason, fmt.Sprintf("%s: stopping job %s (upgradeMode %s): %s", why, jobID, mode, how))
}

// SuspendJob stops the live job per upgradeMode, or, with none running, goes straight to Suspended.
func (p *Pass) SuspendJob() fsm.Outcome {
	st := p.Job
	jobstate.ClearTarget(st)
	if _, jobID := jobstate.LiveJob(st); jobID != "" {
		return p.StopLiveJob("Suspending", p.Settings.Field("state")+" is Suspended")
	}
	return p.Suspended("Suspended", p.Settings.Field("state")+" is Suspended and no job runs")
}
