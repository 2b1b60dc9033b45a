package fsm

import (
	"sync"
	"time"
)

// Activity remembers when this operator process could not act on applications: before its first
// pass, and while the API server refused its writes. A phase deadline does not count that time:
// an outage of the operator is no reason to give up on a savepoint Flink was taking meanwhile.
type Activity struct {
	mu        sync.Mutex
	since     time.Time
	downSince time.Time
	outages   []span
}

type span struct{ from, to time.Time }

// maxOutages bounds the outages remembered; older ones end before any phase still running began.
const maxOutages = 32

// PassStarted marks the process as acting from its first pass on.
func (a *Activity) PassStarted(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.since.IsZero() {
		a.since = now
	}
}

// WriteFailed marks the API server as unreachable from now on, until a write succeeds.
func (a *Activity) WriteFailed(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.downSince.IsZero() {
		a.downSince = now
	}
}

// Wrote marks the API server as reachable again.
func (a *Activity) Wrote(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.downSince.IsZero() {
		return
	}
	a.outages = append(a.outages, span{a.downSince, now})
	if len(a.outages) > maxOutages {
		a.outages = a.outages[len(a.outages)-maxOutages:]
	}
	a.downSince = time.Time{}
}

// Acting is how much of the time from start to now the operator could act in.
func (a *Activity) Acting(start, now time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	idle := time.Duration(0)
	spans := a.outages
	if !a.since.IsZero() {
		spans = append([]span{{start, a.since}}, spans...)
	}
	if !a.downSince.IsZero() {
		spans = append(spans, span{a.downSince, now})
	}
	for _, s := range spans {
		from, to := later(s.from, start), earlier(s.to, now)
		if to.After(from) {
			idle += to.Sub(from)
		}
	}
	return now.Sub(start) - idle
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
