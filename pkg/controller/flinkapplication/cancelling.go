package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// handleCancelling stops the live job with PATCH /jobs/:id?mode=cancel (upgradeMode LastState or
// Stateless) and stays while it is CANCELLING: nothing is submitted until it is stopped. LastState
// first checks that the newest retained checkpoint can carry the state across the cancel; when it
// cannot, it takes a savepoint instead, and fails only when that fails too.
func handleCancelling(rc *Context) Outcome {
	st := rc.Job
	hash, jobID := jobstate.LiveJob(st)
	mode := rc.Settings.UpgradeMode
	v := rc.pass().View(hash, jobID)
	if v.Liveness == jobs.Unknown {
		return failed(jobs.Retryable("ObserveJob", fmt.Errorf("%s", v.Evidence)))
	}
	if !jobs.CancelIssued(v) {
		if out, abandon := abandonBeforeStop(rc, "cancel"); abandon {
			return out
		}
		if mode != v1beta1.UpgradeModeStateless && !rc.Settings.FallbackWithoutState {
			if why := rc.LastStateProblem(v.Ref); why != "" {
				return warnTo(PhaseSavepointing, "LastStateViaSavepoint", fmt.Sprintf(
					"job %s cannot keep its state through a cancel: %s; taking a savepoint with cancel instead", jobID, why))
			}
		}
	}
	live, err := rc.pass().Cancel(v)
	switch {
	case live == jobs.Unknown:
		return failed(err)
	case live == jobs.Alive:
		return stay(0)
	}
	if mode == v1beta1.UpgradeModeStateless {
		st.Deployments.NextRestorePath = ""
		return afterJobStopped(rc, "JobCancelled", fmt.Sprintf("job %s cancelled; upgradeMode Stateless starts the next job without state", jobID))
	}
	// A JobManager that did not answer about the job (its Deployment deleted under the cancel)
	// is not asked for its checkpoints: the job went with it, and the records are all there is, as
	// for a recovery.
	choice := rc.ChooseRestore(v.Ref.ID, v.Answered())
	if choice.Unanswered != nil {
		return failed(choice.Unanswered)
	}
	if choice.Problem != "" {
		return stateLost(rc, "LastStateLost", fmt.Sprintf("job %s was cancelled but %s", jobID, choice.Problem))
	}
	rc.UseRestore(choice)
	return afterJobStopped(rc, "JobCancelled", fmt.Sprintf("job %s cancelled; its newest state is %s", jobID, lifecycle.DescribeState(st.Deployments.NextRestorePath)))
}

// stateLost ends a stop whose job stopped without state that may be restored. Nothing is started:
// an update fails and a suspend waits, both saying how to go on.
func stateLost(rc *Context, reason, why string) Outcome {
	msg := fmt.Sprintf("%s; restore it by hand (%s), or set %s to start it without state",
		why, rc.Settings.Field("savepointPath"), rc.Settings.Field("fallbackWithoutState"))
	if rc.Settings.Suspend && jobstate.Candidate(rc.Job) == nil {
		return blocked(rc, "SuspendBlocked", msg)
	}
	return deployFailed(rc, reason, msg)
}
