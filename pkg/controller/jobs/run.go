package jobs

import (
	"fmt"
	"strings"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Job is the write-ahead record of one job being started: the cluster it runs on, the id it is
// submitted with, and when a submission went out without a plain answer. Operations change it;
// the caller stores it back and persists it when a step says so.
type Job struct {
	Cluster string
	ID      string
	// Application is the Flink application (2.3+) the job runs in when it is not the job's own id
	// (Ref.Application).
	Application string
	// SubmittedAt is when the job was last sent without a plain answer (none, or "already
	// submitted"); zero once Flink answered, or before the first submission.
	SubmittedAt time.Time
}

// Submission is what a job is submitted with.
type Submission struct {
	// JarID is the jar on the JobManager that runs the job: the image's jar, or an uploaded one.
	JarID      string
	EntryClass string
	// Args are the program's arguments, one per item, sent as programArgsList: Flink 2.x has no
	// programArgs string, and refuses a request that names it.
	Args                  []string
	Parallelism           int32
	AllowNonRestoredState bool
	// FlinkConfig is the job's own Flink configuration, over its cluster's.
	FlinkConfig map[string]string
	// RestorePath is the state the job starts from; "" starts it without state.
	RestorePath string
	// Uploaded is set when JarID is a jar the operator uploaded, which a JobManager can lose.
	Uploaded bool
}

// RunLimits bound how long a start is waited for.
type RunLimits struct {
	// SubmitGracePeriod is how long a job submitted without an answer may take to be listed before
	// it is sent again, under the same id.
	SubmitGracePeriod time.Duration
	// Stabilization is how long a job runs with all its tasks before it counts as started: a job
	// that fails on its first records fails within seconds.
	Stabilization time.Duration
}

// RunStep is where a job being started stands after a pass.
type RunStep struct {
	// Running is true once the job is RUNNING with every task running for the stabilization period.
	Running bool
	// Failure is set when the job cannot start: Flink refused it, or it failed after submission.
	Failure string
	// Wait is non-nil while the start goes on.
	Wait *Wait
	// JarMissing is set when the JobManager no longer has the uploaded jar the job was to run from.
	JarMissing bool
	// State is the state of a live job as its JobManager reported it this pass; "" otherwise.
	State string
	// Chosen is set when this step chose the job's id, before anything was sent.
	Chosen bool
}

// Run starts a job and follows it until all its tasks run stable. The job id is chosen and
// persisted before submission and sent to Flink as the job id: after a crash the operator finds the
// job it submitted, and Flink itself refuses a second job with the same id. Nothing is submitted
// while the job's state is unknown, nor beside a live job this owner does not know of (the fence),
// nor once the pass is overdue.
func (p *Pass) Run(o Owner, job *Job, s Submission, limits RunLimits) RunStep {
	if job.ID == "" {
		job.ID, job.SubmittedAt, job.Application = o.NewJobID(), time.Time{}, ""
		return RunStep{Wait: persist(), Chosen: true}
	}
	v := p.View(job.Cluster, job.ID)
	switch {
	case v.Rerun != "":
		// Flink runs the job's application again under another id: that job is the one started.
		p.announce(false, "JobRerun", fmt.Sprintf("Flink runs job %s's application again as job %s; following it", job.ID, v.Rerun))
		job.ID, job.SubmittedAt, job.Application = v.Rerun, time.Time{}, ApplicationOf(v.Ref)
		return RunStep{Wait: persist()}
	case v.Liveness == Alive:
		return p.follow(v, limits)
	case v.Details != nil:
		return RunStep{Failure: fmt.Sprintf("job %s is %s: %s", v.Ref.ID, v.State(), p.FailureCause(v.Ref))}
	case v.Liveness == Unknown, p.jobManagerGone(job.Cluster):
		return RunStep{Wait: later(0)}
	}
	// The JobManager answers that it does not know the job: not submitted yet, lost with a
	// JobManager process, or submitted without an answer and not registered yet.
	if !job.SubmittedAt.IsZero() && p.Now.Sub(job.SubmittedAt) < limits.SubmitGracePeriod {
		return RunStep{Wait: later(0)}
	}
	if wait := p.fence(o, job); wait != nil {
		return RunStep{Wait: wait}
	}
	if p.Overdue {
		return RunStep{Wait: later(0)}
	}
	return p.submit(job, v.Ref, s)
}

// follow waits until a job that is alive runs stable.
func (p *Pass) follow(v *View, limits RunLimits) RunStep {
	job := v.Details
	switch {
	case job.State == client.JobRunning && AllTasksRunning(job):
		if wait := limits.Stabilization - RunningFor(job, p.Now); wait > 0 {
			return RunStep{State: job.State, Wait: later(wait)}
		}
		return RunStep{State: job.State, Running: true}
	case job.State == client.JobFailing:
		return RunStep{State: job.State, Failure: fmt.Sprintf("job %s is %s: %s", v.Ref.ID, job.State, p.FailureCause(v.Ref))}
	}
	return RunStep{State: job.State, Wait: later(0)}
}

// fence looks at every job on the cluster before a submission. A job alive there that this owner
// started is adopted instead of starting another; one left by an earlier object of the same name
// is named and never adopted; on a cluster of the owner's own, any other live job blocks the
// submission. A cluster that cannot list its jobs blocks it too: what runs there is unknown. On
// Flink 2.3 and later the owner's applications come first (fenceApplications): the live job of
// one that runs is the owner's, whatever its id.
func (p *Pass) fence(o Owner, job *Job) *Wait {
	if wait := p.fenceApplications(o, job); wait != nil {
		return wait
	}
	jobs, err := p.Jobs(job.Cluster)
	if err != nil {
		return retry(Retryable("ListJobs", err))
	}
	for _, j := range jobs {
		if client.IsGloballyTerminal(j.Status) || j.ID == job.ID || contains(o.Beside, j.ID) {
			continue
		}
		if o.Started(j.ID) {
			p.announce(false, "JobAdopted", fmt.Sprintf("job %s of this object is %s on its cluster; following it instead of submitting another", j.ID, j.Status))
			job.ID, job.SubmittedAt = j.ID, time.Time{}
			return persist()
		}
		if o.Predecessor(j.ID) {
			p.announce(true, "PredecessorJobFound", fmt.Sprintf("job %s (%s) was started by an earlier object named like this one and is not adopted; "+
				"cancel it in Flink if it should not run", j.ID, j.Status))
		}
		if o.SharedCluster {
			// Another owner's: a session cluster runs many.
			continue
		}
		return retry(Retryable("SubmitJob", fmt.Errorf("the cluster runs job %s (%s), which this object did not start; "+
			"not submitting beside it", j.ID, j.Status)))
	}
	return nil
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// submit sends the job. Only an answered refusal is a failure: a submission that got no answer
// may still start the job, so it is waited for (SubmittedAt) and then sent again with the same id,
// which Flink refuses to run twice; that refusal means the job was submitted. An answered
// submission records nothing: Flink answers once the dispatcher holds the job, so the next look
// finds it, and a JobManager that lost it since has lost it for good.
func (p *Pass) submit(job *Job, ref Ref, s Submission) RunStep {
	_, err := p.flink.SubmitJob(p.ctx, ref.URL, s.JarID, client.SubmitJobRequest{
		EntryClass: s.EntryClass, ProgramArgsList: s.Args, Parallelism: s.Parallelism, JobID: ref.ID,
		AllowNonRestoredState: s.AllowNonRestoredState, SavepointPath: s.RestorePath, FlinkConfiguration: s.FlinkConfig,
		FlinkVersion: ref.FlinkVersion,
	})
	p.Forget()
	switch {
	case err == nil:
		p.announce(false, "JobSubmitted", fmt.Sprintf("submitted job %s (%s, parallelism %d) %s", ref.ID, s.JarID, s.Parallelism, RestoredFrom(s.RestorePath)))
		return RunStep{Wait: later(0)}
	case client.IsDuplicateSubmission(err):
		job.SubmittedAt = p.Now
		return RunStep{Wait: later(0)}
	case client.IsNoAnswer(err):
		job.SubmittedAt = p.Now
		p.announce(true, "SubmissionUnanswered", fmt.Sprintf("submission of job %s got no answer (%v); waiting for it to show up before sending it again", ref.ID, err))
		return RunStep{Wait: later(0)}
	case s.Uploaded && client.IsJarNotFound(err):
		// The JobManager lost the uploaded jar (it restarted); it must be uploaded again.
		return RunStep{JarMissing: true}
	case client.IsRetryable(err):
		// Flink answered that it could not take the job now; the same id is sent again after a backoff.
		return RunStep{Wait: retry(err)}
	}
	return RunStep{Failure: fmt.Sprintf("Flink refused job submission: %v", err)}
}

// RestoredFrom says in words what a job starts from.
func RestoredFrom(path string) string {
	if path == "" {
		return "without state"
	}
	return "restored from " + path
}

// RunningFor is how long the job has been RUNNING with its tasks deployed: since it last entered
// RUNNING, or since its last vertex was deployed if that came later. A job waiting for slots is
// RUNNING long before its tasks run, and that wait proves nothing about its stability.
func RunningFor(job *client.JobDetails, now time.Time) time.Duration {
	since := job.Timestamps.Running
	if since <= 0 {
		since = job.StartTime
	}
	for _, v := range job.Vertices {
		if v.StartTime > since {
			since = v.StartTime
		}
	}
	if since <= 0 {
		return 0
	}
	return now.Sub(time.UnixMilli(since))
}

// AllTasksRunning is Flink's RUNNING made strict: the job is RUNNING as soon as scheduling starts,
// even with no slots, so a job counts as running only when every task of every vertex runs.
func AllTasksRunning(job *client.JobDetails) bool {
	if job == nil || len(job.Vertices) == 0 {
		return false
	}
	for _, v := range job.Vertices {
		if v.Status != client.JobRunning && v.Status != client.JobFinished {
			return false
		}
		if v.Tasks.Running+v.Tasks.Finished < int(v.Parallelism) {
			return false
		}
	}
	return true
}

// FailureCause is the first line of the job's root exception, for reasons users read.
func (p *Pass) FailureCause(ref Ref) string {
	ex, err := p.flink.GetJobExceptions(p.ctx, ref.URL, ref.ID)
	if err != nil || ex == nil {
		return "no exception reported"
	}
	cause := ex.RootException
	if cause == "" && len(ex.ExceptionHistory.Entries) > 0 {
		// Flink 2.x has no root exception: the newest entry of the history is the same failure, and
		// its stack trace starts with the exception's class and message, as the root exception does.
		e := ex.ExceptionHistory.Entries[0]
		cause = e.Stacktrace
		if cause == "" {
			cause = e.ExceptionName
		}
	}
	if cause == "" {
		return "no exception reported"
	}
	return firstLines(cause)
}

// firstLines keeps the exception line and its deepest "Caused by", which is where Flink says what
// went wrong. It scans the trace in place: an exception of megabytes of short lines, which a tenant's
// JobManager may send, is not split into a slice of them.
func firstLines(trace string) string {
	first, rest, _ := strings.Cut(trace, "\n")
	out := strings.TrimSpace(first)
	deepest := ""
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "Caused by:") {
			deepest = l
		}
	}
	if deepest != "" {
		out += " (" + deepest + ")"
	}
	return client.Excerpt(out)
}
