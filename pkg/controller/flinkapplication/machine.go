package flinkapplication

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// step runs one pass of the state machine: the global rules, the retry and deadline gates kept in
// status, then the phase's handler. It records the transition in the working status and returns the
// outcome; persisting the status and emitting events is the caller's job.
func step(rc *Context) Outcome {
	st := rc.Machine
	from := rc.subject.phase().Normalized()
	cfg := rc.Config

	if rc.Meta.DeletionTimestamp != nil && from != PhaseDeleting {
		out := moveTo(PhaseDeleting, "DeletionRequested", deletionRequested(rc))
		recordOutcome(rc, from, out)
		return out
	}
	spec, ok := rc.phases()[from]
	if !ok {
		out := Outcome{Reason: "UnsupportedPhase", Warning: true, After: untilChanged,
			Message: fmt.Sprintf("phase %q is not handled by this operator version", from)}
		recordOutcome(rc, from, out)
		return out
	}
	if e := st.LastSeenError; e != nil && e.IsFailFast && st.RetryCount > 0 {
		// The phase gave up and stayed. Trying again on every event would repeat what keeps
		// failing (a savepoint, say); only a change to the spec earns a new budget.
		if st.ObservedGeneration == rc.Meta.Generation {
			return stay(untilChanged)
		}
		st.LastSeenError, st.RetryCount = nil, 0
	}
	if wait := backoffRemaining(rc, cfg); wait > 0 {
		return stay(wait)
	}

	// The deadline is judged after the handler has looked at what Flink did: a savepoint or a cancel
	// that completed meanwhile is used exactly as if it had been seen in time. An overdue handler
	// starts nothing new, and unless it moves on, the phase gives up.
	cause, overdue := pastDeadline(rc, spec)
	rc.Overdue = overdue
	restore, events := rc.subject.saveStatus(), len(rc.events)
	out := spec.Handle(rc)
	if out.Next != "" && out.Next != from && !spec.Allows(out.Next) {
		// A handler asking for an undeclared transition is a bug. Refusing keeps the table honest,
		// and nothing the handler decided along with it is kept: only the refusal is written.
		restore()
		rc.events = rc.events[:events]
		out = Outcome{Reason: "InvalidTransition", Warning: true, After: untilChanged,
			Message: fmt.Sprintf("refused undeclared transition %s -> %s (%s)", from, out.Next, out.Message)}
		recordOutcome(rc, from, out)
		return out
	}
	switch {
	case overdue && (out.Next == "" || out.Next == from):
		if out.Err != nil {
			cause = fmt.Sprintf("%s: %v", cause, out.Err)
		} else if rc.waitingOn != "" {
			cause = fmt.Sprintf("%s: %s", cause, rc.waitingOn)
		}
		out = giveUp(rc, spec, cause)
	case out.Err != nil && jobManagerHABringsBack(rc) != "":
		// Not a failed attempt: the job's JobManager is gone and Flink HA brings it back with the
		// job, so the handler waits for it without spending the phase's retries (attack review
		// s6: a deletion gave up after its retries and never looked again once the job was back).
		waitingOn(rc, jobManagerHABringsBack(rc))
		out = stay(0)
	case out.Err != nil:
		out = afterFailure(rc, spec, out.Err)
	case from.IsSteady() && st.LastSeenError != nil:
		// A resting phase recovers with its first clean pass. A moving phase keeps its count until it
		// moves on: its budget is per visit, so an attempt that keeps failing cannot retry forever.
		st.LastSeenError, st.RetryCount = nil, 0
	}
	if out.After == 0 {
		out.After = spec.Poll(cfg)
	}
	recordOutcome(rc, from, out)
	if next, ok := rc.phases()[out.Next]; ok && out.Next != from && rc.transitioned {
		if next.Enter != nil {
			next.Enter(rc)
		}
		if next.RunsAtOnce != nil && !rc.ranOn && next.RunsAtOnce(rc) {
			// Once per pass: what the second phase decides is written with the transition.
			rc.ranOn = true
			return step(rc)
		}
	}
	return out
}

// afterFailure spends one retry of the phase's budget, or gives up when it is spent or the error
// cannot succeed on retry. The count lives in status so a restarted operator keeps it.
func afterFailure(rc *Context, spec phaseSpec, err error) Outcome {
	st := rc.Machine
	t := metav1.NewTime(rc.Now)
	retry := jobs.IsRetryable(err)
	st.LastSeenError = &v1beta1.FlinkApplicationError{
		AppError: err.Error(), Method: jobs.ErrorMethod(err), IsRetryable: retry, IsFailFast: !retry,
		MaxRetries: int32(rc.Config.MaxRetries), LastErrorUpdateTime: &t,
	}
	if rc.subject.phase().Normalized().IsSteady() {
		// Resting phases only watch; they never give up watching.
		if int(st.RetryCount) < rc.Config.MaxRetries {
			st.RetryCount++
		}
		return Outcome{After: fsm.Backoff(rc.Config, st.RetryCount)}
	}
	if retry && int(st.RetryCount) < rc.Config.MaxRetries {
		st.RetryCount++
		return Outcome{After: fsm.Backoff(rc.Config, st.RetryCount)}
	}
	cause := err.Error()
	if retry {
		cause = fmt.Sprintf("%s (after %d retries)", cause, st.RetryCount)
	}
	return giveUp(rc, spec, cause)
}

