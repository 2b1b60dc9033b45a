package flinkapplication

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// newID returns 32 lowercase hex characters, the form Flink uses for job and trigger ids.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// savepointStep is where one savepoint stands after a pass.
type savepointStep struct {
	// Location is set once the savepoint completed.
	Location string
	// Failure is set when Flink reports the savepoint failed; the trigger id is cleared so that a
	// later attempt takes a new one.
	Failure string
	// Wait is non-nil while the caller must return it: the intent is being persisted, the savepoint is
	// in progress, or a call failed.
	Wait *Outcome
}

// takeSavepoint drives a savepoint of a job, safely across operator restarts. The trigger id is
// chosen and persisted first and then sent to Flink as the trigger id, and the operator polls before
// it triggers, so a restart finds the savepoint it already asked for instead of taking a second.
// With mayTrigger false it only follows a savepoint already asked for.
func takeSavepoint(rc *Context, hash, jobID string, cancelJob, mayTrigger bool) savepointStep {
	st := &rc.App.Status
	if st.SavepointTriggerID == "" {
		if !mayTrigger {
			return savepointStep{Failure: "no savepoint was asked for"}
		}
		st.SavepointTriggerID = newID()
		o := persistThenContinue()
		return savepointStep{Wait: &o}
	}
	url := rc.FlinkURL(hash)
	status, err := rc.Flink().GetSavepointStatus(rc, url, jobID, st.SavepointTriggerID)
	if client.IsNotFound(err) && !mayTrigger {
		st.SavepointTriggerID = ""
		return savepointStep{Failure: "Flink no longer knows the savepoint that was asked for"}
	}
	if client.IsNotFound(err) {
		_, err = rc.Flink().TriggerSavepoint(rc, url, jobID, client.SavepointRequest{
			CancelJob: cancelJob, TriggerID: st.SavepointTriggerID,
		})
		if err != nil {
			o := failed(err)
			return savepointStep{Wait: &o}
		}
		verb := "savepoint"
		if cancelJob {
			verb = "savepoint and cancel"
		}
		rc.event(false, "SavepointTriggered", fmt.Sprintf("triggered %s of job %s (trigger %s)", verb, jobID, st.SavepointTriggerID))
		o := stay(0)
		return savepointStep{Wait: &o}
	}
	if err != nil {
		o := failed(err)
		return savepointStep{Wait: &o}
	}
	switch {
	case status.Succeeded():
		rc.event(false, "SavepointCompleted", fmt.Sprintf("savepoint of job %s completed at %s", jobID, status.Location))
		return savepointStep{Location: status.Location}
	case status.Failed():
		st.SavepointTriggerID = ""
		cause := status.FailureCause
		if cause == "" {
			cause = "Flink reported no cause"
		}
		return savepointStep{Failure: fmt.Sprintf("savepoint of job %s failed: %s", jobID, cause)}
	default:
		o := stay(0)
		return savepointStep{Wait: &o}
	}
}

// jobState is the job's state as its JobManager reports it; gone when no job is recorded or the
// JobManager does not know it (any more).
func jobState(rc *Context, hash, jobID string) (state string, gone bool, err error) {
	if jobID == "" || hash == "" {
		return "", true, nil
	}
	job, err := rc.Job(hash, jobID)
	if client.IsNotFound(err) {
		return "", true, nil
	}
	if err != nil {
		return "", false, err
	}
	return job.State, false, nil
}

// stopJob cancels a job and reports whether it has stopped (globally terminal or unknown to its
// JobManager). Cancelling twice is harmless: Flink answers a cancel of a cancelling job with 202.
func stopJob(rc *Context, hash, jobID string) (bool, error) {
	state, gone, err := jobState(rc, hash, jobID)
	if err != nil {
		return false, err
	}
	if gone || client.IsGloballyTerminal(state) {
		return true, nil
	}
	if state != client.JobCancelling {
		err := rc.Flink().CancelJob(rc, rc.FlinkURL(hash), jobID)
		if client.IsNotFound(err) || client.IsConflict(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		rc.event(false, "CancellingJob", fmt.Sprintf("cancelling job %s", jobID))
	}
	return false, nil
}

// jobIsAlive tells whether the job is known to its JobManager and not globally terminal.
func jobIsAlive(rc *Context, hash, jobID string) (bool, error) {
	state, gone, err := jobState(rc, hash, jobID)
	return err == nil && !gone && !client.IsGloballyTerminal(state), err
}
