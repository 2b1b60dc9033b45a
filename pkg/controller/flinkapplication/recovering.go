package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// handleRecovering replaces a savepoint that failed or never completed with the newest state the
// live job leaves (chooseRestore), which is checked to exist before the job is cancelled. Without
// it the job is left running and the update fails (a suspend waits). A savepoint that completes
// after all is found by its trigger time and used.
func handleRecovering(rc *Context) Outcome {
	st := rc.Job
	hash, jobID := jobstate.LiveJob(st)
	v := rc.pass().View(hash, jobID)
	if v.Liveness == jobs.Unknown {
		return failed(jobs.Retryable("ObserveJob", fmt.Errorf("%s", v.Evidence)))
	}
	if besideLive(rc) && v.Liveness == jobs.Alive {
		return recoverBeside(rc, v)
	}
	if !jobs.CancelIssued(v) {
		choice := rc.ChooseRestore(v.Ref.ID, &v.Ref)
		if choice.Unanswered != nil {
			return failed(choice.Unanswered)
		}
		if choice.Problem == "" && cancelDiscards(rc, jobID, choice.Path) {
			// The cancel would take the chosen checkpoint with it (explorer seed 10000110: a job
			// under NO_EXTERNALIZED_CHECKPOINTS was cancelled after its savepoint failed and
			// started again from an older savepoint).
			choice.Problem = fmt.Sprintf("its newest checkpoint %s would be deleted by cancelling it (%s is not %s)",
				choice.Path, flink.CheckpointRetentionKey, flink.RetainOnCancellation)
		}
		if choice.Problem != "" {
			msg := fmt.Sprintf("savepoint failed and %s; job %s is left as it was. Fix the cause and change the spec to retry, "+
				"or set %s to start without state", choice.Problem, jobID, rc.Settings.Field("fallbackWithoutState"))
			if rc.Settings.Suspend && jobstate.Candidate(st) == nil {
				return blocked(rc, "SuspendBlocked", msg)
			}
			return deployFailed(rc, "RecoveryFailed", msg)
		}
	}
	live, err := rc.pass().Cancel(v)
	switch {
	case live == jobs.Unknown:
		return failed(err)
	case live == jobs.Alive:
		return stay(0)
	}
	choice := rc.ChooseRestore(v.Ref.ID, v.Answered())
	if choice.Unanswered != nil {
		return failed(choice.Unanswered)
	}
	if choice.Problem != "" {
		return stateLost(rc, "RecoveryFailed", fmt.Sprintf("job %s is stopped and %s", jobID, choice.Problem))
	}
	rc.UseRestore(choice)
	return afterJobStopped(rc, "RestoringFromCheckpoint", fmt.Sprintf("job %s stopped; restoring from %s", jobID, lifecycle.DescribeState(st.Deployments.NextRestorePath)))
}

// recoverBeside starts a new BlueGreen version from the deployed job's newest state when its
// savepoint failed; the deployed job is never touched. Without usable state the update fails.
func recoverBeside(rc *Context, v *jobs.View) Outcome {
	st := rc.Job
	choice := rc.ChooseRestore(v.Ref.ID, &v.Ref)
	if choice.Unanswered != nil {
		return failed(choice.Unanswered)
	}
	if choice.Problem != "" {
		return deployFailed(rc, "RecoveryFailed", fmt.Sprintf("savepoint failed and %s; version %s keeps running untouched. "+
			"Fix the cause and change the spec to retry, or set fallbackWithoutState to start the new version without state",
			choice.Problem, jobstate.Stable(st).Version))
	}
	rc.UseRestore(choice)
	return moveTo(PhaseSubmitting, "RestoringFromCheckpoint", fmt.Sprintf("starting version %s from %s; job %s keeps running",
		jobstate.Candidate(st).Version, lifecycle.DescribeState(choice.Path), v.Ref.ID))
}

// cancelDiscards tells whether cancelling the job deletes the checkpoint of it at path: the
// retention policy the job runs with does not keep checkpoints through a cancel (savepoints are
// never deleted).
func cancelDiscards(rc *Context, jobID, path string) bool {
	return jobstate.IsCheckpointOf(jobID, path) && !flink.CheckpointsSurviveEnd(runConfigOfJob(rc, jobID), client.JobCanceled)
}
