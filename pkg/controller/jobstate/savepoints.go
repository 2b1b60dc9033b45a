package jobstate

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// The owner's state ledger (status.ledger, package ledger) as the job phases use it: every
// savepoint is an entry asked for (and persisted) before it is triggered, followed through the job
// core, and settled with its result; nothing else holds a savepoint trigger.

// FollowSavepoint drives the savepoint of a ledger entry through the job core and records how it
// ended in the entry: Completed with its path, or Failed with why. A savepoint whose end is not
// known stays Pending, however long the caller waits for it. With mayTrigger false it only follows
// a savepoint already sent. format is the savepoint format the entry asks for; "" leaves the pass's.
// recorded is when the job's newest checkpoint recorded outside the ledger was taken
// (Ledger.CompleteSavepoint). The step's Wait is non-nil while the caller must wait.
func FollowSavepoint(p *jobs.Pass, l ledger.Ledger, e *v1beta1.StateEntry, ref jobs.Ref, mayTrigger bool, format string, recorded, now time.Time) jobs.SavepointStep {
	t := ledger.Trigger(e)
	var step jobs.SavepointStep
	if ledger.IsTriggeredCheckpoint(e.Purpose) {
		// A checkpoint the operator asked for is followed as a savepoint is, through its own calls.
		cp := p.Checkpoint(ref, &t, mayTrigger)
		step = jobs.SavepointStep{Location: cp.Location, Failure: cp.Failure, Wait: cp.Wait}
	} else {
		if format != "" {
			p.SavepointFormat = format
		}
		step = p.Savepoint(ref, &t, e.Cancel, mayTrigger)
	}
	switch {
	case step.Location != "":
		ledger.SetTrigger(e, t)
		if !l.CompleteSavepoint(e, step.Location, step.TakenAt, recorded, now) {
			return jobs.SavepointStep{Wait: &jobs.Wait{}}
		}
		return jobs.SavepointStep{Location: step.Location}
	case step.Unknowable:
		ledger.Unknowable(e, step.Failure, now)
		return jobs.SavepointStep{Failure: step.Failure, Unknowable: true}
	case step.Failure != "":
		ledger.Fail(e, step.Failure, now)
		return jobs.SavepointStep{Failure: step.Failure}
	}
	ledger.SetTrigger(e, t)
	return jobs.SavepointStep{Wait: step.Wait}
}

// maxLostSavepoints is how many savepoints of one purpose whose end Flink lost EndJob replaces with
// a new one.
const maxLostSavepoints = 2

// EndJob ends a record's job for good (a deleted owner, a torn-down BlueGreen version) through the
// job core: the savepoint of its purpose with cancel when one is wanted (asked for and persisted
// first: the step's Wait says Persist) or already asked for, then a cancel if the job is still
// alive. A savepoint asked for earlier is followed to its end even when it is no longer wanted (the
// user chose ForceCancel meanwhile), so that the state it completed is the one recorded. While
// Flink fails a wanted savepoint the job is left running and a new one is asked for; step names
// that failure for the caller's retries. overdue holds a new savepoint back: the pass is past its
// time, and asks nothing new of Flink.
func (j Job) EndJob(p *jobs.Pass, purpose v1beta1.SavepointPurpose, rec *v1beta1.DeploymentRecord, v *jobs.View, wanted bool, step string,
	overdue bool, recorded, now time.Time) jobs.EndStep {
	e := j.Ledger().Pending(rec.JobID, purpose)
	if e == nil && wanted && v.Liveness == jobs.Alive {
		if overdue {
			return jobs.EndStep{Wait: &jobs.Wait{}}
		}
		if lost := j.Ledger().Lost(rec.JobID, purpose); lost >= maxLostSavepoints {
			// A JobManager that loses every savepoint asked of it costs no more: the step fails,
			// and its retries are the caller's.
			return jobs.EndStep{Wait: &jobs.Wait{Err: jobs.Retryable(step, fmt.Errorf(
				"Flink lost the end of %d savepoints of job %s in a row", lost, rec.JobID))}}
		}
		j.Ledger().Ask(purpose, rec.JobID, rec.ClusterHash, true, now)
		return jobs.EndStep{Wait: &jobs.Wait{Persist: true}}
	}
	var t jobs.Trigger
	if e != nil {
		t = ledger.Trigger(e)
	}
	end := p.End(v, &t, wanted, step)
	if e != nil {
		switch {
		case end.SavepointPath != "" && !j.Ledger().CompleteSavepoint(e, end.SavepointPath, end.SavepointTakenAt, recorded, now):
			// The job ended with it; when Flink took it is asked again next pass.
			ledger.SetTrigger(e, t)
			return jobs.EndStep{Wait: &jobs.Wait{}}
		case end.SavepointPath != "":
			ledger.SetTrigger(e, t)
		case end.Unknowable:
			ledger.Unknowable(e, end.Missing, now)
		case end.Missing != "", !t.Asked():
			// Flink failed it (a new one is asked for next time), or it can no longer be had.
			reason := end.Missing
			if reason == "" {
				reason = fmt.Sprintf("Flink reported the savepoint of job %s failed", e.JobID)
			}
			ledger.Fail(e, reason, now)
		default:
			ledger.SetTrigger(e, t)
		}
	}
	return end
}
