package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// handleCancelling stops the live job with PATCH /jobs/:id?mode=cancel (upgradeMode LastState or
// Stateless) and stays while it is CANCELLING: nothing is submitted until it is CANCELED or gone.
// LastState then restores the newest retained checkpoint, which was checked before the cancel to be
// young enough; Stateless starts without state.
func handleCancelling(rc *Context) Outcome {
	st := &rc.App.Status
	hash, jobID := liveJob(st)
	mode := upgradeMode(rc.App)
	issued, err := cancelIssued(rc, hash, jobID)
	if err != nil {
		return failed(err)
	}
	if !issued {
		if out, abandon := abandonBeforeStop(rc, "cancel"); abandon {
			return out
		}
		if mode != v1beta1.UpgradeModeStateless {
			if why := lastStateProblem(rc, hash, jobID); why != "" {
				return refuseLastState(rc, jobID, why)
			}
		}
	}
	stopped, err := stopJob(rc, hash, jobID)
	if err != nil {
		return failed(err)
	}
	if !stopped {
		return stay(0)
	}
	if mode == v1beta1.UpgradeModeStateless {
		st.SavepointPath = ""
		return afterJobStopped(rc, "JobCancelled", fmt.Sprintf("job %s cancelled; upgradeMode Stateless starts the next job without state", jobID))
	}
	st.SavepointPath = stateAfterCancel(rc, hash, jobID)
	if st.SavepointPath == "" && !rc.App.Spec.FallbackWithoutState {
		return deployFailed(rc, "LastStateLost", fmt.Sprintf("job %s was cancelled but left no retained checkpoint; "+
			"restore it by hand, or set fallbackWithoutState to start it without state", jobID))
	}
	return afterJobStopped(rc, "JobCancelled", fmt.Sprintf("job %s cancelled; its newest checkpoint is %s", jobID, describeState(st.SavepointPath)))
}

// refuseLastState leaves the job running when its state could not be carried over: an update fails
// with the reason, a suspend waits for the user.
func refuseLastState(rc *Context, jobID, why string) Outcome {
	msg := fmt.Sprintf("job %s was not cancelled: %s. Fix checkpointing, use upgradeMode Savepoint, "+
		"or set fallbackWithoutState to accept starting without state", jobID, why)
	if suspending(rc.App) && rc.App.Status.UpdatingHash == "" {
		return blocked(rc, "SuspendBlocked", msg)
	}
	return deployFailed(rc, "LastStateUnavailable", msg)
}
