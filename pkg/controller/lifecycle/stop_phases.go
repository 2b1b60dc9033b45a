package lifecycle

import (
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
