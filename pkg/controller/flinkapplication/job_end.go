package flinkapplication

import (
	"errors"
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
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
// BlueGreen version): a savepoint with cancel when withSavepoint, then a cancel if the job is still
// alive. A savepoint in flight is followed to its end even when its cancel ended the job before its
// result was read. While the savepoint fails and the job runs, the job is left running: step names
// that failure for the caller's retries.
func endJob(rc *Context, rec *v1beta1.DeploymentRecord, v *JobView, withSavepoint bool, step string) endStep {
	wait := func(o Outcome) endStep { return endStep{Wait: &o} }
	if v.Liveness == Unknown {
		return wait(failed(retryable("ObserveJob", errors.New(v.Evidence))))
	}
	alive := v.Liveness == Alive
	var out endStep
	if withSavepoint && (alive || rec.Savepoint != nil) {
		sp := takeSavepoint(rc, rec, v.Ref, true, alive)
		switch {
		case sp.Wait != nil:
			return endStep{Wait: sp.Wait}
		case sp.Failure != "" && alive:
			return wait(failed(retryable(step, errors.New(sp.Failure))))
		case sp.Failure != "":
			out.Missing = fmt.Sprintf("job %s ended without its savepoint: %s", rec.JobID, sp.Failure)
		}
		out.SavepointPath = sp.Location
	}
	if alive {
		switch state, err := stopJob(rc, v); state {
		case Unknown:
			return wait(failed(err))
		case Alive:
			return wait(stay(0))
		}
	}
	return out
}
