package flinkapplication

import (
	"fmt"
	"time"

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
	HeldBy:            haJobManagerComingBack,
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
	return fmt.Sprintf("%s deleted; deleteMode %s", applicationKindName, rc.Settings.DeleteMode)
}

// Phase names a phase of the state machine, whatever the kind (fsm.Phase).
type Phase = fsm.Phase

// The phases of all kinds. A kind's table holds the ones it goes through.
const (
	PhaseNew               = fsm.PhaseNew
	PhaseClusterStarting   = fsm.PhaseClusterStarting
	PhaseSavepointing      = fsm.PhaseSavepointing
	PhaseCancelling        = fsm.PhaseCancelling
	PhaseSubmitting        = fsm.PhaseSubmitting
	PhaseRunning           = fsm.PhaseRunning
	PhaseUpdating          = fsm.PhaseUpdating
	PhaseRecovering        = fsm.PhaseRecovering
	PhaseRollingBack       = fsm.PhaseRollingBack
	PhaseDeployFailed      = fsm.PhaseDeployFailed
	PhaseDeleting          = fsm.PhaseDeleting
	PhaseRescaling         = fsm.PhaseRescaling
	PhaseDualRunning       = fsm.PhaseDualRunning
	PhaseTeardown          = fsm.PhaseTeardown
	PhaseSuspended         = fsm.PhaseSuspended
	PhaseWaitingForCluster = fsm.PhaseWaitingForCluster
)

// Outcome is what a handler decided in one pass (fsm.Outcome).
type Outcome = fsm.Outcome

// now asks to be handled again at once: the handler has written intent to status that must be
// persisted before the action that depends on it.
const now = fsm.AtOnce

// untilChanged asks not to be requeued: only a change to the object or its objects wakes it.
const untilChanged = fsm.UntilChanged

func stay(after time.Duration) Outcome { return fsm.Stay(after) }

func persistThenContinue() Outcome { return fsm.PersistThenContinue() }

func moveTo(next Phase, reason, message string) Outcome { return fsm.MoveTo(next, reason, message) }

func warnTo(next Phase, reason, message string) Outcome { return fsm.WarnTo(next, reason, message) }

func failed(err error) Outcome { return fsm.Failed(err) }
