package flinkapplication

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// statePoint is a place a job's state can be restored from, and when that state was taken.
type statePoint struct {
	Path string
	At   time.Time
}

// restoreChoice is what the restore policy decided.
type restoreChoice struct {
	// Path is the state to restore; "" starts without state.
	Path string
	// Problem says why no state may be restored; "" when Path can be used, or when the user
	// accepted starting without state (WithoutState).
	Problem string
	// WithoutState is set when no usable state exists and fallbackWithoutState allows that.
	WithoutState bool
}

// chooseRestore is the one restore policy, used by every path that starts a job again after its
// predecessor stopped: recovery after a failed savepoint, a LastState stop, JobManager recovery, a
// lost or failed job, a rollback. It takes the newest state known: what Flink reports for the job
// (its newest retained checkpoint, and the savepoint of the recorded trigger when Flink lists one
// triggered since), and what status remembers (the last checkpoint seen, the savepoint completed
// for the recorded trigger, the state the job started from). That state must be younger than
// maxCheckpointRestoreAgeSeconds. Without such state the job starts without state only when the
// user set fallbackWithoutState: never silently, never from older state than the newest known.
// job is nil when Flink cannot be asked (its JobManager is gone or no longer knows the job).
func chooseRestore(rc *Context, job *JobRef) restoreChoice {
	points := recordedState(rc)
	if job != nil {
		points = append(points, flinkState(rc, *job, stableSavepoint(&rc.App.Status))...)
	}
	newest := newestState(points)
	maxAge := maxCheckpointAge(rc)
	var problem string
	switch {
	case newest == nil:
		problem = "no savepoint or retained checkpoint was found"
	case rc.Now.Sub(newest.At) > maxAge:
		problem = fmt.Sprintf("the newest state %s is %s old, more than maxCheckpointRestoreAgeSeconds (%s)",
			newest.Path, rc.Now.Sub(newest.At).Round(time.Second), maxAge)
	default:
		return restoreChoice{Path: newest.Path}
	}
	if rc.App.Spec.FallbackWithoutState {
		return restoreChoice{WithoutState: true}
	}
	return restoreChoice{Problem: problem}
}

// stableSavepoint is the savepoint asked of the stable deployment's job, if any.
func stableSavepoint(st *v1beta1.FlinkApplicationStatus) *v1beta1.SavepointTrigger {
	if s := stable(st); s != nil {
		return s.Savepoint
	}
	return nil
}

func newestState(points []statePoint) *statePoint {
	var newest *statePoint
	for i := range points {
		if newest == nil || points[i].At.After(newest.At) {
			newest = &points[i]
		}
	}
	return newest
}

// useRestore records the policy's choice as the state the next job starts from.
func useRestore(rc *Context, choice restoreChoice) {
	rc.App.Status.SavepointPath = choice.Path
	if choice.WithoutState {
		warnWithoutState(rc)
	}
}

// warnWithoutState says, as a Warning Event, that a job starts without state because no usable
// state exists and the user set fallbackWithoutState.
func warnWithoutState(rc *Context) {
	rc.event(true, "RestoringWithoutState", "no usable savepoint or checkpoint; the job starts without state because fallbackWithoutState is set")
}

// flinkState is the state Flink reports for a job: its newest externalized checkpoint, and the
// savepoint of the trigger recorded for it.
func flinkState(rc *Context, ref JobRef, trigger *v1beta1.SavepointTrigger) []statePoint {
	var out []statePoint
	if cps, err := rc.checkpointsOf(ref); err == nil {
		if c := cps.Latest.Completed; c != nil && restorable(c.ExternalPath) {
			out = append(out, statePoint{c.ExternalPath, time.UnixMilli(c.TriggerTimestamp)})
		}
	}
	if sp := savepointSince(rc, ref, trigger); sp != nil && sp.Status == "COMPLETED" && restorable(sp.ExternalPath) {
		out = append(out, statePoint{sp.ExternalPath, time.UnixMilli(sp.TriggerTimestamp)})
	}
	return out
}

// recordedState is the state status remembers for the job that ran last.
func recordedState(rc *Context) []statePoint {
	st := &rc.App.Status
	js := &st.JobStatus
	var out []statePoint
	if js.LastCheckpointPath != "" && js.LastCheckpointTime != nil {
		out = append(out, statePoint{js.LastCheckpointPath, js.LastCheckpointTime.Time})
	}
	if sp := stableSavepoint(st); st.SavepointPath != "" && sp != nil {
		// The savepoint this stop completed.
		out = append(out, statePoint{st.SavepointPath, sp.Time.Time})
	}
	if js.RestorePath != "" && js.RestoreTime != nil {
		// The state a job started from is at least as old as its start.
		out = append(out, statePoint{js.RestorePath, js.RestoreTime.Time})
	}
	return out
}

// restorable tells whether a checkpoint's path can be restored from: Flink names checkpoints
// that were not externalized "<checkpoint-not-externally-addressable>".
func restorable(path string) bool { return path != "" && path[0] != '<' }

// lastStateProblem says why the job's newest retained checkpoint cannot carry its state across a
// cancel, or "" when it can. It is asked before the cancel, while the job runs: a savepoint can
// still be taken instead. Once the job is cancelling, its newest checkpoint is used.
func lastStateProblem(rc *Context, ref JobRef) string {
	maxAge := maxCheckpointAge(rc)
	cps, err := rc.checkpointsOf(ref)
	if err != nil {
		return fmt.Sprintf("its checkpoints could not be read: %v", err)
	}
	c := cps.Latest.Completed
	if c == nil || !restorable(c.ExternalPath) {
		return "no externalized checkpoint was found"
	}
	if age := rc.Now.Sub(time.UnixMilli(c.TriggerTimestamp)); age > maxAge {
		return fmt.Sprintf("the newest checkpoint %s is %s old, more than maxCheckpointRestoreAgeSeconds (%s)",
			c.ExternalPath, age.Round(time.Second), maxAge)
	}
	if !flink.RetainsCheckpointsOnCancel(rc.App) {
		return fmt.Sprintf("checkpoint %s would be deleted by cancelling the job because %s is not %s",
			c.ExternalPath, flink.CheckpointRetentionKey, flink.RetainOnCancellation)
	}
	return ""
}

func maxCheckpointAge(rc *Context) time.Duration {
	if s := rc.App.Spec.MaxCheckpointRestoreAgeSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return rc.Config.DefaultMaxCheckpointRestoreAge.Duration
}

// cancelIssued tells whether a job is already cancelling or stopped, so that refusing to stop it can
// no longer keep it running.
func cancelIssued(v *JobView) bool {
	return v.Liveness == Stopped || v.State() == client.JobCancelling
}
