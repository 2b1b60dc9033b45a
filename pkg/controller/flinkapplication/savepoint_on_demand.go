package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// Savepoints of a running job that keeps running: one per spec.savepointTriggerNonce, and on
// spec.periodicSavepoint's schedule. Asked for and triggered only in Running, so never while an
// update, a suspend or a delete is under way; one in flight when such a stop begins is followed to
// its end by SettleSavepoints, and the stop takes its own savepoint.

// onDemand are the purposes of what a running job is asked for while it keeps running.
var onDemand = []v1beta1.SavepointPurpose{v1beta1.SavepointManual, v1beta1.SavepointPeriodic, v1beta1.ManualCheckpoint, v1beta1.PeriodicCheckpoint}

// savepointOnDemand triggers or follows a Manual or Periodic savepoint of the stable job; busy is
// false when there is none to take.
func savepointOnDemand(rc *Context) (out Outcome, busy bool) {
	st := rc.Job
	s := jobstate.Stable(st)
	if s == nil || s.JobID == "" {
		return Outcome{}, false
	}
	v := rc.pass().View(s.ClusterHash, s.JobID)
	if v.Liveness != jobs.Alive {
		return Outcome{}, false
	}
	e := rc.Ledger().Pending(s.JobID, onDemand...)
	if e == nil {
		purpose := savepointDue(rc)
		var asked *v1beta1.FlinkSnapshot
		if purpose == "" {
			asked, purpose = snapshots.AskedFor(rc.snapshotPass())
		}
		if purpose == "" || rc.Overdue {
			return Outcome{}, false
		}
		// Recorded with the trigger, in the same write: one savepoint or checkpoint per nonce, or
		// per FlinkSnapshot, which the entry names.
		switch {
		case asked != nil:
		case purpose == v1beta1.SavepointManual:
			st.SavepointTriggerNonce = rc.Settings.SavepointTriggerNonce
		case purpose == v1beta1.ManualCheckpoint:
			st.CheckpointTriggerNonce = rc.Settings.CheckpointTriggerNonce
		}
		if e := rc.AskSavepoint(purpose, s, false); asked != nil {
			e.Snapshot = asked.Name
		}
		return persistThenContinue(), true
	}
	sp := rc.FollowSavepoint(e, v.Ref, true)
	switch {
	case sp.Wait != nil:
		return *sp.Wait, true
	case sp.Unknowable:
		rc.event(true, "SavepointUnsettled", fmt.Sprintf("%s savepoint of job %s: %s", e.Purpose, s.JobID, sp.Failure))
	case sp.Failure != "":
		reason, what := "SavepointFailed", string(e.Purpose)+" savepoint"
		if ledger.IsTriggeredCheckpoint(e.Purpose) {
			reason, what = "CheckpointFailed", checkpointNoun(e.Purpose)
		}
		rc.event(true, reason, fmt.Sprintf("%s of job %s failed: %s; the job keeps running", what, s.JobID, sp.Failure))
	}
	rc.TrimLedger()
	return stay(0), true
}

// savepointDue is the purpose of the savepoint the spec asks for now, or "".
func savepointDue(rc *Context) v1beta1.SavepointPurpose {
	st, spec := rc.Job, rc.Settings
	if spec.SavepointTriggerNonce != "" && spec.SavepointTriggerNonce != st.SavepointTriggerNonce {
		return v1beta1.SavepointManual
	}
	if spec.CheckpointTriggerNonce != "" && spec.CheckpointTriggerNonce != st.CheckpointTriggerNonce {
		return v1beta1.ManualCheckpoint
	}
	return periodicDue(rc)
}
