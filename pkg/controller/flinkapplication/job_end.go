package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// endStep is where ending a job for good stands after a pass.
type endStep struct {
	// Wait is non-nil while the caller must return it.
	Wait *Outcome
	// SavepointPath is the savepoint the job ended with; "" when none was asked for or had.
	SavepointPath string
	// Missing says why the savepoint asked for was not had although the job ended.
	Missing string
}

// endJob ends the job of a record that goes away for good (a deleted application, a torn-down
// BlueGreen version) through the job core (jobs.Pass.End): a savepoint with cancel when
// withSavepoint, then a cancel if the job is still alive. step names a failing savepoint for the
// caller's retries.
func endJob(rc *Context, rec *v1beta1.DeploymentRecord, v *jobs.View, withSavepoint bool, step string) endStep {
	t := recordTrigger(rec.Savepoint)
	end := rc.pass().End(v, &t, withSavepoint, step)
	storeTrigger(rec, t)
	out := endStep{SavepointPath: end.SavepointPath, Missing: end.Missing}
	if end.Wait != nil {
		o := waitOutcome(*end.Wait)
		out.Wait = &o
	}
	return out
}
