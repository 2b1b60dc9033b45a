package flinkapplication

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// jobParams are what a job is submitted with; status keeps those of the running job so that a
// rollback can start it again as it was.
type jobParams struct {
	JarName, EntryClass, ProgramArgs string
	Parallelism                      int32
	AllowNonRestoredState            bool
	// Args and FlinkConfig are a session job's program arguments, one per item, and its own Flink
	// configuration; a FlinkApplication's arguments are ProgramArgs.
	Args        []string
	FlinkConfig map[string]string
	// Uploaded is set when JarName is a jar the operator uploaded, which a JobManager can lose.
	Uploaded bool
}

func specJobParams(app *v1beta1.FlinkApplication) jobParams {
	s := app.Spec
	return jobParams{JarName: s.JarName, EntryClass: s.EntryClass, ProgramArgs: s.ProgramArgs, Parallelism: s.Parallelism,
		AllowNonRestoredState: s.AllowNonRestoredState}
}

func statusJobParams(st *v1beta1.FlinkApplicationStatus) jobParams {
	j := st.JobStatus
	return jobParams{JarName: j.JarName, EntryClass: j.EntryClass, ProgramArgs: j.ProgramArgs, Parallelism: j.Parallelism,
		AllowNonRestoredState: j.AllowNonRestoredState}
}

