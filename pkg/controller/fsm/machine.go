package fsm

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Machine is what the phase machine needs of a kind, over the kind's pass type C.
type Machine[C any] struct {
	// Pass is the machine's part of the kind's pass.
	Pass func(C) *Pass
	// Table is the kind's phase table.
	Table func(C) map[Phase]Spec[C]
	// Key names the pass's object among all kinds' objects, for what Deadlines keeps of it.
	Key func(C) string
	// DeletionRequested says what deleting the object does, in the move to Deleting.
	DeletionRequested func(C) string
	// HeldBy, when it says something, is what a failed attempt of the phase, failed with err, waits
	// for instead of spending one of its retries; nil when nothing holds a kind's attempts so.
	HeldBy func(c C, err error) string
	// Recorded runs as the pass records its outcome in the working status; nil for nothing more.
	Recorded func(c C, at metav1.Time)
	// Classify says of a failed attempt what it called and whether a retry may succeed.
	Classify func(err error) (method string, retryable bool)
}

// Step runs one pass of the state machine: the global rules, the retry and deadline gates kept in
// status, then the phase's handler. It records the transition in the working status and returns
// the outcome; persisting the status and telling the Events is the caller's.
func (m Machine[C]) Step(c C, d *Deadlines) Outcome {
	p := m.Pass(c)
	st := p.Machine
	from := p.Subject.Phase().Normalized()
	cfg := p.Config

	if p.Meta.DeletionTimestamp != nil && from != PhaseDeleting {
		out := MoveTo(PhaseDeleting, "DeletionRequested", m.DeletionRequested(c))
		m.record(c, from, out)
		return out
	}
	spec, ok := m.Table(c)[from]
	if !ok {
		out := Outcome{Reason: "UnsupportedPhase", Warning: true, After: UntilChanged,
			Message: fmt.Sprintf("phase %q is not handled by this operator version", from)}
		m.record(c, from, out)
		return out
	}
	if e := st.LastSeenError; e != nil && e.IsFailFast && st.RetryCount > 0 {
		// The phase gave up and stayed. Trying again on every event would repeat what keeps
		// failing (a savepoint, say); only a change to the spec earns a new budget.
		if st.ObservedGeneration == p.Meta.Generation {
			return Stay(UntilChanged)
		}
		st.LastSeenError, st.RetryCount = nil, 0
	}
	if wait := backoffRemaining(p); wait > 0 {
		return Stay(wait)
	}

	// The deadline is judged after the handler has looked at what Flink did: a savepoint or a cancel
	// that completed meanwhile is used exactly as if it had been seen in time. An overdue handler
	// starts nothing new, and unless it moves on, the phase gives up.
	cause, overdue := m.pastDeadline(c, spec, d)
	p.Overdue = overdue
	restore, events := p.Subject.SaveStatus(), len(p.Events)
	out := spec.Handle(c)
	if out.Next != "" && out.Next != from && !spec.Allows(out.Next) {
		// A handler asking for an undeclared transition is a bug. Refusing keeps the table honest,
		// and nothing the handler decided along with it is kept: only the refusal is written.
		restore()
		p.Events = p.Events[:events]
		out = Outcome{Reason: "InvalidTransition", Warning: true, After: UntilChanged,
			Message: fmt.Sprintf("refused undeclared transition %s -> %s (%s)", from, out.Next, out.Message)}
		m.record(c, from, out)
		return out
	}
	held := ""
	if out.Err != nil && m.HeldBy != nil {
		held = m.HeldBy(c, out.Err)
	}
	switch {
	case overdue && (out.Next == "" || out.Next == from):
		if out.Err != nil {
			cause = fmt.Sprintf("%s: %v", cause, out.Err)
		} else if p.WaitingOn != "" {
			cause = fmt.Sprintf("%s: %s", cause, p.WaitingOn)
		}
		out = m.GiveUp(c, spec, cause)
	case held != "":
		// Not a failed attempt: what the attempt needs is on its way back (a JobManager that Flink
		// HA brings back with the job), so the handler waits for it without spending the phase's
		// retries (attack review s6: a deletion gave up after its retries and never looked again
		// once the job was back).
		p.WaitingOn = held
		st.Reason = "waiting: " + held
		out = Stay(0)
	case out.Err != nil:
		out = m.afterFailure(c, spec, out.Err)
	case from.IsSteady() && st.LastSeenError != nil:
		// A resting phase recovers with its first clean pass. A moving phase keeps its count until it
		// moves on: its budget is per visit, so an attempt that keeps failing cannot retry forever.
		st.LastSeenError, st.RetryCount = nil, 0
	}
	if out.After == 0 {
		out.After = spec.Poll(cfg)
	}
	m.record(c, from, out)
	if next, ok := m.Table(c)[out.Next]; ok && out.Next != from && p.Transitioned {
		if next.Enter != nil {
			next.Enter(c)
		}
		if next.RunsAtOnce != nil && !p.RanOn && next.RunsAtOnce(c) {
			// Once per pass: what the second phase decides is written with the transition.
			p.RanOn = true
			return m.Step(c, d)
		}
	}
	return out
}

