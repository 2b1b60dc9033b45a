package lifecycle

import (
	v1beta1 "github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/printable"
)

// What every kind's pass does to its status before and after its handler: what older operator
// versions wrote moved to where it is kept now, and free text made safe to show.

// MigrateLedger moves into the ledger what operator versions before it kept elsewhere: the savepoint
// asked of a record (deployments.*.savepoint), status.savepoints, the recorded checkpoint and the
// state a stop left for the next job in savepointPath. Once moved, those fields are derived.
func (p *Pass) MigrateLedger() {
	st := p.Job
	if st == nil {
		return
	}
	l := p.Ledger()
	if len(st.Ledger) == 0 {
		for _, r := range st.Savepoints {
			t := r.Time
			purpose := r.Trigger
			if purpose == "" {
				purpose = v1beta1.SavepointUpgrade
			}
			st.Ledger = append(st.Ledger, v1beta1.StateEntry{Purpose: purpose, Result: v1beta1.StateResult(r.Result), Path: r.Path,
				Reason: r.Reason, Time: &t, TriggerTime: &t})
		}
		if js := st.JobStatus; js.LastCheckpointPath != "" && js.LastCheckpointTime != nil {
			if _, jobID := jobstate.LiveJob(st); jobID != "" {
				l.Record(v1beta1.StateCheckpoint, jobID, jobstate.LiveCluster(st), js.LastCheckpointPath, js.LastCheckpointTime.Time)
			}
		}
	}
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(st), jobstate.Candidate(st)} {
		if r == nil || r.Savepoint == nil {
			continue
		}
		purpose, cancel := r.Savepoint.Purpose, true
		switch {
		case purpose == v1beta1.SavepointManual || purpose == v1beta1.SavepointPeriodic:
			cancel = false
		case purpose != "":
		case p.Subject.Phase().Normalized() == fsm.PhaseDeleting:
			purpose = v1beta1.SavepointDelete
		case p.Subject.Phase().Normalized() == fsm.PhaseTeardown:
			purpose = v1beta1.SavepointTeardown
		case p.Settings.Suspend && jobstate.Candidate(st) == nil:
			purpose = v1beta1.SavepointSuspend
		default:
			// A BlueGreen version starting beside the job takes its savepoint without a cancel.
			purpose, cancel = v1beta1.SavepointUpgrade, !p.Kind.Beside()
		}
		t := r.Savepoint.Time
		job := r.JobID
		if job == "" && (st.JobStatus.ClusterHash == "" || st.JobStatus.ClusterHash == r.ClusterHash) {
			// The Lyft operator kept the job of its savepoint in jobStatus only.
			job = st.JobStatus.JobID
		}
		if job != "" {
			st.Ledger = append(st.Ledger, v1beta1.StateEntry{Purpose: purpose, JobID: job, ClusterHash: r.ClusterHash,
				TriggerID: r.Savepoint.TriggerID, TriggerTime: &t, Cancel: cancel, Result: v1beta1.StatePending})
		}
		r.Savepoint = nil
	}
	if d := &st.Deployments; d.NextRestorePath == "" && st.SavepointPath != "" && st.SavepointPath != st.FinalSavepointPath {
		d.NextRestorePath = st.SavepointPath
	}
}

// WarnOfUnavailableFormat says, with a Warning Event, that the spec asks for native savepoints of a
// Flink release that cannot take them. The caller calls it once per spec generation.
func (p *Pass) WarnOfUnavailableFormat() {
	if why := p.Settings.UnavailableFormat(p.ClusterOwner.Spec.FlinkVersion); why != "" {
		p.Event(true, "SavepointFormatUnavailable", why)
	}
}

// Showable escapes, in the free text of status, what would act on the terminal of whoever reads it
// (package printable): a reason or an error can quote an exception, a path or a URI that came from a
// JobManager or a user. The states themselves (paths a restore needs) are kept exact.
func (p *Pass) Showable() {
	p.Escape(printable.Text)
	if j := p.Job; j != nil {
		for i := range j.Ledger {
			j.Ledger[i].Reason = printable.Text(j.Ledger[i].Reason)
		}
		for i := range j.Savepoints {
			j.Savepoints[i].Reason = printable.Text(j.Savepoints[i].Reason)
		}
	}
}
