package flinkapplication

import (
	"fmt"
	"strings"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// jobParams are what a job is submitted with; status keeps those of the running job so that a
// rollback can start it again as it was.
type jobParams struct {
	JarName, EntryClass, ProgramArgs string
	Parallelism                      int32
	AllowNonRestoredState            bool
}

func specJobParams(app *v1beta1.FlinkApplication) jobParams {
	s := app.Spec
	return jobParams{s.JarName, s.EntryClass, s.ProgramArgs, s.Parallelism, s.AllowNonRestoredState}
}

func statusJobParams(st *v1beta1.FlinkApplicationStatus) jobParams {
	j := st.JobStatus
	return jobParams{j.JarName, j.EntryClass, j.ProgramArgs, j.Parallelism, j.AllowNonRestoredState}
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
}

// runJob starts a job on the cluster with this hash and follows it until all its tasks run. The job
// id is chosen and persisted before submission and sent to Flink as the job id: after a crash the
// operator finds the job it submitted, and Flink itself refuses a second job with the same id.
func runJob(rc *Context, hash string, p jobParams, restorePath string) jobStep {
	st := &rc.App.Status
	if st.JobStatus.JobID == "" || st.JobStatus.ClusterHash != hash {
		st.JobStatus.JobID, st.JobStatus.ClusterHash, st.JobStatus.State = newID(), hash, ""
		o := persistThenContinue()
		return jobStep{Wait: &o}
	}
	id := st.JobStatus.JobID
	job, err := rc.Job(hash, id)
	if client.IsNotFound(err) {
		return submit(rc, hash, id, p, restorePath)
	}
	if err != nil {
		o := failed(err)
		return jobStep{Wait: &o}
	}
	st.JobStatus.State = v1beta1.JobState(job.State)
	switch {
	case job.State == client.JobRunning && allTasksRunning(job):
		// A job that fails on its first records fails within seconds; it counts as started only
		// after running that long, while the previous cluster is still there to roll back to.
		if wait := rc.Config.JobStabilizationPeriod.Duration - runningFor(job, rc.Now); wait > 0 {
			o := stay(wait)
			return jobStep{Wait: &o}
		}
		return jobStep{Running: true}
	case client.IsGloballyTerminal(job.State) || job.State == client.JobFailing:
		return jobStep{Failure: fmt.Sprintf("job %s is %s: %s", id, job.State, failureCause(rc, hash, id))}
	default:
		o := stay(0)
		return jobStep{Wait: &o}
	}
}

func submit(rc *Context, hash, id string, p jobParams, restorePath string) jobStep {
	_, err := rc.Flink().SubmitJob(rc, rc.FlinkURL(hash), p.JarName, client.SubmitJobRequest{
		EntryClass: p.EntryClass, ProgramArgs: p.ProgramArgs, Parallelism: p.Parallelism, JobID: id,
		AllowNonRestoredState: p.AllowNonRestoredState, SavepointPath: restorePath,
	})
	rc.forget()
	if err != nil {
		// A submission that failed on our side may still have reached Flink; if the job exists, it is ours.
		if alive, _ := jobIsAlive(rc, hash, id); alive {
			o := stay(0)
			return jobStep{Wait: &o}
		}
		if !isRetryable(err) {
			return jobStep{Failure: fmt.Sprintf("Flink refused job submission: %v", err)}
		}
		o := failed(err)
		return jobStep{Wait: &o}
	}
	from := "without state"
	if restorePath != "" {
		from = "from " + restorePath
	}
	rc.event(false, "JobSubmitted", fmt.Sprintf("submitted job %s (%s, parallelism %d) %s", id, p.JarName, p.Parallelism, from))
	o := stay(0)
	return jobStep{Wait: &o}
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
func failureCause(rc *Context, hash, jobID string) string {
	ex, err := rc.Flink().GetJobExceptions(rc, rc.FlinkURL(hash), jobID)
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
	if len(out) > 400 {
		out = out[:400] + "..."
	}
	return out
}
