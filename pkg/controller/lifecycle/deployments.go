package lifecycle

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta1 "github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// What every kind's handlers record of its deployments as their jobs start, run and end.

// Promote makes the candidate the stable deployment: its job ran stable on its cluster.
func (p *Pass) Promote(restorePath string) {
	st := p.Job
	c := jobstate.Candidate(st)
	t := metav1.NewTime(p.Now)
	c.Kind, c.RestorePath, c.StableTime, c.SubmittedAt, c.SlotsGrantedAt = "", restorePath, &t, nil, nil
	st.Deployments.Stable, st.Deployments.Candidate = c, nil
}

// KeepAsSessionJobsJob makes the candidate's job the session job's recorded job, on its cluster, as
// it started: a session job's stable deployment is only the job that runs.
func KeepAsSessionJobsJob(st *v1beta1.JobOwnerStatus) {
	kept := *jobstate.Candidate(st)
	kept.Kind, kept.RestorePath, kept.StableTime, kept.SlotsGrantedAt = "", jobstate.CandidateStart(st), nil, nil
	st.Deployments.Stable = &kept
}

// FollowRerun makes the job Flink runs in the live job's application instead of it (Flink 2.3+:
// the application run again under another job id after a JobManager failover, jobs.View.Rerun)
// the deployment's job. The record names it before anything acts on it; from then on it is
// watched, snapshotted and stopped as the job the operator submitted would be, and no job is ever
// submitted beside it.
func (p *Pass) FollowRerun(v *jobs.View) fsm.Outcome {
	s := jobstate.Stable(p.Job)
	if s == nil || s.JobID != v.Ref.ID {
		return fsm.Stay(0)
	}
	p.Event(false, "JobRerun", fmt.Sprintf("Flink runs job %s's application again as job %s; following it", v.Ref.ID, v.Rerun))
	s.JobID, s.ApplicationID, s.SubmittedAt = v.Rerun, jobs.ApplicationOf(v.Ref), nil
	return fsm.PersistThenContinue()
}

// AttemptCheckpoint is the newest completed checkpoint Flink reports for exactly this job, on
// cluster, now that it ended. It is recorded in the ledger with when Flink took it: the job
// restarted from it may be replaced in turn, and what replaces it is ordered against it by that
// time. gone says that Flink discarded the job's checkpoints as it ended (its retention policy, or
// its word that the newest is discarded): none the operator recorded of it is left either
// (attack review s6: a rollback restored a discarded checkpoint and ended with no job).
func (p *Pass) AttemptCheckpoint(v *jobs.View, cluster string) (path string, gone bool) {
	if v.Details == nil {
		return "", false
	}
	p.Flink().Forget()
	cp, err := p.Flink().Checkpoints(v.Ref)
	if err == nil && cp.Latest.Completed != nil && cp.Latest.Completed.Discarded {
		return "", true
	}
	if (err != nil || !client.IsGloballyTerminal(v.Details.State)) && p.discardedAtItsEnd(v) {
		// Flink has not told (yet): the job is still failing or cancelling, or its statistics
		// did not answer. The policy the job runs with says what its end will leave.
		return "", true
	}
	if err != nil || cp.Latest.Completed == nil || !jobs.Restorable(cp.Latest.Completed.ExternalPath) {
		return "", false
	}
	l := cp.Latest.Completed
	p.Ledger().Record(v1beta1.StateCheckpoint, v.Ref.ID, cluster, l.ExternalPath, jobstate.TakenByFlink(p.Now, l.TriggerTimestamp))
	return l.ExternalPath, false
}

// discardedAtItsEnd tells whether the retention policy the job was started with discards its
// checkpoints at the end it reached or is on its way to. Flink's own word, once the job ended and
// its statistics answer, comes first: the operator's record of the policy may be older than what
// the job runs with (explorer seeds 11000339, 11000401).
func (p *Pass) discardedAtItsEnd(v *jobs.View) bool {
	return v.Details != nil && jobstate.Ending(v.Details.State) && p.DiscardsAt(v.Ref.ID, v.Details.State)
}

// WaitOn notes what a waiting phase waits on: status.reason says it (written only when it
// changes, with no Event per pass), and it is the cause given if the phase's deadline passes.
func (p *Pass) WaitOn(problem string) {
	if problem == "" {
		return
	}
	p.WaitingOn = problem
	p.Machine.Reason = "waiting: " + problem
}

// RedeployFromNamedSavepoint makes the job about to be submitted start from the savepoint the user
// named, once per savepointRedeployNonce. The nonce is in the spec's hash, so changing it is an
// update like any other: a running job was stopped per its upgradeMode first, and the state that
// stop left stays in the ledger. Here, before the new job has an id, its start is switched to the
// named savepoint, which the ledger records, and the nonce is marked done, in the pass that submits
// the job: the submission carries the named savepoint, and should the pass's status write be lost,
// the next pass does the same again and finds the job it submitted. A candidate of another spec
// (one submitted before the nonce changed) is left alone: its job did not start from the named
// savepoint, and the update the new nonce asks for follows it.
//
// A redeploy from a FlinkSnapshot that has no path yet waits: the job is not submitted, from
// another state or none, until it has one.
func (p *Pass) RedeployFromNamedSavepoint(c *v1beta1.DeploymentRecord) (wait *fsm.Outcome) {
	s := p.Settings
	if s == nil || s.RedeployNonce == "" || s.RedeployNonce == p.Job.SavepointRedeployNonce || c == nil || c.SpecHash != p.Hash {
		return nil
	}
	if s.RestoreWaiting != "" {
		p.WaitOn(s.RestoreWaiting)
		out := fsm.Stay(0)
		return &out
	}
	if s.RedeployFrom == "" {
		return nil
	}
	p.Job.Deployments.NextRestorePath = s.RedeployFrom
	p.Job.SavepointRedeployNonce = s.RedeployNonce
	p.Ledger().RecordRedeploy(s.RedeployFrom, p.Now)
	p.Event(false, "RedeployFromSavepoint", fmt.Sprintf("%s changed: the new job starts from %s, as %s names",
		s.Field("savepointRedeployNonce"), s.RedeployFrom, namedBy(s)))
	return nil
}

// namedBy is the spec field that named the state a redeploy starts from.
func namedBy(s *jobstate.Settings) string {
	if s.RestoreSnapshot != "" {
		return s.Field("restoreSnapshot") + " " + s.RestoreSnapshot
	}
	return s.Field("savepointPath")
}
