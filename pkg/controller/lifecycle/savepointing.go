package lifecycle

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// Savepointing takes a savepoint of the live job and cancels it (upgradeMode Savepoint, or
// LastState without a usable checkpoint), then waits until the job is stopped: a new job is
// submitted only when no other job of the application is alive.
func Savepointing(p *Pass) fsm.Outcome {
	st := p.Job
	old, jobID := jobstate.LiveJob(st)
	if jobID == "" {
		return fsm.WarnTo(fsm.PhaseRecovering, "NoJobToSavepoint", "no job is recorded for the running cluster; looking for a checkpoint instead")
	}
	v := p.Flink().View(old, jobID)
	if st.Deployments.NextRestorePath == "" {
		beside := p.Kind.Beside()
		e := p.StopSavepoint(jobID, v1beta1.SavepointUpgrade, v1beta1.SavepointSuspend)
		if e == nil {
			if out, abandon := p.AbandonBeforeStop("savepoint"); abandon {
				return out
			}
			switch v.Liveness {
			case jobs.Stopped:
				return fsm.WarnTo(fsm.PhaseRecovering, "JobStopped", fmt.Sprintf("no savepoint can be taken: %s; looking for its newest state", v.Evidence))
			case jobs.Unknown:
				return fsm.Failed(jobs.Retryable("ObserveJob", fmt.Errorf("%s", v.Evidence)))
			}
			if p.Overdue {
				return fsm.Stay(0)
			}
			purpose := v1beta1.SavepointUpgrade
			if p.Settings.Suspend && jobstate.Candidate(st) == nil {
				purpose = v1beta1.SavepointSuspend
			}
			// Recorded before it is triggered; a BlueGreen version beside the job takes its state
			// without stopping it.
			p.AskSavepoint(purpose, jobstate.Stable(st), !beside)
			return fsm.PersistThenContinue()
		}
		sp := p.FollowSavepoint(e, v.Ref, true)
		switch {
		case sp.Wait != nil:
			return *sp.Wait
		case sp.Unknowable && v.Liveness == jobs.Alive && !p.Overdue && p.lostThisVisit(jobID) < maxLostSavepoints:
			// Another JobMaster runs the job now: a new savepoint of it is newer than anything the
			// lost one may have completed, and is asked for next pass (the entry is no longer pending).
			p.Event(true, "SavepointInDoubt", sp.Failure+"; taking a new savepoint")
			return fsm.PersistThenContinue()
		case sp.Failure != "":
			return fsm.WarnTo(fsm.PhaseRecovering, "SavepointFailed", sp.Failure)
		}
		st.Deployments.NextRestorePath = sp.Location
		p.TrimLedger()
		if beside {
			return fsm.MoveTo(fsm.PhaseSubmitting, "SavepointCompleted", fmt.Sprintf(
				"savepoint %s of job %s taken; the job keeps running while version %s starts from it", sp.Location, jobID, jobstate.Candidate(st).Version))
		}
	}
	live, err := p.Flink().Cancel(v)
	switch {
	case live == jobs.Unknown:
		return fsm.Failed(err)
	case live == jobs.Alive:
		return fsm.Stay(0)
	}
	return p.AfterJobStopped("JobStopped", fmt.Sprintf("job %s stopped with savepoint %s", jobID, st.Deployments.NextRestorePath))
}

// maxLostSavepoints is how many savepoints of a job whose end Flink lost one visit of a stop phase
// replaces with a new one: a JobManager that loses every one (or says it was taken over each time)
// sends the stop on to Recovering instead of costing a savepoint and a status write a pass.
const maxLostSavepoints = 2

// lostThisVisit counts the job's savepoints asked for since the phase began whose end Flink lost.
func (p *Pass) lostThisVisit(jobID string) int {
	n := 0
	for i := range p.Job.Ledger {
		e := &p.Job.Ledger[i]
		if e.JobID == jobID && p.askedThisVisit(e) && e.Result == v1beta1.StateFailed && ledger.IsInDoubt(e) {
			n++
		}
	}
	return n
}
