package flinkapplication

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// lastStateProblem says why the job's newest retained checkpoint cannot carry its state across a
// cancel, or "" when it can. It is asked before the cancel, while refusing still leaves the job
// running: once the job is cancelling, its newest checkpoint is used whatever its age by then.
func lastStateProblem(rc *Context, hash, jobID string) string {
	maxAge := maxCheckpointAge(rc)
	path, age := newestCheckpoint(rc, hash, jobID)
	usable := path != "" && age <= maxAge
	if !usable {
		if rc.App.Spec.FallbackWithoutState {
			return ""
		}
		if path == "" {
			return "no externalized checkpoint was found"
		}
		return fmt.Sprintf("the newest checkpoint %s is %s old, more than maxCheckpointRestoreAgeSeconds (%s)",
			path, age.Round(time.Second), maxAge)
	}
	if !flink.RetainsCheckpointsOnCancel(rc.App) {
		return fmt.Sprintf("checkpoint %s would be deleted by cancelling the job because %s is not %s",
			path, flink.CheckpointRetentionKey, flink.RetainOnCancellation)
	}
	return ""
}

// stateAfterCancel is the state a job cancelled for a last-state stop left: its newest completed
// checkpoint, read after the cancel because the job may have completed one while cancelling.
// A checkpoint too old to restore is dropped only when the user accepted starting without state.
func stateAfterCancel(rc *Context, hash, jobID string) string {
	rc.forget()
	path, age := newestCheckpoint(rc, hash, jobID)
	if rc.App.Spec.FallbackWithoutState && age > maxCheckpointAge(rc) {
		return ""
	}
	return path
}

// cancelIssued tells whether the job is already being cancelled or gone, so that a refusal can no
// longer keep it running.
func cancelIssued(rc *Context, hash, jobID string) (bool, error) {
	state, gone, err := jobState(rc, hash, jobID)
	return gone || state == client.JobCancelling || client.IsGloballyTerminal(state), err
}

func maxCheckpointAge(rc *Context) time.Duration {
	if s := rc.App.Spec.MaxCheckpointRestoreAgeSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return rc.Config.DefaultMaxCheckpointRestoreAge.Duration
}

// newestCheckpoint is the newest completed externalized checkpoint of the job and its age. Flink is
// asked first; when the job is gone from its JobManager, the last checkpoint seen while it ran is used.
// Flink reports trigger times in milliseconds.
func newestCheckpoint(rc *Context, hash, jobID string) (string, time.Duration) {
	if jobID != "" {
		if cp, err := rc.Checkpoints(hash, jobID); err == nil {
			if c := cp.Latest.Completed; c != nil && c.ExternalPath != "" {
				return c.ExternalPath, rc.Now.Sub(time.UnixMilli(c.TriggerTimestamp))
			}
		}
	}
	js := rc.App.Status.JobStatus
	if js.LastCheckpointPath != "" && js.LastCheckpointTime != nil {
		return js.LastCheckpointPath, rc.Now.Sub(js.LastCheckpointTime.Time)
	}
	return "", 0
}