// afterFailure spends one retry of the phase's budget, or gives up when it is spent or the error
// cannot succeed on retry. The count lives in status so a restarted operator keeps it.
func (m Machine[C]) afterFailure(c C, spec Spec[C], err error) Outcome {
	p := m.Pass(c)
	st := p.Machine
	t := metav1.NewTime(p.Now)
	method, retry := m.Classify(err)
	st.LastSeenError = &v1beta1.FlinkApplicationError{
		AppError: err.Error(), Method: method, IsRetryable: retry, IsFailFast: !retry,
		MaxRetries: int32(p.Config.MaxRetries), LastErrorUpdateTime: &t,
	}
	if p.Subject.Phase().Normalized().IsSteady() {
		// Resting phases only watch; they never give up watching.
		if int(st.RetryCount) < p.Config.MaxRetries {
			st.RetryCount++
		}
		return Outcome{After: Backoff(p.Config, st.RetryCount)}
	}
	if retry && int(st.RetryCount) < p.Config.MaxRetries {
		st.RetryCount++
		return Outcome{After: Backoff(p.Config, st.RetryCount)}
	}
	cause := err.Error()
	if retry {
		cause = fmt.Sprintf("%s (after %d retries)", cause, st.RetryCount)
	}
	return m.GiveUp(c, spec, cause)
}

// GiveUp gives the phase up with the cause: as its spec says, or by resting in it until the spec
// changes, with the mark that keeps it so.
func (m Machine[C]) GiveUp(c C, spec Spec[C], cause string) Outcome {
	out := Outcome{Reason: "RetriesExhausted", Message: cause, Warning: true, After: UntilChanged}
	if spec.GiveUp != nil {
		out = spec.GiveUp(c, cause)
	}
	return Rest(m.Pass(c), out, cause)
}

// Rest is the outcome of a pass that gave up for the cause: one that stays in its phase rests
// there until the spec changes, and the mark (a fail-fast error) keeps it so.
func Rest(p *Pass, out Outcome, cause string) Outcome {
	if out.Next == "" {
		st := p.Machine
		if st.LastSeenError == nil {
			t := metav1.NewTime(p.Now)
			st.LastSeenError = &v1beta1.FlinkApplicationError{AppError: cause, LastErrorUpdateTime: &t}
		}
		st.LastSeenError.IsFailFast, st.LastSeenError.IsRetryable = true, false
		if st.RetryCount == 0 {
			st.RetryCount = 1
		}
	}
	return out
}

func backoffRemaining(p *Pass) time.Duration {
	st := p.Machine
	e := st.LastSeenError
	if e == nil || !e.IsRetryable || st.RetryCount == 0 || e.LastErrorUpdateTime == nil {
		return 0
	}
	return e.LastErrorUpdateTime.Add(Backoff(p.Config, st.RetryCount)).Sub(p.Now)
}

// record writes a transition into the working status: the phase, when it started, the history
// entry and the reason, and adds the Event that tells users about it.
func (m Machine[C]) record(c C, from Phase, out Outcome) {
	p := m.Pass(c)
	st := p.Machine
	t := metav1.NewTime(p.Now)
	if m.Recorded != nil {
		m.Recorded(c, t)
	}
	if out.Next != "" && out.Next != from {
		p.Subject.Enter(from, out.Next, t, out.Reason)
		st.PhaseStartedAt = &t
		st.RetryCount, st.LastSeenError = 0, nil
		p.Transitioned = true
	} else if p.Subject.Phase() == "" {
		p.Subject.SetPhase(PhaseNew)
		st.PhaseStartedAt = &t
	}
	if out.Reason != "" {
		msg := out.Message
		if msg == "" {
			msg = out.Reason
		}
		st.Reason = msg
		p.Tell(out.Warning, out.Reason, msg)
	}
}
