package flinkapplication

import (
	"fmt"
)

// handleRecovering replaces a savepoint that failed with the newest externalized checkpoint of the
// live job, if it is younger than maxCheckpointRestoreAgeSeconds. Without one the job is left running
// and the update fails (a suspend waits); the job only starts without state when the user set
// fallbackWithoutState.
func handleRecovering(rc *Context) Outcome {
	st := &rc.App.Status
	hash, jobID := liveJob(st)
	issued, err := cancelIssued(rc, hash, jobID)
	if err != nil && rc.Clusters[hash].Ready() {
		return failed(err)
	}
	if !issued && err == nil {
		if why := lastStateProblem(rc, hash, jobID); why != "" {
			msg := fmt.Sprintf("savepoint failed and %s; job %s is left as it was. Fix the cause and change the spec to retry, "+
				"or set fallbackWithoutState to start without state", why, jobID)
			if suspending(rc.App) && st.UpdatingHash == "" {
				return blocked(rc, "SuspendBlocked", msg)
			}
			return deployFailed(rc, "RecoveryFailed", msg)
		}
	}
	stopped, err := stopJob(rc, hash, jobID)
	if err != nil && rc.Clusters[hash].Ready() {
		return failed(err)
	}
	if err == nil && !stopped {
		return stay(0)
	}
	st.SavepointPath = stateAfterCancel(rc, hash, jobID)
	if st.SavepointPath == "" {
		if !rc.App.Spec.FallbackWithoutState {
			return deployFailed(rc, "RecoveryFailed", fmt.Sprintf("job %s is stopped and left no checkpoint to restore; "+
				"set fallbackWithoutState to start it without state", jobID))
		}
		rc.event(true, "RestoringWithoutState", "no usable savepoint or checkpoint; the next job starts without state because fallbackWithoutState is set")
	}
	return afterJobStopped(rc, "RestoringFromCheckpoint", fmt.Sprintf("job %s stopped; restoring from %s", jobID, describeState(st.SavepointPath)))
}
