package fsm

import "time"

// Kind is a kind's pass around one step of its machine: what runs before the step, what after
// it, and the one status write. The order is the machine's and load-bearing for crash safety:
// what the handler decides from is in place before it runs; what status shows follows what it
// recorded; one write carries both; and only then are the transition and its Events told, so that
// nothing is said of a write that failed.
type Kind[C any] struct {
	Machine[C]
	// Name is the kind's name, in the phase metrics.
	Name string
	// Before runs before the step: status migrated from an earlier shape, what Flink and
	// Kubernetes answer, the clean-up that must precede a handler that may delete what it reads.
	Before func(C)
	// After runs after the step and before the write: what status shows that follows from what
	// the handler recorded (the snapshot objects, the summary, escaping).
	After func(C)
	// Write writes the status once, when a reader would see a change. Quiet is set when the pass
	// repeats a move it took before without writing it and so says nothing new.
	Write func(C) (quiet bool, err error)
	// Tell tells one of the pass's Events; Logged logs a transition the pass wrote.
	Tell   func(C, Event)
	Logged func(c C, from, to Phase)
}

// Run runs one pass over one object and returns when to look again; negative means only on a
// change. A failed write returns its error, and nothing of the pass is told.
func (k Kind[C]) Run(c C, d *Deadlines, m *Metrics) (time.Duration, error) {
	p := k.Pass(c)
	d.Activity.PassStarted(p.Now)
	k.Before(c)
	from, fromStarted := p.Subject.Phase().Normalized(), p.Machine.PhaseStartedAt
	out := k.Step(c, d)
	k.After(c)
	quiet, err := k.Write(c)
	if err != nil {
		return 0, err
	}
	to := p.Subject.Phase()
	if !quiet {
		m.Transition(k.Name, from, to, fromStarted, p.Now)
	}
	for _, ev := range p.Events {
		k.Tell(c, ev)
	}
	if p.Transitioned && !quiet {
		k.Logged(c, from, to)
	}
	return out.After, nil
}
