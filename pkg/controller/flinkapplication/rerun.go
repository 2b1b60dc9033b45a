package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// followRerun makes the job Flink runs in the live job's application instead of it (Flink 2.3+:
// the application run again under another job id after a JobManager failover, jobs.View.Rerun)
// the deployment's job. The record names it before anything acts on it; from then on it is
// watched, snapshotted and stopped as the job the operator submitted would be, and no job is ever
// submitted beside it.
func followRerun(rc *Context, v *jobs.View) Outcome {
	s := jobstate.Stable(rc.Job)
	if s == nil || s.JobID != v.Ref.ID {
		return stay(0)
	}
	rc.Event(false, "JobRerun", fmt.Sprintf("Flink runs job %s's application again as job %s; following it", v.Ref.ID, v.Rerun))
	s.JobID, s.ApplicationID, s.SubmittedAt = v.Rerun, jobs.ApplicationOf(v.Ref), nil
	return persistThenContinue()
}
