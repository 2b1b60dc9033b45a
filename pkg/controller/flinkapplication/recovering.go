package flinkapplication

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// handleRecovering replaces a savepoint that failed with the newest externalized checkpoint of the old
// job, if it is younger than maxCheckpointRestoreAgeSeconds. Without one the update fails and the old
// job is left running; the job only starts without state when the user set fallbackWithoutState.
func handleRecovering(rc *Context) Outcome {
	st := &rc.App.Status
	old, jobID := st.DeployHash, st.JobStatus.JobID
	maxAge := maxCheckpointAge(rc)
	path, age := newestCheckpoint(rc, old, jobID)
	usable := path != "" && age <= maxAge
	if !usable && !rc.App.Spec.FallbackWithoutState {
		why := "no externalized checkpoint was found"
		if path != "" {
			why = fmt.Sprintf("the newest checkpoint %s is %s old, more than %s", path, age.Round(time.Second), maxAge)
		}
		return deployFailed(rc, "RecoveryFailed", fmt.Sprintf("savepoint failed and %s; the old job is left as it was. "+
			"Fix the cause and change the spec to retry, or set fallbackWithoutState to start without state", why))
	}
	if usable && !flink.RetainsCheckpointsOnCancel(rc.App) {
		return deployFailed(rc, "RecoveryFailed", fmt.Sprintf("savepoint failed, and checkpoint %s would be deleted by cancelling "+
			"the old job because %s is not %s; the old job is left as it was", path, flink.CheckpointRetentionKey, flink.RetainOnCancellation))
	}
	stopped, err := stopJob(rc, old, jobID)
	if err != nil {
		return failed(err)
	}
	if !stopped {
		return stay(0)
	}
	st.JobStatus.JobID, st.JobStatus.ClusterHash = "", ""
	if !usable {
		st.SavepointPath = ""
		return warnTo(v1beta1.PhaseSubmitting, "RestoringWithoutState",
			"no usable savepoint or checkpoint; starting the new job without state because fallbackWithoutState is set")
	}
	// The job may have completed a newer checkpoint while it was being cancelled.
	rc.forget()
	if newer, newerAge := newestCheckpoint(rc, old, jobID); newer != "" && newerAge <= maxAge {
		path = newer
	}
	st.SavepointPath = path
	return moveTo(v1beta1.PhaseSubmitting, "RestoringFromCheckpoint", fmt.Sprintf("restoring the new job from checkpoint %s", path))
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
