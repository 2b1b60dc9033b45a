package fsm

import (
	"fmt"
	"sync"
	"time"
)

// A phase whose deadline follows progress (Spec.Progress: a starting cluster's pods, say) gives up
// once it has gone its deadline without a new step, and at the latest after a deadline for each
// step it can take and once more, whatever the memory of the last step, which a restart loses,
// says.

// StartBound is the most a start may take from when it began, whatever its progress: a deadline
// for each step it can take and one more. Zero for a phase that follows no progress.
type StartBound struct {
	began    time.Time
	deadline time.Duration
	steps    int
}

// BoundOfStart is the bound of a start that began then, with this deadline for each step.
func BoundOfStart(began time.Time, deadline time.Duration, steps Steps) StartBound {
	return StartBound{began: began, deadline: deadline, steps: steps.Most}
}

// Length is how long the start may take in all.
func (b StartBound) Length() time.Duration { return time.Duration(b.steps+1) * b.deadline }

// Passed tells whether the start has lasted its bound by now.
func (b StartBound) Passed(now time.Time) bool {
	return !b.began.IsZero() && b.deadline > 0 && now.Sub(b.began) >= b.Length()
}

// Earlier is the earlier of the deadline and the bound's end.
func (b StartBound) Earlier(deadline time.Time) time.Time {
	if end := b.began.Add(b.Length()); !b.began.IsZero() && end.Before(deadline) {
		return end
	}
	return deadline
}

func (b StartBound) String() string {
	return fmt.Sprintf("%s of its start, the most a start of %d steps is given (%s for each and once more)", b.Length(), b.steps, b.deadline)
}

// ProgressMemory remembers, for each object in a phase whose deadline follows progress, the most
// steps seen in this visit of the phase and when they were first seen. It is only memory: an
// operator that restarts starts again from the phase's start, and the time before its first pass
// does not count against a deadline anyway (activity).
type ProgressMemory struct {
	mu   sync.Mutex
	seen map[string]progressSeen
}

type progressSeen struct {
	// phaseStarted tells one visit of the phase from the next; status keeps it to the second.
	phaseStarted int64
	most         int
	at           time.Time
}

// Since is when the object's phase last made progress: the first pass that saw more steps than any
// before it in this visit, or the phase's start.
func (m *ProgressMemory) Since(key string, phaseStarted, now time.Time, steps int) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]progressSeen{}
	}
	s, ok := m.seen[key]
	switch {
	case !ok || s.phaseStarted != phaseStarted.Unix():
		s = progressSeen{phaseStarted: phaseStarted.Unix(), most: steps, at: phaseStarted}
	case steps > s.most:
		s.most, s.at = steps, now
	}
	m.seen[key] = s
	return s.at
}

// Forget drops what is remembered of the object.
func (m *ProgressMemory) Forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.seen, key)
}
