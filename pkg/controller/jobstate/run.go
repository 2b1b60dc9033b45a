package jobstate

import (
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// Start is what starting one of an owner's jobs reads in one pass: the owner's records, the job
// core, and how the owner names its jobs.
type Start struct {
	Job    Job
	Flink  *jobs.Pass
	Owner  jobs.Owner
	Limits jobs.RunLimits
	Now    time.Time
	// Beside says that the job starts beside the owner's live job (a BlueGreen version): the
	// top-level job status keeps showing the live one.
	Beside bool
}

// Run starts the job of a deployment record through the job core (jobs.Pass.Run) and follows it
// until all its tasks run: the record's job id is chosen and persisted before the submission, and
// nothing is submitted while the job's state is unknown or beside a job this owner did not start.
// What the step learns is recorded: the job in its record, a restore path Flink found nothing at
// in the ledger, the job's state in the job status.
//
// A restore path Flink found nothing at before starts no job again (explorer seed 11000118: a
// session job's update after the refused restore offered the same checkpoint again): the step
// fails, and stateGone says so, for the owner to say how a user names another state.
func (s Start) Run(rec *v1beta1.DeploymentRecord, p JobParams, restorePath string) (step jobs.RunStep, stateGone bool) {
	if restorePath != "" && s.Job.Ledger().IsGone(restorePath) && s.Flink.View(rec.ClusterHash, rec.JobID).Liveness != jobs.Alive {
		return jobs.RunStep{Failure: GoneState(restorePath)}, true
	}
	job := RecordJob(rec)
	args := p.Args
	if args == nil && p.ProgramArgs != "" {
		// Sent as a list, split as Flink 1.x splits the string: Flink 2.x has no programArgs.
		args = flink.ProgramArguments(p.ProgramArgs)
	}
	step = s.Flink.Run(s.Owner, &job, jobs.Submission{
		JarID: p.JarName, EntryClass: p.EntryClass, Args: args, Parallelism: p.Parallelism,
		AllowNonRestoredState: p.AllowNonRestoredState, FlinkConfig: p.FlinkConfig, RestorePath: restorePath, Uploaded: p.Uploaded,
	}, s.Limits)
	StoreJob(rec, job)
	if step.Failure != "" && restorePath != "" && SamePath(jobs.MissingState(step.Failure), restorePath) {
		s.Job.Ledger().RecordMissing(restorePath, s.Now)
	}
	if !s.Beside && (step.Chosen || step.State != "") {
		// The top-level job status is the job being started, unless a BlueGreen version starts
		// beside the deployed one, whose job it keeps showing.
		s.Job.Status.JobStatus.State = v1beta1.JobState(step.State)
	}
	return step, false
}
