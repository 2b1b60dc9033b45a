package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// handleSavepointing takes a savepoint of the live job and cancels it (upgradeMode Savepoint, or
// LastState without a usable checkpoint), then waits until the job is stopped: a new job is
// submitted only when no other job of the application is alive.
func handleSavepointing(rc *Context) Outcome {
	st := rc.Job
	old, jobID := jobstate.LiveJob(st)
	if jobID == "" {
		return warnTo(PhaseRecovering, "NoJobToSavepoint", "no job is recorded for the running cluster; looking for a checkpoint instead")
	}
	v := rc.pass().View(old, jobID)
	if st.Deployments.NextRestorePath == "" {
		beside := besideLive(rc)
		e := stopSavepoint(rc, jobID, v1beta1.SavepointUpgrade, v1beta1.SavepointSuspend)
		if e == nil {
			if out, abandon := rc.AbandonBeforeStop("savepoint"); abandon {
				return out
			}
			switch v.Liveness {
			case jobs.Stopped:
				return warnTo(PhaseRecovering, "JobStopped", fmt.Sprintf("no savepoint can be taken: %s; looking for its newest state", v.Evidence))
			case jobs.Unknown:
				return failed(jobs.Retryable("ObserveJob", fmt.Errorf("%s", v.Evidence)))
			}
			if rc.Overdue {
				return stay(0)
			}
			purpose := v1beta1.SavepointUpgrade
			if rc.Settings.Suspend && jobstate.Candidate(st) == nil {
				purpose = v1beta1.SavepointSuspend
			}
			// Recorded before it is triggered; a BlueGreen version beside the job takes its state
			// without stopping it.
			askSavepoint(rc, purpose, jobstate.Stable(st), !beside)
			return persistThenContinue()
		}
		sp := followSavepoint(rc, e, v.Ref, true)
		switch {
		case sp.Wait != nil:
			return *sp.Wait
		case sp.Failure != "":
			return warnTo(PhaseRecovering, "SavepointFailed", sp.Failure)
		}
		st.Deployments.NextRestorePath = sp.Location
		trimLedger(rc)
		if beside {
			return moveTo(PhaseSubmitting, "SavepointCompleted", fmt.Sprintf(
				"savepoint %s of job %s taken; the job keeps running while version %s starts from it", sp.Location, jobID, jobstate.Candidate(st).Version))
		}
	}
	live, err := rc.pass().Cancel(v)
	switch {
	case live == jobs.Unknown:
		return failed(err)
	case live == jobs.Alive:
		return stay(0)
	}
	return rc.AfterJobStopped("JobStopped", fmt.Sprintf("job %s stopped with savepoint %s", jobID, st.Deployments.NextRestorePath))
}
