package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// handleCancelling stops the old job without a savepoint, because the user set savepointDisabled,
// and waits until it is gone before the new job is submitted without state.
func handleCancelling(rc *Context) Outcome {
	st := &rc.App.Status
	jobID := st.JobStatus.JobID
	stopped, err := stopJob(rc, st.DeployHash, jobID)
	if err != nil {
		return failed(err)
	}
	if !stopped {
		return stay(0)
	}
	st.SavepointPath = ""
	st.JobStatus.JobID, st.JobStatus.ClusterHash = "", ""
	return moveTo(v1beta1.PhaseSubmitting, "JobCancelled",
		fmt.Sprintf("old job %s cancelled without a savepoint (savepointDisabled); the new job starts without state", jobID))
}