func (p jobParams) recordIn(st *v1beta1.FlinkApplicationStatus) {
	j := &st.JobStatus
	j.JarName, j.EntryClass, j.ProgramArgs, j.Parallelism, j.AllowNonRestoredState =
		p.JarName, p.EntryClass, p.ProgramArgs, p.Parallelism, p.AllowNonRestoredState
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

// runJob starts a job on the cluster with this hash and follows it until all its tasks run. The job
// id is chosen and persisted before submission and sent to Flink as the job id: after a crash the
// operator finds the job it submitted, and Flink itself refuses a second job with the same id.
// Nothing is submitted while the job's state is unknown, and never beside a job that is alive
// (the fence).
func runJob(rc *Context, rec *v1beta1.DeploymentRecord, p jobParams, restorePath string) jobStep {
	hash := rec.ClusterHash
	if rec.JobID == "" {
		chooseJobID(rc, rec)
		return waitJob(persistThenContinue())
	}
	v := rc.JobView(hash, rec.JobID)
	switch {
	case v.Liveness == Alive:
		return followJob(rc, v)
	case v.Details != nil:
		return jobStep{Failure: fmt.Sprintf("job %s is %s: %s", v.Ref.ID, v.State(), failureCause(rc, v.Ref))}
	case v.Liveness == Unknown, jobManagerGone(rc.Clusters[hash]):
		return waitJob(stay(0))
	}
	// The JobManager answers that it does not know the job: not submitted yet, lost with a
	// JobManager process, or submitted without an answer and not registered yet.
	if rec.SubmittedAt != nil && rc.Now.Sub(rec.SubmittedAt.Time) < rc.Config.SubmitGracePeriod.Duration {
		return waitJob(stay(0))
	}
	if out, fenced := fence(rc, rec); fenced {
		return out
	}
	if rc.Overdue {
		return waitJob(stay(0))
	}
	return submit(rc, rec, v.Ref, p, restorePath)
}

func waitJob(o Outcome) jobStep { return jobStep{Wait: &o} }

// chooseJobID gives a record the id its job will be submitted with. It must be persisted before
// the submission: it is how the operator finds its job after a crash.
func chooseJobID(rc *Context, rec *v1beta1.DeploymentRecord) {
	rec.JobID, rec.SubmittedAt = newJobID(rc.App), nil
	if !besideLive(rc) {
		rc.App.Status.JobStatus.State = ""
	}
}

// chooseCandidateJobID is Submitting's entry for a deployment that has no job id yet (one that
// starts beside a live job): the id goes out with the transition's write, so the first pass in
// Submitting can submit without a write of its own first.
func chooseCandidateJobID(rc *Context) {
	if c := candidate(&rc.App.Status); c != nil && c.JobID == "" {
		chooseJobID(rc, c)
	}
}

// chooseJobIDWhenNothingRuns is ClusterStarting's entry: with no job running, the job the new
// cluster is for gets its id with the transition's write, so that the pass that finds the cluster
// ready can submit it (jobIDStored). Beside a live job the id waits for Submitting: until then the
// application's job status is the live job's.
func chooseJobIDWhenNothingRuns(rc *Context) {
	if _, live := liveJob(&rc.App.Status); live == "" {
		chooseCandidateJobID(rc)
	}
}

// jobIDStored tells whether the deployment in progress has a job id that an earlier pass wrote:
// only then may a submission go out without another write first.
func jobIDStored(rc *Context) bool {
	if rc.Stored == nil {
		return false
	}
	c, s := candidate(&rc.App.Status), candidate(&rc.Stored.Status)
	return c != nil && s != nil && c.JobID != "" && c.JobID == s.JobID && c.ClusterHash == s.ClusterHash
}

// followJob waits until a job that is alive runs stable.
func followJob(rc *Context, v *JobView) jobStep {
	job := v.Details
	if !besideLive(rc) {
		// The top-level job status is the job being started, unless a BlueGreen version starts
		// beside the deployed one, whose job it keeps showing.
		rc.App.Status.JobStatus.State = v1beta1.JobState(job.State)
	}
	switch {
	case job.State == client.JobRunning && allTasksRunning(job):
		// A job that fails on its first records fails within seconds; it counts as started only
		// after running that long, while the previous cluster is still there to roll back to.
		if wait := rc.Config.JobStabilizationPeriod.Duration - runningFor(job, rc.Now); wait > 0 {
			return waitJob(stay(wait))
		}
		return jobStep{Running: true}
	case job.State == client.JobFailing:
		return jobStep{Failure: fmt.Sprintf("job %s is %s: %s", v.Ref.ID, job.State, failureCause(rc, v.Ref))}
	}
	return waitJob(stay(0))
}

// fence looks at every job on the cluster before a submission. A job alive there that this
// application started (its id carries the application's prefix) is adopted instead of starting
// another; any other job alive there blocks the submission. A cluster that cannot list its jobs
// blocks it too: what runs there is unknown.
func fence(rc *Context, rec *v1beta1.DeploymentRecord) (jobStep, bool) {
	hash := rec.ClusterHash
	jobs, err := rc.Jobs(hash)
	if err != nil {
		return waitJob(failed(retryable("ListJobs", err))), true
	}
	for _, j := range jobs {
		if client.IsGloballyTerminal(j.Status) || j.ID == rec.JobID {
			continue
		}
		if startedByApp(rc.App, j.ID) {
			rc.event(false, "JobAdopted", fmt.Sprintf("job %s of this %s is %s on %s; following it instead of submitting another",
				j.ID, kindName(rc.App), j.Status, flink.VersionedServiceName(rc.clusterOwner(), hash)))
			rec.JobID, rec.SubmittedAt = j.ID, nil
			return waitJob(persistThenContinue()), true
		}
		if rc.kind.sharedCluster {
			// Another session job's: a session cluster runs many.
			continue
		}
		return waitJob(failed(retryable("SubmitJob", fmt.Errorf("cluster %s runs job %s (%s), which this application did not start; "+
			"not submitting beside it", flink.VersionedServiceName(rc.App, hash), j.ID, j.Status)))), true
	}
	return jobStep{}, false
}

// submit sends the job. Only an answered refusal is a failure: a submission that got no answer
// may still start the job, so it is waited for (SubmittedAt) and then sent again with the same id,
// which Flink refuses to run twice; that refusal means the job was submitted. An answered
// submission records nothing: Flink answers once the dispatcher holds the job, so the next look
// finds it, and a JobManager that lost it since has lost it for good.
func submit(rc *Context, rec *v1beta1.DeploymentRecord, ref JobRef, p jobParams, restorePath string) jobStep {
	_, err := rc.Flink().SubmitJob(rc, ref.URL, p.JarName, client.SubmitJobRequest{
		EntryClass: p.EntryClass, ProgramArgs: p.ProgramArgs, ProgramArgsList: p.Args, Parallelism: p.Parallelism, JobID: ref.ID,
		AllowNonRestoredState: p.AllowNonRestoredState, SavepointPath: restorePath, FlinkConfiguration: p.FlinkConfig,
	})
	rc.forget()
	t := metav1.NewTime(rc.Now)
	switch {
	case err == nil:
		rc.event(false, "JobSubmitted", fmt.Sprintf("submitted job %s (%s, parallelism %d) %s", ref.ID, p.JarName, p.Parallelism, restoredFrom(restorePath)))
		return waitJob(stay(0))
	case client.IsDuplicateSubmission(err):
		rec.SubmittedAt = &t
		return waitJob(stay(0))
	case client.IsNoAnswer(err):
		rec.SubmittedAt = &t
		rc.event(true, "SubmissionUnanswered", fmt.Sprintf("submission of job %s got no answer (%v); waiting for it to show up before sending it again", ref.ID, err))
		return waitJob(stay(0))
	case p.Uploaded && client.IsJarNotFound(err):
		// The session cluster's JobManager lost the uploaded jar (it restarted); upload it again.
		return jobStep{JarMissing: true}
	case client.IsRetryable(err):
		// Flink answered that it could not take the job now; the same id is sent again after a backoff.
		return waitJob(failed(err))
	}
	return jobStep{Failure: fmt.Sprintf("Flink refused job submission: %v", err)}
}

// runningFor is how long the job has been RUNNING with its tasks deployed: since it last entered
// RUNNING, or since its last vertex was deployed if that came later. A job waiting for slots is
// RUNNING long before its tasks run, and that wait proves nothing about its stability.
func runningFor(job *client.JobDetails, now time.Time) time.Duration {
	since := job.Timestamps["RUNNING"]
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

// allTasksRunning is Flink's RUNNING made strict: the job is RUNNING as soon as scheduling starts,
// even with no slots, so a job counts as running only when every task of every vertex runs.
func allTasksRunning(job *client.JobDetails) bool {
	if len(job.Vertices) == 0 {
		return false
	}
	for _, v := range job.Vertices {
		if v.Status != client.JobRunning && v.Status != client.JobFinished {
			return false
		}
		if v.Tasks["RUNNING"]+v.Tasks["FINISHED"] < int(v.Parallelism) {
			return false
		}
	}
	return true
}

// failureCause is the first line of the job's root exception, for reasons users read.
func failureCause(rc *Context, ref JobRef) string {
	ex, err := rc.Flink().GetJobExceptions(rc, ref.URL, ref.ID)
	if err != nil || ex == nil {
		return "no exception reported"
	}
	cause := ex.RootException
	if cause == "" && len(ex.ExceptionHistory.Entries) > 0 {
		e := ex.ExceptionHistory.Entries[0]
		cause = e.ExceptionName + ": " + e.Stacktrace
	}
	if cause == "" {
		return "no exception reported"
	}
	return firstLines(cause)
}

// firstLines keeps the exception line and its deepest "Caused by", which is where Flink says what went wrong.
func firstLines(trace string) string {
	lines := strings.Split(trace, "\n")
	out := strings.TrimSpace(lines[0])
	for i := len(lines) - 1; i > 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "Caused by:") {
			out += " (" + l + ")"
			break
		}
	}
	return client.Excerpt(out)
}
