package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// jobParams are what a job is submitted with (jobstate.JobParams).
type jobParams = jobstate.JobParams

func specJobParams(app *v1beta1.FlinkApplication) jobParams {
	s := app.Spec
	return jobParams{JarName: s.JarName, EntryClass: s.EntryClass, ProgramArgs: s.ProgramArgs, Args: s.ProgramArgsList, Parallelism: s.Parallelism,
		AllowNonRestoredState: s.AllowNonRestoredState}
}

// jobStep is where a job being started stands after a pass.
type jobStep struct {
	// Running is true once the job is RUNNING with every task running.
	Running bool
	// Failure is set when the job cannot start: Flink refused it, or it failed after submission.
	Failure string
	// Wait is non-nil while the caller must return it.
	Wait *Outcome
	// JarMissing is set when the JobManager no longer has the uploaded jar the job was to run from.
	JarMissing bool
}

// runJob starts the job of a deployment record (jobstate.Start.Run) and follows it until all its
// tasks run, once what only the kind knows allows it: an application's other clusters are gone, a
// session job lost with its JobManager goes on from what it completed.
func runJob(rc *Context, rec *v1beta1.DeploymentRecord, p jobParams, restorePath string) jobStep {
	if rc.App != nil && rc.Flink().View(rec.ClusterHash, rec.JobID).Liveness != jobs.Alive {
		// Before a submission: an application's clusters are its own, and no job of it may run on
		// another while this one starts.
		if wait, gone := leftoverClustersGone(rc, rec.ClusterHash); !gone {
			return jobStep{Wait: &wait}
		}
	}
	if isSessionJob(rc) && rec.JobID != "" && jobUnknownToFlink(rc.Flink().View(rec.ClusterHash, rec.JobID)) {
		// The job ran (its checkpoints recorded) and its JobManager no longer knows it (lost with a
		// JobManager process without HA): submitted again under its id, it goes on from what it
		// completed, newer than what it started from. The restore is persisted before the submission.
		// A job Flink still reports (FAILED, say) ended through Flink, which may have discarded its
		// checkpoints: the phase that saw it end chose what to restore (attack review s6).
		if newest := rc.JobState().NewestStatePath(rec.JobID); newest != "" && newest != restorePath {
			rc.Job.Deployments.NextRestorePath = newest
			o := persistThenContinue()
			return jobStep{Wait: &o}
		}
	}
	step, gone := rc.start().Run(rec, p, restorePath)
	if gone {
		return jobStep{Failure: step.Failure + "; " + restoreByHand(rc)}
	}
	out := jobStep{Running: step.Running, Failure: step.Failure, JarMissing: step.JarMissing}
	if step.Wait != nil {
		o := lifecycle.WaitOutcome(*step.Wait)
		out.Wait = &o
	}
	return out
}

// start is how this pass starts a job.
func (rc *Context) start() jobstate.Start {
	return jobstate.Start{Job: rc.JobState(), Flink: rc.Flink(), Owner: rc.owner(), Now: rc.Now, Beside: besideLive(rc),
		Limits: jobs.RunLimits{SubmitGracePeriod: rc.Config.SubmitGracePeriod.Duration, Stabilization: rc.Config.JobStabilizationPeriod.Duration}}
}

// owner describes the pass's object to the job core: its job ids carry its name (kind included for
// the session kinds, as ids were made before uids were read) and its uid; a session cluster runs
// other objects' jobs; a BlueGreen version starts beside the deployed version's job.
func (rc *Context) owner() jobs.Owner {
	o := jobstate.OwnerOf(rc.kind.name, rc.Meta)
	o.SharedCluster = rc.kind != nil && rc.kind.sharedCluster
	if _, live := jobstate.LiveJob(rc.Job); live != "" && besideLive(rc) {
		o.Beside = []string{live}
	}
	return o
}

// chooseJobID gives a record the id its job will be submitted with. It must be persisted before
// the submission: it is how the operator finds its job after a crash.
func chooseJobID(rc *Context, rec *v1beta1.DeploymentRecord) {
	rec.JobID, rec.ApplicationID, rec.SubmittedAt, rec.SlotsGrantedAt = rc.owner().NewJobID(), "", nil, nil
	if !besideLive(rc) {
		rc.Job.JobStatus.State = ""
	}
}

// chooseCandidateJobID is Submitting's entry for a deployment that has no job id yet (one that
// starts beside a live job): the id goes out with the transition's write, so the first pass in
// Submitting can submit without a write of its own first.
func chooseCandidateJobID(rc *Context) {
	if c := jobstate.Candidate(rc.Job); c != nil && c.JobID == "" {
		chooseJobID(rc, c)
	}
}

// chooseJobIDWhenNothingRuns is ClusterStarting's entry: with no job running, the job the new
// cluster is for gets its id with the transition's write, so that the pass that finds the cluster
// ready can submit it (jobIDStored). Beside a live job the id waits for Submitting: until then the
// application's job status is the live job's.
func chooseJobIDWhenNothingRuns(rc *Context) {
	if _, live := jobstate.LiveJob(rc.Job); live == "" {
		chooseCandidateJobID(rc)
	}
}

// jobIDStored tells whether the deployment in progress has a job id that an earlier pass wrote:
// only then may a submission go out without another write first.
func jobIDStored(rc *Context) bool {
	if rc.Stored == nil {
		return false
	}
	c, s := jobstate.Candidate(rc.Job), jobstate.Candidate(rc.StoredJob)
	return c != nil && s != nil && c.JobID != "" && c.JobID == s.JobID && c.ClusterHash == s.ClusterHash
}

// jobUnknownToFlink tells whether the job is gone without Flink having ended it: its JobManager no
// longer knows it, or is gone with it.
func jobUnknownToFlink(v *jobs.View) bool { return v.Liveness == jobs.Stopped && v.Details == nil }
