package lifecycle

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
)

// StopPhases are the phases that stop a live job, shared by every kind that runs one, as rows of
// the kind's table over its own pass type C, of which pass gives the shared part. A kind brings
// where a finished stop leads (stopExits) and what a stop that cannot finish does (abandon).
func StopPhases[C any](pass func(C) *Pass, stopExits []fsm.Exit, abandon func(c C, cause string) fsm.Outcome) map[fsm.Phase]fsm.Spec[C] {
	handle := func(h func(*Pass) fsm.Outcome) func(C) fsm.Outcome {
		return func(c C) fsm.Outcome { return h(pass(c)) }
	}
	return map[fsm.Phase]fsm.Spec[C]{
		fsm.PhaseSavepointing: {
			Follows: []v1beta1.SavepointPurpose{v1beta1.SavepointUpgrade, v1beta1.SavepointSuspend},
			Handle:  handle(Savepointing),
			Exits: append([]fsm.Exit{
				{To: fsm.PhaseRecovering, When: "savepoint failed"},
				{To: fsm.PhaseRunning, When: "suspend taken back before the savepoint"},
				{To: fsm.PhaseDeployFailed, When: "suspend taken back; the spec is one that failed"},
			}, stopExits...),
			Deadline: func(c C) time.Duration { return pass(c).Config.SavepointTimeout.Duration },
			// Giving up keeps the trigger: a savepoint that completes after all is found by its
			// trigger time and restored, exactly as if it had been seen in time.
			GiveUp: func(_ C, cause string) fsm.Outcome { return fsm.WarnTo(fsm.PhaseRecovering, "SavepointFailed", cause) },
			Poll:   fsm.WaitPoll,
		},
		fsm.PhaseCancelling: {
			Handle: handle(Cancelling),
			Exits: append([]fsm.Exit{
				{To: fsm.PhaseSavepointing, When: "LastState without a usable checkpoint: a savepoint instead"},
				{To: fsm.PhaseDeployFailed, When: "the cancelled job left no state to restore"},
				{To: fsm.PhaseRunning, When: "suspend taken back before the cancel"},
			}, stopExits...),
			Deadline: func(c C) time.Duration { return pass(c).Config.CancelTimeout.Duration },
			GiveUp:   abandon,
			Poll:     fsm.WaitPoll,
		},
		fsm.PhaseRecovering: {
			Handle: handle(Recovering),
			Exits: append([]fsm.Exit{
				{To: fsm.PhaseDeployFailed, When: "no state young enough; the job keeps running, or it stopped without state"},
			}, stopExits...),
			Deadline: func(c C) time.Duration { return pass(c).Config.CancelTimeout.Duration },
			GiveUp:   abandon,
			Poll:     fsm.WaitPoll,
		},
	}
}

// DeleteBlocked stops retrying a final savepoint that keeps failing or cannot be read. The job keeps
// running (unless the savepoint's own cancel ended it) and the application stays until the user
// chooses to give up the savepoint. Its ledger entry stays Pending: when the user switches to
// ForceCancel, a savepoint that completed meanwhile is still found and recorded as the final one.
func DeleteBlocked[C any](_ C, cause string) fsm.Outcome {
	return fsm.Outcome{Reason: "DeleteBlocked", Warning: true, After: fsm.UntilChanged,
		Message: fmt.Sprintf("final savepoint failed: %s; the job is left as it is. Set spec.deleteMode to ForceCancel "+
			"(cancel without a new savepoint; one that completed meanwhile is still recorded) or None (leave Flink alone) to finish deleting", cause)}
}

// ReadinessTimeout bounds how long a new job may take to run stable: the application's
// readinessTimeoutSeconds, or the operator's readinessTimeout.
func (p *Pass) ReadinessTimeout() time.Duration {
	if s := p.Settings.ReadinessTimeoutSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return p.Config.ReadinessTimeout.Duration
}