func giveUp(rc *Context, spec phaseSpec, cause string) Outcome {
	out := Outcome{Reason: "RetriesExhausted", Message: cause, Warning: true, After: untilChanged}
	if spec.GiveUp != nil {
		out = spec.GiveUp(rc, cause)
	}
	if st := rc.Machine; out.Next == "" {
		// Staying after giving up is resting until the spec changes; the mark keeps it so.
		if st.LastSeenError == nil {
			t := metav1.NewTime(rc.Now)
			st.LastSeenError = &v1beta1.FlinkApplicationError{AppError: cause, LastErrorUpdateTime: &t}
		}
		st.LastSeenError.IsFailFast, st.LastSeenError.IsRetryable = true, false
		if st.RetryCount == 0 {
			st.RetryCount = 1
		}
	}
	return out
}

// phaseOutageAllowance is how much longer than its deadline a phase may last by the wall clock,
// from when it began (status's phaseStartedAt), for the time the operator could not act. Each
// process counts a deadline from its own first pass, so that an outage of the operator is no
// reason to give up on what Flink was doing meanwhile; but a process cannot tell an outage from
// a predecessor that acted all along, and an operator restarted more often than the deadline
// would otherwise keep a phase past it for as long as the restarts came. A starting cluster has a
// bound of its own, from the steps its start took (fsm.BoundOfStart).
const phaseOutageAllowance = 10 * time.Minute

func pastDeadline(rc *Context, spec phaseSpec) (string, bool) {
	st := rc.Machine
	if st.PhaseStartedAt != nil {
		rc.env.waits.DropBefore(rc.writeKey(), st.PhaseStartedAt.Time)
	}
	if spec.Deadline == nil || st.PhaseStartedAt == nil {
		return "", false
	}
	d := spec.Deadline(rc)
	start, within := st.PhaseStartedAt.Time, ""
	var bound fsm.StartBound
	if spec.Progress != nil {
		steps := spec.Progress(rc)
		start = rc.env.progress.Since(rc.writeKey(), start, rc.Now, steps.Taken)
		within = " without progress"
		bound = fsm.BoundOfStart(st.PhaseStartedAt.Time, d, steps)
	}
	if d > 0 {
		rc.deadline = bound.Earlier(start.Add(d))
	}
	if d > 0 && bound.Passed(rc.Now) {
		return fmt.Sprintf("%s did not complete within %s", rc.subject.phase().Normalized(), bound), true
	}
	if most := d + phaseOutageAllowance; d > 0 && spec.Progress == nil && rc.Now.Sub(st.PhaseStartedAt.Time) > most {
		return fmt.Sprintf("%s did not complete within %s of its start (a deadline of %s, and %s for the operator's outages and restarts)",
			rc.subject.phase().Normalized(), most, d, phaseOutageAllowance), true
	}
	if d <= 0 || rc.env.activity.Acting(start, rc.Now)-rc.env.waits.Within(rc.writeKey(), start, rc.Now) <= d {
		return "", false
	}
	return fmt.Sprintf("%s did not complete within %s%s", rc.subject.phase().Normalized(), d, within), true
}

func backoffRemaining(rc *Context, cfg *config.Config) time.Duration {
	st := rc.Machine
	e := st.LastSeenError
	if e == nil || !e.IsRetryable || st.RetryCount == 0 || e.LastErrorUpdateTime == nil {
		return 0
	}
	return e.LastErrorUpdateTime.Add(fsm.Backoff(cfg, st.RetryCount)).Sub(rc.Now)
}

// recordOutcome writes a transition into the working status: the phase, when it started, the history entry
// and the reason, and queues the Event that tells users about it.
func recordOutcome(rc *Context, from Phase, out Outcome) {
	st := rc.Machine
	t := metav1.NewTime(rc.Now)
	if rc.App != nil && rc.App.Status.StartedAt == nil {
		rc.App.Status.StartedAt = &t
	}
	if out.Next != "" && out.Next != from {
		rc.subject.enter(from, out.Next, t, out.Reason)
		st.PhaseStartedAt = &t
		st.RetryCount, st.LastSeenError = 0, nil
		rc.transitioned = true
	} else if rc.subject.phase() == "" {
		rc.subject.setPhase(PhaseNew)
		st.PhaseStartedAt = &t
	}
	if out.Reason != "" {
		msg := out.Message
		if msg == "" {
			msg = out.Reason
		}
		st.Reason = msg
		rc.event(out.Warning, out.Reason, msg)
	}
}

// deletionRequested says what a delete does: to the job per deleteMode, or to a session cluster's
// jobs.
func deletionRequested(rc *Context) string {
	if rc.Job == nil {
		return "FlinkSessionCluster deleted; it is removed once no FlinkSessionJob names it"
	}
	return fmt.Sprintf("%s deleted; deleteMode %s", rc.kind.name, rc.Settings.DeleteMode)
}
