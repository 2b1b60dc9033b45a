package lifecycle

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// Recovering replaces a savepoint that failed or never completed with the newest state the
// live job leaves (ChooseRestore), which is checked to exist before the job is cancelled. Without
// it the job is left running and the update fails (a suspend waits). A savepoint that completes
// after all is found by its trigger time and used.
func Recovering(p *Pass) fsm.Outcome {
	st := p.Job
	v, jobID, err := p.seenLiveJob()
	if err != nil {
		return fsm.Failed(err)
	}
	if p.Kind.Beside() && v.Liveness == jobs.Alive {
		return p.recoverBeside(v)
	}
	if !jobs.CancelIssued(v) {
		choice := p.ChooseRestore(v.Ref.ID, &v.Ref)
		if choice.Unanswered != nil {
			return fsm.Failed(choice.Unanswered)
		}
		if choice.Problem == "" && p.cancelDiscards(jobID, choice.Path) {
			// The cancel would take the chosen checkpoint with it (explorer seed 10000110: a job
			// under NO_EXTERNALIZED_CHECKPOINTS was cancelled after its savepoint failed and
			// started again from an older savepoint).
			choice.Problem = fmt.Sprintf("its newest checkpoint %s would be deleted by cancelling it (%s is not %s)",
				choice.Path, flink.CheckpointRetentionKey, flink.RetainOnCancellation)
		}
		if choice.Problem != "" {
			msg := fmt.Sprintf("savepoint failed and %s; job %s is left as it was. Fix the cause and change the spec to retry, "+
				"or set %s to start without state", choice.Problem, jobID, p.Settings.Field("fallbackWithoutState"))
			if p.Settings.Suspend && jobstate.Candidate(st) == nil {
				return p.Blocked("SuspendBlocked", msg)
			}
			return p.DeployFailed("RecoveryFailed", msg)
		}
	}
	live, err := p.Flink().Cancel(v)
	switch {
	case live == jobs.Unknown:
		return fsm.Failed(err)
	case live == jobs.Alive:
		return fsm.Stay(0)
	}
	choice := p.ChooseRestore(v.Ref.ID, v.Answered())
	if choice.Unanswered != nil {
		return fsm.Failed(choice.Unanswered)
	}
	if choice.Problem != "" {
		return p.StateLost("RecoveryFailed", fmt.Sprintf("job %s is stopped and %s", jobID, choice.Problem))
	}
	p.UseRestore(choice)
	return p.AfterJobStopped("RestoringFromCheckpoint", fmt.Sprintf("job %s stopped; restoring from %s", jobID, DescribeState(st.Deployments.NextRestorePath)))
}

// recoverBeside starts a new BlueGreen version from the deployed job's newest state when its
// savepoint failed; the deployed job is never touched. Without usable state the update fails.
func (p *Pass) recoverBeside(v *jobs.View) fsm.Outcome {
	st := p.Job
	choice := p.ChooseRestore(v.Ref.ID, &v.Ref)
	if choice.Unanswered != nil {
		return fsm.Failed(choice.Unanswered)
	}
	if choice.Problem != "" {
		return p.DeployFailed("RecoveryFailed", fmt.Sprintf("savepoint failed and %s; version %s keeps running untouched. "+
			"Fix the cause and change the spec to retry, or set fallbackWithoutState to start the new version without state",
			choice.Problem, jobstate.Stable(st).Version))
	}
	p.UseRestore(choice)
	return fsm.MoveTo(fsm.PhaseSubmitting, "RestoringFromCheckpoint", fmt.Sprintf("starting version %s from %s; job %s keeps running",
		jobstate.Candidate(st).Version, DescribeState(choice.Path), v.Ref.ID))
}

// cancelDiscards tells whether cancelling the job deletes the checkpoint of it at path: the
// retention policy the job runs with does not keep checkpoints through a cancel (savepoints are
// never deleted).
func (p *Pass) cancelDiscards(jobID, path string) bool {
	return jobstate.IsCheckpointOf(jobID, path) && !flink.CheckpointsSurviveEnd(p.Kind.RunConfig(jobID), client.JobCanceled)
}
