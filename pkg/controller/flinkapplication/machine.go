package flinkapplication

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// machine is the phase machine (fsm.Machine) over the pass's Context, with what it needs of the
// kinds this package holds.
var machine = fsm.Machine[*Context]{
	Pass:              func(rc *Context) *fsm.Pass { return rc.Pass.Pass.Pass },
	Table:             (*Context).phases,
	Key:               (*Context).Key,
	DeletionRequested: deletionRequested,
	Recorded: func(rc *Context, at metav1.Time) {
		if rc.App != nil && rc.App.Status.StartedAt == nil {
			rc.App.Status.StartedAt = &at
		}
	},
	Classify: func(err error) (string, bool) { return jobs.ErrorMethod(err), jobs.IsRetryable(err) },
}

// step runs one pass of the state machine (fsm.Machine.Step) for the pass's object.
func step(rc *Context) Outcome { return machine.Step(rc, &rc.env.PhaseTime) }

// deletionRequested says what a delete does: to the job per deleteMode.
func deletionRequested(rc *Context) string {
	return fmt.Sprintf("%s deleted; deleteMode %s", rc.kind.name, rc.Settings.DeleteMode)
}
