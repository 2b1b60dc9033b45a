package jobs

import (
	"errors"
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Cancel cancels a job that is alive and reports how it stands: Stopped once Flink says so or the
// evidence of Judge holds; Unknown (with the cause) while nothing says. Cancelling twice is
// harmless: Flink answers a cancel of a cancelling job with 202.
func (p *Pass) Cancel(v *View) (Liveness, error) {
	switch v.Liveness {
	case Stopped:
		return Stopped, nil
	case Unknown:
		return Unknown, Retryable("ObserveJob", errors.New(v.Evidence))
	}
	if v.State() != client.JobCancelling {
		err := p.flink.CancelJob(p.ctx, v.Ref.URL, v.Ref.ID)
		p.Forget()
		switch {
		case client.IsJobNotFound(err, v.Ref.ID):
			return Stopped, nil
		case client.IsConflict(err):
			// It reached another terminal state on its own; the next look says which.
			return Alive, nil
		case err != nil:
			return Unknown, err
		}
		p.announce(false, "CancellingJob", fmt.Sprintf("cancelling job %s", v.Ref.ID))
	}
	return Alive, nil
}

// CancelIssued tells whether a job is already cancelling or stopped, so that refusing to stop it
// can no longer keep it running.
func CancelIssued(v *View) bool {
	return v.Liveness == Stopped || v.State() == client.JobCancelling
}

// EndStep is where ending a job for good stands after a pass.
type EndStep struct {
	// Wait is non-nil while the end goes on.
	Wait *Wait
	// SavepointPath is the savepoint the job ended with; "" when none was asked for or had.
	SavepointPath string
	// SavepointTakenAt is when Flink took it (SavepointStep.TakenAt).
	SavepointTakenAt time.Time
	// Missing says why the savepoint asked for was not had although the job ended.
	Missing string
	// Unknowable is set with Missing when Flink lost the job before saying whether the savepoint
	// completed (SavepointStep.Unknowable).
	Unknowable bool
}

// End ends a job that goes away for good (its owner is deleted, a BlueGreen version is torn down):
// the savepoint of the trigger, when one was asked for (a savepoint with cancel), then a cancel if
// the job is still alive. A savepoint in flight is followed to its end even when its cancel ended
// the job before its result was read. While the savepoint fails and the job runs, the job is left
// running when retrigger is set (step names that failure for the caller's retries, and a savepoint
// Flink failed clears the trigger for a new one); without retrigger the job is cancelled and the
// savepoint reported missing.
func (p *Pass) End(v *View, t *Trigger, retrigger bool, step string) EndStep {
	if v.Liveness == Unknown {
		return EndStep{Wait: retry(Retryable("ObserveJob", errors.New(v.Evidence)))}
	}
	alive := v.Liveness == Alive
	var out EndStep
	if t.Asked() {
		sp := p.Savepoint(v.Ref, t, true, alive && retrigger)
		switch {
		case sp.Wait != nil:
			return EndStep{Wait: sp.Wait}
		case sp.Unknowable && alive && retrigger:
			// Another JobMaster runs the job (Savepoint): the caller records the savepoint in doubt
			// and asks a new one, newer than anything the lost one may hold.
			*t = Trigger{}
			return EndStep{Missing: sp.Failure, Unknowable: true, Wait: later(0)}
		case sp.Failure != "" && alive && retrigger:
			return EndStep{Wait: retry(Retryable(step, errors.New(sp.Failure)))}
		case sp.Unknowable:
			out.Missing, out.Unknowable = sp.Failure, true
		case sp.Failure != "":
			out.Missing = fmt.Sprintf("job %s ended without its savepoint: %s", v.Ref.ID, sp.Failure)
		}
		out.SavepointPath, out.SavepointTakenAt = sp.Location, sp.TakenAt
	}
	if alive {
		switch state, err := p.Cancel(v); state {
		case Unknown:
			return EndStep{Wait: retry(err)}
		case Alive:
			return EndStep{Wait: later(0)}
		}
	}
	return out
}
