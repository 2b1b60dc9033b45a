package flinkapplication

import (
	"errors"
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// handleDeleting deals with the live job per deleteMode before the finalizer goes: Savepoint takes a
// final savepoint and cancels the job, ForceCancel cancels it, None leaves Flink alone. The owned
// clusters then go by garbage collection.
func handleDeleting(rc *Context) Outcome {
	st := &rc.App.Status
	if !hasFinalizer(rc.App) {
		return stay(untilChanged)
	}
	live, jobID := st.DeployHash, st.JobStatus.JobID
	if st.JobStatus.ClusterHash != "" && st.JobStatus.ClusterHash != live {
		// The recorded job belongs to a cluster of an unfinished update; garbage collection ends it.
		live = st.JobStatus.ClusterHash
	}
	mode := deleteMode(rc.App)
	if mode == v1beta1.DeleteModeNone || live == "" || jobID == "" {
		return finishDelete(rc, fmt.Sprintf("deleteMode %s: Flink left alone", mode))
	}
	alive, err := jobIsAlive(rc, live, jobID)
	if err != nil && mode == v1beta1.DeleteModeForceCancel && !rc.Clusters[live].Ready() {
		// The JobManager is gone, and with it the job: nothing is left to cancel.
		return finishDelete(rc, "JobManager unreachable and not running; nothing to cancel")
	}
	if err != nil {
		return failed(err)
	}
	// A savepoint with cancel ends the job, possibly before its result is read: a savepoint in flight
	// is followed to its end even when the job is no longer alive.
	if mode == v1beta1.DeleteModeSavepoint && st.FinalSavepointPath == "" && (alive || st.SavepointTriggerID != "") {
		sp := takeSavepoint(rc, live, jobID, true, alive)
		switch {
		case sp.Wait != nil:
			return *sp.Wait
		case sp.Failure != "" && alive:
			return failed(retryable("FinalSavepoint", errors.New(sp.Failure)))
		case sp.Failure != "":
			rc.event(true, "FinalSavepointMissing", fmt.Sprintf("job %s ended without the final savepoint: %s", jobID, sp.Failure))
		default:
			st.FinalSavepointPath = sp.Location
			rc.event(false, "FinalSavepoint", fmt.Sprintf("final savepoint of job %s: %s", jobID, sp.Location))
		}
	}
	if alive {
		stopped, err := stopJob(rc, live, jobID)
		if err != nil && !client.IsConflict(err) {
			return failed(err)
		}
		if !stopped {
			return stay(0)
		}
	}
	if st.FinalSavepointPath != "" {
		return finishDelete(rc, fmt.Sprintf("job %s stopped; final savepoint %s", jobID, st.FinalSavepointPath))
	}
	return finishDelete(rc, fmt.Sprintf("job %s stopped (deleteMode %s)", jobID, mode))
}

func finishDelete(rc *Context, msg string) Outcome {
	if err := removeFinalizer(rc); err != nil {
		return failed(err)
	}
	return Outcome{Reason: "Deleted", Message: msg, After: untilChanged}
}
