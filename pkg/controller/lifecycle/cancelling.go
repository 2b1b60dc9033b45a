package lifecycle

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// Cancelling stops the live job with PATCH /jobs/:id?mode=cancel (upgradeMode LastState or
// Stateless) and stays while it is CANCELLING: nothing is submitted until it is stopped. LastState
// first checks that the newest retained checkpoint can carry the state across the cancel; when it
// cannot, it takes a savepoint instead, and fails only when that fails too.
func Cancelling(p *Pass) fsm.Outcome {
	st := p.Job
	mode := p.Settings.UpgradeMode
	v, jobID, err := p.seenLiveJob()
	if err != nil {
		return fsm.Failed(err)
	}
	if !jobs.CancelIssued(v) {
		if out, abandon := p.AbandonBeforeStop("cancel"); abandon {
			return out
		}
		if mode != v1beta1.UpgradeModeStateless && !p.Settings.FallbackWithoutState {
			if why := p.LastStateProblem(v.Ref); why != "" {
				return fsm.WarnTo(fsm.PhaseSavepointing, "LastStateViaSavepoint", fmt.Sprintf(
					"job %s cannot keep its state through a cancel: %s; taking a savepoint with cancel instead", jobID, why))
			}
		}
	}
	live, err := p.Flink().Cancel(v)
	switch {
	case live == jobs.Unknown:
		return fsm.Failed(err)
	case live == jobs.Alive:
		return fsm.Stay(0)
	}
	if mode == v1beta1.UpgradeModeStateless {
		st.Deployments.NextRestorePath = ""
		return p.AfterJobStopped("JobCancelled", fmt.Sprintf("job %s cancelled; upgradeMode Stateless starts the next job without state", jobID))
	}
	// A JobManager that did not answer about the job (its Deployment deleted under the cancel)
	// is not asked for its checkpoints: the job went with it, and the records are all there is, as
	// for a recovery.
	choice := p.ChooseRestore(v.Ref.ID, v.Answered())
	if choice.Unanswered != nil {
		return fsm.Failed(choice.Unanswered)
	}
	if choice.Problem != "" {
		return p.StateLost("LastStateLost", fmt.Sprintf("job %s was cancelled but %s", jobID, choice.Problem))
	}
	p.UseRestore(choice)
	return p.AfterJobStopped("JobCancelled", fmt.Sprintf("job %s cancelled; its newest state is %s", jobID, DescribeState(st.Deployments.NextRestorePath)))
}

// seenLiveJob is the live job as Flink answers for it in this pass; an error while Flink has not
// answered, which a stop waits out: a job is never taken as stopped because its JobManager does not
// answer.
func (p *Pass) seenLiveJob() (*jobs.View, string, error) {
	hash, jobID := jobstate.LiveJob(p.Job)
	v := p.Flink().View(hash, jobID)
	if v.Liveness == jobs.Unknown {
		return nil, jobID, jobs.Retryable("ObserveJob", fmt.Errorf("%s", v.Evidence))
	}
	return v, jobID, nil
}
