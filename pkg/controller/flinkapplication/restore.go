package flinkapplication

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// chooseRestore is the one restore policy, used by every path that starts a job again after its
// predecessor stopped: recovery after a failed savepoint, a LastState stop, JobManager recovery, a
// lost or failed job, a rollback. It takes the newest state known: what Flink reports for the job
// (its newest retained checkpoint, and the savepoint of the recorded trigger when Flink lists one
// triggered since), and what status remembers (the last checkpoint seen, the savepoint completed
// for the recorded trigger, the state the job started from). That state must be younger than
// maxCheckpointRestoreAgeSeconds. Without such state the job starts without state only when the
// user set fallbackWithoutState: never silently, never from older state than the newest known.
// job is nil when Flink cannot be asked (its JobManager is gone or no longer knows the job).
func chooseRestore(rc *Context, job *jobs.Ref) jobs.RestoreChoice {
	points := recordedState(rc)
	if job != nil {
		points = append(points, rc.pass().FlinkState(*job, recordTrigger(stableSavepoint(&rc.App.Status)))...)
	}
	return jobs.ChooseRestore(points, rc.Now, jobs.RestorePolicy{MaxAge: maxCheckpointAge(rc), WithoutState: rc.App.Spec.FallbackWithoutState})
}

// stableSavepoint is the savepoint asked of the stable deployment's job, if any.
func stableSavepoint(st *v1beta1.FlinkApplicationStatus) *v1beta1.SavepointTrigger {
	if s := stable(st); s != nil {
		return s.Savepoint
	}
	return nil
}

// useRestore records the policy's choice as the state the next job starts from.
func useRestore(rc *Context, choice jobs.RestoreChoice) {
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

// recordedState is the state status remembers for the job that ran last.
func recordedState(rc *Context) []jobs.StatePoint {
	st := &rc.App.Status
	js := &st.JobStatus
	var out []jobs.StatePoint
	if js.LastCheckpointPath != "" && js.LastCheckpointTime != nil {
		out = append(out, jobs.StatePoint{Path: js.LastCheckpointPath, At: js.LastCheckpointTime.Time})
	}
	if sp := stableSavepoint(st); st.SavepointPath != "" && sp != nil {
		// The savepoint this stop completed.
		out = append(out, jobs.StatePoint{Path: st.SavepointPath, At: sp.Time.Time})
	}
	if js.RestorePath != "" && js.RestoreTime != nil {
		// The state a job started from is at least as old as its start.
		out = append(out, jobs.StatePoint{Path: js.RestorePath, At: js.RestoreTime.Time})
	}
	return out
}

// lastStateProblem says why the job's newest retained checkpoint cannot carry its state across a
// cancel, or "" when it can. It is asked before the cancel, while the job runs: a savepoint can
// still be taken instead. Once the job is cancelling, its newest checkpoint is used.
func lastStateProblem(rc *Context, ref jobs.Ref) string {
	return rc.pass().CheckpointProblem(ref, maxCheckpointAge(rc), flink.RetainsCheckpointsOnCancel(rc.App),
		fmt.Sprintf("%s is not %s", flink.CheckpointRetentionKey, flink.RetainOnCancellation))
}

func maxCheckpointAge(rc *Context) time.Duration {
	if s := rc.App.Spec.MaxCheckpointRestoreAgeSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return rc.Config.DefaultMaxCheckpointRestoreAge.Duration
}
