package lifecycle

import (
	"time"

	"fmt"
	"slices"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// The object's state ledger (status.ledger, package ledger) as handlers use it: every savepoint is
// an entry asked for (and persisted) before it is triggered, followed through the job core, and
// settled with its result; nothing else holds a savepoint trigger.

// SavepointStep is where one savepoint stands after a pass.
type SavepointStep struct {
	// Location is set once the savepoint completed.
	Location string
	// Failure is set when the savepoint failed or can no longer be had; its entry is Failed.
	Failure string
	// Unknowable is set with Failure when it is not Flink's word: Flink lost the job before saying
	// how the savepoint ended, and its entry stays in doubt (ledger.Unknowable).
	Unknowable bool
	// Wait is non-nil while the caller must return it: the savepoint is in progress, or a call failed.
	Wait *fsm.Outcome
}

// FollowSavepoint drives the savepoint of a ledger entry through the job core and records how it
// ended in the entry (jobstate.FollowSavepoint), in the format the entry asks for.
func (p *Pass) FollowSavepoint(e *v1beta1.StateEntry, ref jobs.Ref, mayTrigger bool) SavepointStep {
	step := jobstate.FollowSavepoint(p.Flink(), p.Ledger(), e, ref, mayTrigger, p.RequestedFormat(e), p.recordedCheckpoint(e.JobID), p.Now)
	out := SavepointStep{Location: step.Location, Failure: step.Failure, Unknowable: step.Unknowable}
	if step.Wait != nil {
		o := WaitOutcome(*step.Wait)
		out.Wait = &o
	}
	return out
}

// recordedCheckpoint is when the job's newest checkpoint recorded in the checkpoint book was
// taken: one recorded in the ledger the ledger knows itself. Zero for none.
func (p *Pass) recordedCheckpoint(jobID string) time.Time {
	if p.Job.JobStatus.JobID != jobID || jobID == "" {
		return time.Time{}
	}
	_, at := p.CheckpointRecords().Recorded()
	return at
}

// AskSavepoint records a savepoint of a record's job in the ledger, to be triggered once persisted.
func (p *Pass) AskSavepoint(purpose v1beta1.SavepointPurpose, rec *v1beta1.DeploymentRecord, cancel bool) *v1beta1.StateEntry {
	return p.Ledger().Ask(purpose, rec.JobID, rec.ClusterHash, cancel, p.Now)
}

// StopSavepoint is the savepoint of the stop in progress of a job: the one asked for since the
// phase began, so that one left from an earlier attempt (settled on its own) is never taken for it.
func (p *Pass) StopSavepoint(jobID string, purposes ...v1beta1.SavepointPurpose) *v1beta1.StateEntry {
	if e := p.Ledger().Pending(jobID, purposes...); e != nil && p.askedThisVisit(e) {
		return e
	}
	return nil
}

func (p *Pass) askedThisVisit(e *v1beta1.StateEntry) bool {
	started := p.Machine.PhaseStartedAt
	return e.TriggerTime != nil && (started == nil || !e.TriggerTime.Before(started))
}

func purposeIn(p v1beta1.SavepointPurpose, purposes []v1beta1.SavepointPurpose) bool {
	for _, q := range purposes {
		if p == q {
			return true
		}
	}
	return false
}

// EndJob ends a record's job for good (a deleted application, a torn-down BlueGreen version)
// through the job core (jobstate.Job.EndJob): the savepoint of its purpose with cancel when one is
// wanted or already asked for, then a cancel if the job is still alive.
func (p *Pass) EndJob(purpose v1beta1.SavepointPurpose, rec *v1beta1.DeploymentRecord, v *jobs.View, wanted bool, step string) EndStep {
	end := p.JobState().EndJob(p.Flink(), purpose, rec, v, wanted, step, p.Overdue, p.recordedCheckpoint(rec.JobID), p.Now)
	out := EndStep{SavepointPath: end.SavepointPath, Missing: end.Missing}
	if end.Wait != nil {
		o := WaitOutcome(*end.Wait)
		out.Wait = &o
	}
	return out
}

// EndStep is where ending a job for good stands after a pass.
type EndStep struct {
	// Wait is non-nil while the caller must return it.
	Wait *fsm.Outcome
	// SavepointPath is the savepoint the job ended with; "" when none was asked for or had.
	SavepointPath string
	// Missing says why the savepoint asked for was not had although the job ended.
	Missing string
}

// SettleSavepoints follows every Pending savepoint that the phase's handler does not follow itself:
// a manual or periodic savepoint in flight when an update, a suspend or a delete began, or a stop's
// savepoint left by an earlier attempt. Each is recorded as it ends, never dropped: while its
// JobManager does not answer it stays Pending, and once the JobManager is gone its result can no
// longer be read, which its entry says.
func (p *Pass) SettleSavepoints() {
	phase := p.Subject.Phase().Normalized()
	for _, e := range p.Ledger().AllPending() {
		if p.followedByHandler(phase, e) {
			continue
		}
		if e.JobID == "" {
			ledger.Fail(e, "no job is recorded for it, so Flink cannot be asked about it", p.Now)
			continue
		}
		if p.Clusters[e.ClusterHash].JobManagerGone() {
			ledger.Unknowable(e, "its JobManager is gone before its result was read", p.Now)
			p.Event(true, "SavepointUnsettled", fmt.Sprintf("%s savepoint of job %s (trigger %s): its JobManager is gone before its result was read",
				e.Purpose, e.JobID, e.TriggerID))
			continue
		}
		v := p.Flink().View(e.ClusterHash, e.JobID)
		if v.Liveness == jobs.Unknown {
			continue
		}
		sp := p.FollowSavepoint(e, v.Ref, false)
		switch {
		case sp.Location != "":
			p.Event(false, "SavepointRecorded", fmt.Sprintf("%s savepoint of job %s completed at %s", e.Purpose, e.JobID, sp.Location))
		case sp.Unknowable:
			p.Event(true, "SavepointUnsettled", fmt.Sprintf("%s savepoint of job %s: %s", e.Purpose, e.JobID, sp.Failure))
		case sp.Failure != "":
			p.Event(true, "SavepointFailed", fmt.Sprintf("%s savepoint of job %s: %s", e.Purpose, e.JobID, sp.Failure))
		}
	}
}

// followedByHandler tells whether the phase's handler follows a Pending savepoint itself: the
// phase table says which purposes each phase follows (phaseSpec.Follows), and only an entry asked
// for in the current visit of the phase is the handler's; one left from an earlier visit is settled.
func (p *Pass) followedByHandler(phase fsm.Phase, e *v1beta1.StateEntry) bool {
	return purposeIn(e.Purpose, p.Kind.Follows(phase)) && p.askedThisVisit(e)
}

// TrimLedger keeps the ledger within its bounds (savepointRetention, v1beta1.MaxLedger) and disposes
// of the savepoints it lets go when the user asked for that. It never lets go of a Pending entry, the
// newest state of a recorded job, or a state a record or the next job starts from.
func (p *Pass) TrimLedger() {
	st := p.Job
	keep := v1beta1.MaxSavepoints
	ret := p.Settings.SavepointRetention
	if ret != nil && ret.Keep > 0 && int(ret.Keep) < keep {
		keep = int(ret.Keep)
	}
	var keepJobs []string
	protected := map[string]bool{st.Deployments.NextRestorePath: true, st.JobStatus.RestorePath: true, st.FinalSavepointPath: true}
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(st), jobstate.Candidate(st)} {
		if r != nil {
			keepJobs = append(keepJobs, r.JobID)
			protected[r.RestorePath] = true
		}
	}
	gone := p.Ledger().Trim(keep, keepJobs, func(path string) bool { return protected[path] })
	if ret != nil && ret.DisposeOlder {
		// A savepoint shown by a FlinkSnapshot goes when retention deletes that object, which
		// disposes of it (package snapshots, retention.go); the ledger only forgets it.
		p.disposeSavepoints(slices.DeleteFunc(gone, func(e v1beta1.StateEntry) bool { return e.Snapshot != "" }))
	}
}

