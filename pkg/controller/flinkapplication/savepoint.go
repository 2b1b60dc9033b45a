package flinkapplication

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// savepointStep is where one savepoint stands after a pass.
type savepointStep struct {
	// Location is set once the savepoint completed.
	Location string
	// Failure is set when the savepoint failed or can no longer be had. The trigger is cleared only
	// when Flink reported the savepoint failed.
	Failure string
	// Wait is non-nil while the caller must return it: the intent is being persisted, the savepoint is
	// in progress, or a call failed.
	Wait *Outcome
}

// takeSavepoint drives a savepoint of a record's job through the job core (jobs.Pass.Savepoint):
// the trigger id and time are recorded in rec.Savepoint and persisted before the trigger is sent.
// With mayTrigger false, or once the phase is overdue, it only follows a savepoint already asked for.
func takeSavepoint(rc *Context, rec *v1beta1.DeploymentRecord, ref jobs.Ref, cancelJob, mayTrigger bool) savepointStep {
	t := recordTrigger(rec.Savepoint)
	step := rc.pass().Savepoint(ref, &t, cancelJob, mayTrigger)
	storeTrigger(rec, t)
	out := savepointStep{Location: step.Location, Failure: step.Failure}
	if step.Wait != nil {
		o := waitOutcome(*step.Wait)
		out.Wait = &o
	}
	return out
}

// recordTrigger and storeTrigger carry a record's savepoint trigger to and from the job core's.
func recordTrigger(t *v1beta1.SavepointTrigger) jobs.Trigger {
	if t == nil {
		return jobs.Trigger{}
	}
	return jobs.Trigger{ID: t.TriggerID, Time: t.Time.Time}
}

func storeTrigger(rec *v1beta1.DeploymentRecord, t jobs.Trigger) {
	switch {
	case !t.Asked():
		rec.Savepoint = nil
	case rec.Savepoint == nil:
		rec.Savepoint = &v1beta1.SavepointTrigger{TriggerID: t.ID, Time: metav1.NewTime(t.Time)}
	default:
		rec.Savepoint.TriggerID, rec.Savepoint.Time = t.ID, metav1.NewTime(t.Time)
	}
}
