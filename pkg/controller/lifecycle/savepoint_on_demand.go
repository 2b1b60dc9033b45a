package lifecycle

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// Savepoints of a running job that keeps running: one per spec.savepointTriggerNonce, and on
// spec.periodicSavepoint's schedule. Asked for and triggered only in Running, so never while an
// update, a suspend or a delete is under way; one in flight when such a stop begins is followed to
// its end by SettleSavepoints, and the stop takes its own savepoint.

// OnDemand are the purposes of what a running job is asked for while it keeps running.
var OnDemand = []v1beta1.SavepointPurpose{v1beta1.SavepointManual, v1beta1.SavepointPeriodic, v1beta1.ManualCheckpoint, v1beta1.PeriodicCheckpoint}

// SavepointOnDemand triggers or follows a Manual or Periodic savepoint of the stable job; busy is
// false when there is none to take.
func (p *Pass) SavepointOnDemand() (out fsm.Outcome, busy bool) {
	st := p.Job
	s := jobstate.Stable(st)
	if s == nil || s.JobID == "" {
		return fsm.Outcome{}, false
	}
	v := p.Flink().View(s.ClusterHash, s.JobID)
	if v.Liveness != jobs.Alive {
		return fsm.Outcome{}, false
	}
	e := p.Ledger().Pending(s.JobID, OnDemand...)
	if e == nil {
		purpose := p.savepointDue()
		var asked *v1beta1.FlinkSnapshot
		if purpose == "" {
			asked, purpose = snapshots.AskedFor(p.SnapshotPass())
		}
		if purpose == "" || p.Overdue {
			return fsm.Outcome{}, false
		}
		// Recorded with the trigger, in the same write: one savepoint or checkpoint per nonce, or
		// per FlinkSnapshot, which the entry names.
		switch {
		case asked != nil:
		case purpose == v1beta1.SavepointManual:
			st.SavepointTriggerNonce = p.Settings.SavepointTriggerNonce
		case purpose == v1beta1.ManualCheckpoint:
			st.CheckpointTriggerNonce = p.Settings.CheckpointTriggerNonce
		}
		if e := p.AskSavepoint(purpose, s, false); asked != nil {
			e.Snapshot = asked.Name
		}
		return fsm.PersistThenContinue(), true
	}
	sp := p.FollowSavepoint(e, v.Ref, true)
	switch {
	case sp.Wait != nil:
		return *sp.Wait, true
	case sp.Unknowable:
		p.Event(true, "SavepointUnsettled", fmt.Sprintf("%s savepoint of job %s: %s", e.Purpose, s.JobID, sp.Failure))
	case sp.Failure != "":
		reason, what := "SavepointFailed", string(e.Purpose)+" savepoint"
		if ledger.IsTriggeredCheckpoint(e.Purpose) {
			reason, what = "CheckpointFailed", checkpointNoun(e.Purpose)
		}
		p.Event(true, reason, fmt.Sprintf("%s of job %s failed: %s; the job keeps running", what, s.JobID, sp.Failure))
	}
	p.TrimLedger()
	return fsm.Stay(0), true
}

// savepointDue is the purpose of the savepoint the spec asks for now, or "".
func (p *Pass) savepointDue() v1beta1.SavepointPurpose {
	st, spec := p.Job, p.Settings
	if spec.SavepointTriggerNonce != "" && spec.SavepointTriggerNonce != st.SavepointTriggerNonce {
		return v1beta1.SavepointManual
	}
	if spec.CheckpointTriggerNonce != "" && spec.CheckpointTriggerNonce != st.CheckpointTriggerNonce {
		return v1beta1.ManualCheckpoint
	}
	return p.periodicDue()
}
