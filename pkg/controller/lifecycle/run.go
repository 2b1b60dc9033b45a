package lifecycle

import (
	v1beta1 "github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// RunStep is where a job being started stands after a pass.
type RunStep struct {
	// Running is true once the job is RUNNING with every task running.
	Running bool
	// Failure is set when the job cannot start: Flink refused it, or it failed after submission.
	Failure string
	// Wait is non-nil while the caller must return it.
	Wait *fsm.Outcome
	// JarMissing is set when the JobManager no longer has the uploaded jar the job was to run from.
	JarMissing bool
}

// RunJob starts the job of a deployment record (jobstate.Start.Run) and follows it until all its
// tasks run, once what only the kind knows allows it (Kind.BeforeRun). A job whose state is gone
// fails, saying how the user names the state to start from (Kind.RestoreByHand).
func (p *Pass) RunJob(rec *v1beta1.DeploymentRecord, params jobstate.JobParams, restorePath string) RunStep {
	if wait, held := p.Kind.BeforeRun(rec, restorePath); held {
		return RunStep{Wait: &wait}
	}
	step, gone := p.start().Run(rec, params, restorePath)
	if gone {
		return RunStep{Failure: step.Failure + "; " + p.Kind.RestoreByHand()}
	}
	out := RunStep{Running: step.Running, Failure: step.Failure, JarMissing: step.JarMissing}
	if step.Wait != nil {
		o := WaitOutcome(*step.Wait)
		out.Wait = &o
	}
	return out
}

// start is how this pass starts a job.
func (p *Pass) start() jobstate.Start {
	return jobstate.Start{Job: p.JobState(), Flink: p.Flink(), Owner: p.Owner(), Now: p.Now, Beside: p.Kind.Beside(),
		Limits: jobs.RunLimits{SubmitGracePeriod: p.Config.SubmitGracePeriod.Duration, Stabilization: p.Config.JobStabilizationPeriod.Duration}}
}

// Owner describes the pass's object to the job core: its job ids carry its name (kind included for
// the session kinds, as ids were made before uids were read) and its uid; a session cluster runs
// other objects' jobs (SharedCluster); a BlueGreen version starts beside the deployed version's job.
func (p *Pass) Owner() jobs.Owner {
	o := jobstate.OwnerOf(p.KindName, p.Meta)
	o.SharedCluster = p.SharedCluster
	if _, live := jobstate.LiveJob(p.Job); live != "" && p.Kind.Beside() {
		o.Beside = []string{live}
	}
	return o
}

// ChooseJobID gives a record the id its job will be submitted with. It must be persisted before
// the submission: it is how the operator finds its job after a crash.
func (p *Pass) ChooseJobID(rec *v1beta1.DeploymentRecord) {
	rec.JobID, rec.ApplicationID, rec.SubmittedAt, rec.SlotsGrantedAt = p.Owner().NewJobID(), "", nil, nil
	if !p.Kind.Beside() {
		p.Job.JobStatus.State = ""
	}
}

// ChooseCandidateJobID is Submitting's entry for a deployment that has no job id yet (one that
// starts beside a live job): the id goes out with the transition's write, so the first pass in
// Submitting can submit without a write of its own first.
func (p *Pass) ChooseCandidateJobID() {
	if c := jobstate.Candidate(p.Job); c != nil && c.JobID == "" {
		p.ChooseJobID(c)
	}
}

// ChooseJobIDWhenNothingRuns is ClusterStarting's entry: with no job running, the job the new
// cluster is for gets its id with the transition's write, so that the pass that finds the cluster
// ready can submit it (JobIDStored). Beside a live job the id waits for Submitting: until then the
// object's job status is the live job's.
func (p *Pass) ChooseJobIDWhenNothingRuns() {
	if _, live := jobstate.LiveJob(p.Job); live == "" {
		p.ChooseCandidateJobID()
	}
}

// JobIDStored tells whether the deployment in progress has a job id that an earlier pass wrote:
// only then may a submission go out without another write first.
func (p *Pass) JobIDStored() bool {
	if p.Stored == nil {
		return false
	}
	c, s := jobstate.Candidate(p.Job), jobstate.Candidate(p.StoredJob)
	return c != nil && s != nil && c.JobID != "" && c.JobID == s.JobID && c.ClusterHash == s.ClusterHash
}
