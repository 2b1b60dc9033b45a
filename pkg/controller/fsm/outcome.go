package fsm

import "time"

// Outcome is what a handler decided in one pass: stay in the phase and come back later, move to
// another phase, or report a failed attempt that the state machine retries or gives up on.
type Outcome struct {
	// Next is the phase to move to; empty stays in the current phase.
	Next Phase
	// Reason is a stable UpperCamelCase word: the Event reason and status.reason.
	Reason string
	// Message says what happened in words a user can act on.
	Message string
	// Warning marks the transition's Event as a Warning.
	Warning bool
	// After is when to look again; zero means the phase's usual interval.
	After time.Duration
	// Err is a failed attempt. Retryable errors are retried with backoff kept in status until the
	// phase's budget runs out; then, or at once for other errors, the phase gives up.
	Err error
}

// AtOnce asks to be handled again at once: the handler has written intent to status that must be
// persisted before the action that depends on it.
const AtOnce = time.Millisecond

// UntilChanged asks not to be requeued: only a change to the object or its objects wakes it.
const UntilChanged time.Duration = -1

// Stay stays in the phase and looks again after the given time (zero: the phase's usual interval).
func Stay(after time.Duration) Outcome { return Outcome{After: after} }

// PersistThenContinue writes what the handler recorded and comes back at once.
func PersistThenContinue() Outcome { return Outcome{After: AtOnce} }

// MoveTo moves to the next phase, with an Event of the reason.
func MoveTo(next Phase, reason, message string) Outcome {
	return Outcome{Next: next, Reason: reason, Message: message, After: AtOnce}
}

// WarnTo moves to the next phase, with a Warning Event of the reason.
func WarnTo(next Phase, reason, message string) Outcome {
	return Outcome{Next: next, Reason: reason, Message: message, Warning: true, After: AtOnce}
}

// Failed reports a failed attempt, which the machine retries or gives up on.
func Failed(err error) Outcome { return Outcome{Err: err} }
