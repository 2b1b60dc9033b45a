package flinkapplication

import (
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
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
