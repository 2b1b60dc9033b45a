package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// handleSavepointing takes a savepoint of the old job and cancels it (Dual), then waits until the
// old job is CANCELED: the new job is submitted only when no other job of the application is alive.
func handleSavepointing(rc *Context) Outcome {
	st := &rc.App.Status
	old, jobID := st.DeployHash, st.JobStatus.JobID
	if jobID == "" || st.JobStatus.ClusterHash != "" && st.JobStatus.ClusterHash != old {
		return warnTo(v1beta1.PhaseRecovering, "NoJobToSavepoint", "no job is recorded for the running cluster; looking for a checkpoint instead")
	}
	if st.SavepointPath == "" {
		if st.SavepointTriggerID == "" && rc.App.Spec.ForceRollback {
			return warnTo(v1beta1.PhaseRollingBack, "ForceRollback", "forceRollback set: abandoning the update before the savepoint")
		}
		sp := takeSavepoint(rc, old, jobID, true, true)
		switch {
		case sp.Wait != nil:
			return *sp.Wait
		case sp.Failure != "":
			return warnTo(v1beta1.PhaseRecovering, "SavepointFailed", sp.Failure)
		}
		st.SavepointPath = sp.Location
	}
	stopped, err := stopJob(rc, old, jobID)
	if err != nil {
		return failed(err)
	}
	if !stopped {
		return stay(0)
	}
	st.SavepointTriggerID = ""
	st.JobStatus.JobID, st.JobStatus.ClusterHash = "", ""
	return moveTo(v1beta1.PhaseSubmitting, "OldJobStopped",
		fmt.Sprintf("old job %s stopped with savepoint %s", jobID, st.SavepointPath))
}
