package jobs

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Liveness is what the operator knows about whether a job runs. Every decision that could start a
// second job or give up state asks it, and only Stopped lets such a decision go ahead.
type Liveness int

const (
	// Unknown: nothing proves the job stopped. A REST error, a timeout, a JobManager that is not
	// ready or a leader election all mean Unknown, and Unknown waits.
	Unknown Liveness = iota
	// Alive: the job's JobManager reports it in a state that is not globally terminal.
	Alive
	// Stopped: positive evidence that the job does not run and never will again.
	Stopped
)

func (l Liveness) String() string {
	switch l {
	case Alive:
		return "Alive"
	case Stopped:
		return "Stopped"
	}
	return "Unknown"
}

// Judge weighs one observation of a job. Stopped needs positive evidence: its JobManager answered
// with a globally terminal state or said it does not know the job, or the JobManager is gone (its
// Deployment and every one of its pods, terminating ones included). Cluster readiness is never
// evidence about a job: a savepoint usually fails because a TaskManager is not ready, while the job
// runs on.
func Judge(jobManagerGone bool, jobID string, job *client.JobDetails, err error) (Liveness, string) {
	switch {
	case err == nil && client.IsGloballyTerminal(job.State):
		return Stopped, fmt.Sprintf("Flink reports job %s %s", jobID, job.State)
	case err == nil:
		return Alive, fmt.Sprintf("Flink reports job %s %s", jobID, job.State)
	case jobManagerGone:
		return Stopped, fmt.Sprintf("the JobManager of job %s and all its pods are gone", jobID)
	case client.IsJobNotFound(err, jobID):
		return Stopped, fmt.Sprintf("the JobManager answers that it does not know job %s", jobID)
	}
	return Unknown, fmt.Sprintf("the state of job %s is unknown: %v", jobID, err)
}