// disposeSavepoints deletes savepoints the ledger let go through Flink. A disposal that fails
// leaves files behind, which is no reason to hold the job: an Event says so.
func (p *Pass) disposeSavepoints(gone []v1beta1.StateEntry) {
	hash := jobstate.LiveCluster(p.Job)
	if hash == "" || len(gone) == 0 {
		return
	}
	g, err := p.Guardian(true)
	if err != nil {
		p.Event(true, "SavepointNotDisposed", fmt.Sprintf("%d savepoints stay: %v", len(gone), err))
		return
	}
	for _, e := range gone {
		if !p.MayDispose(g, e.Path, "") {
			continue
		}
		if err := p.Flink().Flink().DisposeSavepoint(p, p.Flink().URL(hash), e.Path); err != nil {
			p.Event(true, "SavepointNotDisposed", fmt.Sprintf("savepoint %s stays: %v", e.Path, err))
			continue
		}
		p.Event(false, "SavepointDisposed", fmt.Sprintf("disposed of savepoint %s (savepointRetention)", e.Path))
	}
}

// MayDispose asks the guardian whether the state at path (or the FlinkSnapshot named snapshot) may
// go, and says with an Event why not when it may not.
func (p *Pass) MayDispose(g *guardian.Namespace, path, snapshot string) bool {
	v := g.MayDelete(guardian.State{Path: path, Snapshot: snapshot})
	if !v.MayGo() {
		p.Event(false, "StateKept", v.String())
	}
	return v.MayGo()
}

// RequestedFormat is the format the FlinkSnapshot that asked for the entry's savepoint names, as
// Flink spells it; "" when no FlinkSnapshot asked or it names none, and the job's format applies.
func (p *Pass) RequestedFormat(e *v1beta1.StateEntry) string {
	if e.Snapshot == "" {
		return ""
	}
	for _, s := range p.Snapshots {
		if s.Name == e.Snapshot && s.Annotations[snapshots.LedgerEntryAnnotation] == "" {
			return jobstate.FormatName(s.Spec.FormatType)
		}
	}
	return ""
}

// WaitOutcome is the handler's outcome for a job operation that is not done.
func WaitOutcome(w jobs.Wait) fsm.Outcome {
	switch {
	case w.Persist:
		return fsm.PersistThenContinue()
	case w.Err != nil:
		return fsm.Failed(w.Err)
	}
	return fsm.Stay(w.After)
}
