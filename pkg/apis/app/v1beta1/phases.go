package v1beta1

// FlinkApplicationPhase is a state of the operator's state machine. SubmittingJob and RollingBackJob
// are the Lyft operator's names of Submitting and RollingBack: objects it left mid-update are
// accepted and read as ours.
// +kubebuilder:validation:Enum="";New;ClusterStarting;Savepointing;Cancelling;Submitting;Running;Updating;Recovering;RollingBack;DeployFailed;Deleting;Rescaling;DualRunning;Teardown;Suspended;SubmittingJob;RollingBackJob
type FlinkApplicationPhase string

// The phases. An empty phase is read as New.
const (
	PhaseNew             FlinkApplicationPhase = "New"
	PhaseClusterStarting FlinkApplicationPhase = "ClusterStarting"
	PhaseSavepointing    FlinkApplicationPhase = "Savepointing"
	PhaseCancelling      FlinkApplicationPhase = "Cancelling"
	PhaseSubmitting      FlinkApplicationPhase = "Submitting"
	PhaseRunning         FlinkApplicationPhase = "Running"
	PhaseUpdating        FlinkApplicationPhase = "Updating"
	PhaseRecovering      FlinkApplicationPhase = "Recovering"
	PhaseRollingBack     FlinkApplicationPhase = "RollingBack"
	PhaseDeployFailed    FlinkApplicationPhase = "DeployFailed"
	PhaseDeleting        FlinkApplicationPhase = "Deleting"
	PhaseRescaling       FlinkApplicationPhase = "Rescaling"
	PhaseDualRunning     FlinkApplicationPhase = "DualRunning"
	PhaseTeardown        FlinkApplicationPhase = "Teardown"
	PhaseSuspended       FlinkApplicationPhase = "Suspended"
)

// Phases lists every phase, in the order the docs present them.
var Phases = []FlinkApplicationPhase{
	PhaseNew, PhaseUpdating, PhaseClusterStarting, PhaseSavepointing, PhaseCancelling, PhaseRecovering,
	PhaseSubmitting, PhaseRunning, PhaseRollingBack, PhaseDeployFailed, PhaseDeleting,
	PhaseRescaling, PhaseDualRunning, PhaseTeardown, PhaseSuspended,
}

// The Lyft operator's names of two phases, in status it wrote.
const (
	LyftPhaseSubmittingJob  FlinkApplicationPhase = "SubmittingJob"
	LyftPhaseRollingBackJob FlinkApplicationPhase = "RollingBackJob"
)

// Normalized reads the empty phase of a never-handled application as New, and the Lyft operator's
// phase names as ours.
func (p FlinkApplicationPhase) Normalized() FlinkApplicationPhase {
	switch p {
	case "":
		return PhaseNew
	case LyftPhaseSubmittingJob:
		return PhaseSubmitting
	case LyftPhaseRollingBackJob:
		return PhaseRollingBack
	}
	return p
}

// IsSteady tells whether the phase is a resting one, where the operator only watches the job.
func (p FlinkApplicationPhase) IsSteady() bool {
	switch p.Normalized() {
	case PhaseRunning, PhaseDeployFailed, PhaseDualRunning, PhaseSuspended:
		return true
	}
	return false
}
