package jobstate

import (
	"hash/fnv"
	"sync"
	"time"
)

// Looks remember, per object, when slow-moving figures (its job's checkpoints, its cluster's slots
// and TaskManagers) were last read from Flink, so that a running job costs one REST call per status
// poll, not three. They are only a cache: an operator that restarts starts them from what status
// dates (Look.Due). An object's looks go with it (Forget). The zero value is ready.
type Looks struct {
	mu      sync.Mutex
	objects map[string]map[string]time.Time // object key → figure → last read
}

// Look is one object's looks as one pass sees them.
type Look struct {
	looks  *Looks
	object string
	now    time.Time
}

// Of is the looks of the object with this key, at now.
func (l *Looks) Of(object string, now time.Time) Look {
	return Look{looks: l, object: object, now: now}
}

// Forget drops what is known of a deleted object.
func (l *Looks) Forget(object string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.objects, object)
}

// Objects is how many objects the looks remember.
func (l *Looks) Objects() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.objects)
}

func (l *Looks) last(object, what string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.objects[object][what]
	return at, ok
}

func (l *Looks) note(object, what string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.objects == nil {
		l.objects = map[string]map[string]time.Time{}
	}
	if l.objects[object] == nil {
		l.objects[object] = map[string]time.Time{}
	}
	l.objects[object][what] = at
}

func (l *Looks) drop(object, what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.objects[object], what)
	if len(l.objects[object]) == 0 {
		delete(l.objects, object)
	}
}

// Due tells whether what is named was last read from Flink at least every ago, and if so notes that
// it is read now. A process that has not read it yet (a new leader, a restarted operator) takes
// since as the last read instead of reading at once: the time status shows the figure was read by,
// or a time spread over the interval (Spread), so that its first passes cost the fleet one call
// each, not three. A zero since reads at once.
func (l Look) Due(what string, every time.Duration, since time.Time) bool {
	last, ok := l.looks.last(l.object, what)
	if !ok && !since.IsZero() {
		last, ok = since, true
		l.looks.note(l.object, what, since)
	}
	if ok && l.now.Sub(last) < every {
		return false
	}
	l.looks.note(l.object, what, l.now)
	return true
}

// WouldBeDue is what Due would say now, without noting anything: a read asked ahead of the answer
// that decides whether it is made counts as made only once it is used.
func (l Look) WouldBeDue(what string, every time.Duration, since time.Time) bool {
	last := since
	if at, ok := l.looks.last(l.object, what); ok {
		last = at
	}
	return last.IsZero() || l.now.Sub(last) >= every
}

// Failed forgets the read of what is named that Flink did not answer: the next comes due as for a
// process that has not read it yet (Due's since), not an interval after the failed one.
func (l Look) Failed(what string) { l.looks.drop(l.object, what) }

// At notes that what is named was last read at, which may be earlier than it was: the next read
// comes due an interval after at.
func (l Look) At(what string, at time.Time) {
	if !at.IsZero() {
		l.looks.note(l.object, what, at)
	}
}

// Spread is, for a figure nothing in status dates (the cluster's slots and TaskManagers), a last
// read between now and every ago, fixed per object and figure: the first reads of a fleet's
// figures after a restart are spread over the interval rather than made all in its first passes.
func (l Look) Spread(what string, every time.Duration) time.Time {
	if every <= 0 {
		return time.Time{}
	}
	return l.now.Add(-time.Duration(l.Phase(what, every)))
}

// Phase is a phase in [0, every) fixed by the object and what is spread (every > 0): what many
// objects do at the same interval, each does at its own phase.
func (l Look) Phase(what string, every time.Duration) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(l.object + "/" + what))
	return int64(h.Sum64() % uint64(every))
}
