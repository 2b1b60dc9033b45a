package flinkapplication

import (
	"fmt"
)

// handleRecovering replaces a savepoint that failed or never completed with the newest state the
// live job leaves (chooseRestore), which is checked to exist before the job is cancelled. Without
// it the job is left running and the update fails (a suspend waits). A savepoint that completes
// after all is found by its trigger time and used.
func handleRecovering(rc *Context) Outcome {
	st := &rc.App.Status
	hash, jobID := liveJob(st)
	v := rc.JobView(hash, jobID)
	if v.Liveness == Unknown {
		return failed(retryable("ObserveJob", fmt.Errorf("%s", v.Evidence)))
	}
	if !cancelIssued(v) {
		if choice := chooseRestore(rc, &v.Ref); choice.Problem != "" {
			msg := fmt.Sprintf("savepoint failed and %s; job %s is left as it was. Fix the cause and change the spec to retry, "+
				"or set fallbackWithoutState to start without state", choice.Problem, jobID)
			if suspending(rc.App) && candidate(st) == nil {
				return blocked(rc, "SuspendBlocked", msg)
			}
			return deployFailed(rc, "RecoveryFailed", msg)
		}
	}
	live, err := stopJob(rc, v)
	switch {
	case live == Unknown:
		return failed(err)
	case live == Alive:
		return stay(0)
	}
	var ref *JobRef
	if v.Details != nil {
		ref = &v.Ref
	}
	choice := chooseRestore(rc, ref)
	if choice.Problem != "" {
		return stateLost(rc, "RecoveryFailed", fmt.Sprintf("job %s is stopped and %s", jobID, choice.Problem))
	}
	st.SavepointPath = choice.Path
	if choice.WithoutState {
		warnWithoutState(rc)
	}
	return afterJobStopped(rc, "RestoringFromCheckpoint", fmt.Sprintf("job %s stopped; restoring from %s", jobID, describeState(st.SavepointPath)))
}
