package flinkapplication

import "github.com/flinkfsm/flinkfsm/pkg/controller/fsm"

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
