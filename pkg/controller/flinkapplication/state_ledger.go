package flinkapplication

import (
	"fmt"
	"slices"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// The object's state ledger (status.ledger, package ledger) as handlers use it: every savepoint is
// an entry asked for (and persisted) before it is triggered, followed through the job core, and
// settled with its result; nothing else holds a savepoint trigger.

func (rc *Context) ledger() ledger.Ledger { return ledger.Of(&rc.Job.Ledger) }

// savepointStep is where one savepoint stands after a pass.
type savepointStep struct {
	// Location is set once the savepoint completed.
	Location string
	// Failure is set when the savepoint failed or can no longer be had; its entry is Failed.
	Failure string
	// Unknowable is set with Failure when it is not Flink's word: Flink lost the job before saying
	// how the savepoint ended, and its entry stays in doubt (ledger.Unknowable).
	Unknowable bool
	// Wait is non-nil while the caller must return it: the savepoint is in progress, or a call failed.
	Wait *Outcome
}

// followSavepoint drives the savepoint of a ledger entry through the job core and records how it
// ended in the entry (jobstate.FollowSavepoint), in the format the entry asks for.
func followSavepoint(rc *Context, e *v1beta1.StateEntry, ref jobs.Ref, mayTrigger bool) savepointStep {
	step := jobstate.FollowSavepoint(rc.pass(), e, ref, mayTrigger, requestedFormat(rc, e), rc.Now)
	out := savepointStep{Location: step.Location, Failure: step.Failure, Unknowable: step.Unknowable}
	if step.Wait != nil {
		o := waitOutcome(*step.Wait)
		out.Wait = &o
	}
	return out
}

// askSavepoint records a savepoint of a record's job in the ledger, to be triggered once persisted.
func askSavepoint(rc *Context, purpose v1beta1.SavepointPurpose, rec *v1beta1.DeploymentRecord, cancel bool) *v1beta1.StateEntry {
	return rc.ledger().Ask(purpose, rec.JobID, rec.ClusterHash, cancel, rc.Now)
}

// stopSavepoint is the savepoint of the stop in progress of a job: the one asked for since the
// phase began, so that one left from an earlier attempt (settled on its own) is never taken for it.
func stopSavepoint(rc *Context, jobID string, purposes ...v1beta1.SavepointPurpose) *v1beta1.StateEntry {
	if e := rc.ledger().Pending(jobID, purposes...); e != nil && askedThisVisit(rc, e) {
		return e
	}
	return nil
}

func askedThisVisit(rc *Context, e *v1beta1.StateEntry) bool {
	started := rc.Machine.PhaseStartedAt
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

// endJob ends a record's job for good (a deleted application, a torn-down BlueGreen version)
// through the job core (jobstate.Job.EndJob): the savepoint of its purpose with cancel when one is
// wanted or already asked for, then a cancel if the job is still alive.
func endJob(rc *Context, purpose v1beta1.SavepointPurpose, rec *v1beta1.DeploymentRecord, v *jobs.View, wanted bool, step string) endStep {
	end := rc.jobState().EndJob(rc.pass(), purpose, rec, v, wanted, step, rc.Overdue, rc.Now)
	out := endStep{SavepointPath: end.SavepointPath, Missing: end.Missing}
	if end.Wait != nil {
		o := waitOutcome(*end.Wait)
		out.Wait = &o
	}
	return out
}

// endStep is where ending a job for good stands after a pass.
type endStep struct {
	// Wait is non-nil while the caller must return it.
	Wait *Outcome
	// SavepointPath is the savepoint the job ended with; "" when none was asked for or had.
	SavepointPath string
	// Missing says why the savepoint asked for was not had although the job ended.
	Missing string
}

// settleSavepoints follows every Pending savepoint that the phase's handler does not follow itself:
// a manual or periodic savepoint in flight when an update, a suspend or a delete began, or a stop's
// savepoint left by an earlier attempt. Each is recorded as it ends, never dropped: while its
// JobManager does not answer it stays Pending, and once the JobManager is gone its result can no
// longer be read, which its entry says.
func settleSavepoints(rc *Context) {
	phase := rc.Subject.Phase().Normalized()
	for _, e := range rc.ledger().AllPending() {
		if followedByHandler(rc, phase, e) {
			continue
		}
		if e.JobID == "" {
			ledger.Fail(e, "no job is recorded for it, so Flink cannot be asked about it", rc.Now)
			continue
		}
		if rc.Clusters[e.ClusterHash].JobManagerGone() {
			ledger.Unknowable(e, "its JobManager is gone before its result was read", rc.Now)
			rc.event(true, "SavepointUnsettled", fmt.Sprintf("%s savepoint of job %s (trigger %s): its JobManager is gone before its result was read",
				e.Purpose, e.JobID, e.TriggerID))
			continue
		}
		v := rc.pass().View(e.ClusterHash, e.JobID)
		if v.Liveness == jobs.Unknown {
			continue
		}
		sp := followSavepoint(rc, e, v.Ref, false)
		switch {
		case sp.Location != "":
			rc.event(false, "SavepointRecorded", fmt.Sprintf("%s savepoint of job %s completed at %s", e.Purpose, e.JobID, sp.Location))
		case sp.Unknowable:
			rc.event(true, "SavepointUnsettled", fmt.Sprintf("%s savepoint of job %s: %s", e.Purpose, e.JobID, sp.Failure))
		case sp.Failure != "":
			rc.event(true, "SavepointFailed", fmt.Sprintf("%s savepoint of job %s: %s", e.Purpose, e.JobID, sp.Failure))
		}
	}
}

// followedByHandler tells whether the phase's handler follows a Pending savepoint itself: the
// phase table says which purposes each phase follows (phaseSpec.Follows), and only an entry asked
// for in the current visit of the phase is the handler's; one left from an earlier visit is settled.
func followedByHandler(rc *Context, phase Phase, e *v1beta1.StateEntry) bool {
	return purposeIn(e.Purpose, rc.phases()[phase].Follows) && askedThisVisit(rc, e)
}

// trimLedger keeps the ledger within its bounds (savepointRetention, v1beta1.MaxLedger) and disposes
// of the savepoints it lets go when the user asked for that. It never lets go of a Pending entry, the
// newest state of a recorded job, or a state a record or the next job starts from.
func trimLedger(rc *Context) {
	st := rc.Job
	keep := v1beta1.MaxSavepoints
	ret := rc.Settings.SavepointRetention
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
	gone := rc.ledger().Trim(keep, keepJobs, func(path string) bool { return protected[path] })
	if ret != nil && ret.DisposeOlder {
		// A savepoint shown by a FlinkSnapshot goes when retention deletes that object, which
		// disposes of it (package snapshots, retention.go); the ledger only forgets it.
		disposeSavepoints(rc, slices.DeleteFunc(gone, func(e v1beta1.StateEntry) bool { return e.Snapshot != "" }))
	}
}

// disposeSavepoints deletes savepoints the ledger let go through Flink. A disposal that fails
// leaves files behind, which is no reason to hold the job: an Event says so.
func disposeSavepoints(rc *Context, gone []v1beta1.StateEntry) {
	hash := jobstate.LiveCluster(rc.Job)
	if hash == "" || len(gone) == 0 {
		return
	}
	g, err := stateGuardian(rc, true)
	if err != nil {
		rc.event(true, "SavepointNotDisposed", fmt.Sprintf("%d savepoints stay: %v", len(gone), err))
		return
	}
	for _, e := range gone {
		if !mayDispose(rc, g, e.Path, "") {
			continue
		}
		if err := rc.pass().Flink().DisposeSavepoint(rc, rc.FlinkURL(hash), e.Path); err != nil {
			rc.event(true, "SavepointNotDisposed", fmt.Sprintf("savepoint %s stays: %v", e.Path, err))
			continue
		}
		rc.event(false, "SavepointDisposed", fmt.Sprintf("disposed of savepoint %s (savepointRetention)", e.Path))
	}
}
