package fsm

import (
	"fmt"
	"time"
)

// Deadlines is what the phase deadlines of one operator process count, kept for the process: a
// deadline measures the object, not the operator, so neither the process's own outages (Activity)
// nor an object's waits for a worker (Waits) count against it, and a phase whose deadline follows
// progress counts from its last step (Progress).
type Deadlines struct {
	Activity Activity
	Waits    QueueWaits
	Progress ProgressMemory
}

// Forget drops what is kept of an object once it is gone.
func (d *Deadlines) Forget(key string) {
	d.Waits.Forget(key)
	d.Progress.Forget(key)
}

// OutageAllowance is how much longer than its deadline a phase may last by the wall clock, from
// when it began (status's phaseStartedAt), for the time the operator could not act. Each process
// counts a deadline from its own first pass, so that an outage of the operator is no reason to give
// up on what Flink was doing meanwhile; but a process cannot tell an outage from a predecessor that
// acted all along, and an operator restarted more often than the deadline would otherwise keep a
// phase past it for as long as the restarts came. A phase that follows progress has a bound of its
// own, from the steps it can take (BoundOfStart).
const OutageAllowance = 10 * time.Minute

// pastDeadline says whether the phase the pass began in is past its deadline, and why; it sets
// the pass's GivesUpAt.
func (m Machine[C]) pastDeadline(c C, spec Spec[C], d *Deadlines) (string, bool) {
	p := m.Pass(c)
	st := p.Machine
	key := m.Key(c)
	if st.PhaseStartedAt != nil {
		d.Waits.DropBefore(key, st.PhaseStartedAt.Time)
	}
	if spec.Deadline == nil || st.PhaseStartedAt == nil {
		return "", false
	}
	limit := spec.Deadline(c)
	start, within := st.PhaseStartedAt.Time, ""
	var bound StartBound
	if spec.Progress != nil {
		steps := spec.Progress(c)
		start = d.Progress.Since(key, start, p.Now, steps.Taken)
		within = " without progress"
		bound = BoundOfStart(st.PhaseStartedAt.Time, limit, steps)
	}
	if limit > 0 {
		p.GivesUpAt = bound.Earlier(start.Add(limit))
	}
	phase := p.Subject.Phase().Normalized()
	if limit > 0 && bound.Passed(p.Now) {
		return fmt.Sprintf("%s did not complete within %s", phase, bound), true
	}
	if most := limit + OutageAllowance; limit > 0 && spec.Progress == nil && p.Now.Sub(st.PhaseStartedAt.Time) > most {
		return fmt.Sprintf("%s did not complete within %s of its start (a deadline of %s, and %s for the operator's outages and restarts)",
			phase, most, limit, OutageAllowance), true
	}
	if limit <= 0 || d.Activity.Acting(start, p.Now)-d.Waits.Within(key, start, p.Now) <= limit {
		return "", false
	}
	return fmt.Sprintf("%s did not complete within %s%s", phase, limit, within), true
}
