package fsm

import "github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"

// Phase names a phase of the state machine, whatever the kind. The kinds' phases share their names
// where they mean the same (Running, Submitting, Deleting...), and each kind's status keeps its
// phase in a type of its own; the phase tables, the handlers and the machine work on the names.
type Phase string

// The phases of all kinds. A kind's table holds the ones it goes through.
const (
	PhaseNew             = Phase(v1beta1.PhaseNew)
	PhaseClusterStarting = Phase(v1beta1.PhaseClusterStarting)
	PhaseSavepointing    = Phase(v1beta1.PhaseSavepointing)
	PhaseCancelling      = Phase(v1beta1.PhaseCancelling)
	PhaseSubmitting      = Phase(v1beta1.PhaseSubmitting)
	PhaseRunning         = Phase(v1beta1.PhaseRunning)
	PhaseUpdating        = Phase(v1beta1.PhaseUpdating)
	PhaseRecovering      = Phase(v1beta1.PhaseRecovering)
	PhaseRollingBack     = Phase(v1beta1.PhaseRollingBack)
	PhaseDeployFailed    = Phase(v1beta1.PhaseDeployFailed)
	PhaseDeleting        = Phase(v1beta1.PhaseDeleting)
	PhaseRescaling       = Phase(v1beta1.PhaseRescaling)
	PhaseDualRunning     = Phase(v1beta1.PhaseDualRunning)
	PhaseTeardown        = Phase(v1beta1.PhaseTeardown)
	PhaseSuspended       = Phase(v1beta1.PhaseSuspended)
	// PhaseWaitingForCluster is a session job's wait for its FlinkSessionCluster.
	PhaseWaitingForCluster = Phase(v1beta1.SessionJobWaitingForCluster)
)

// Normalized reads the empty phase of a never-handled object as New, and the Lyft operator's phase
// names (in status it wrote of a FlinkApplication) as ours.
func (p Phase) Normalized() Phase { return Phase(v1beta1.FlinkApplicationPhase(p).Normalized()) }

// IsSteady tells whether the phase is a resting one, where the operator only watches.
func (p Phase) IsSteady() bool { return v1beta1.FlinkApplicationPhase(p).IsSteady() }
