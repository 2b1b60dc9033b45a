package loop

import (
	"context"
	"sync"
	"time"
)

// A phase deadline measures the object, not the operator: time an object was due but waited for a
// worker, because the queue was backed up, does not count against it. The loop says how long a
// pass's key waited (QueueWait); the kinds' deadlines leave it out.

// queueWaitSlack is the wait for a worker that is taken as normal and not remembered.
const queueWaitSlack = 100 * time.Millisecond

// span is a wait for a worker, from when the key was due to when a worker took it.
type span struct{ from, to time.Time }

// remembered tells whether a wait for a worker is past the slack, one a deadline leaves out.
func (s span) remembered() bool { return s.to.Sub(s.from) >= queueWaitSlack }

// dueTimes remembers when each queued key was due: the earliest of the times it was queued for.
type dueTimes struct {
	mu  sync.Mutex
	due map[Key]time.Time
}

func (d *dueTimes) at(key Key, t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.due == nil {
		d.due = map[Key]time.Time{}
	}
	if have, ok := d.due[key]; !ok || t.Before(have) {
		d.due[key] = t
	}
}

// taken forgets when a key was due as a worker takes it, and says how long it waited past that;
// false when it was not known (a key queued again after a failed pass).
func (d *dueTimes) taken(key Key, now time.Time) (span, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	due, ok := d.due[key]
	delete(d.due, key)
	if !ok {
		return span{}, false
	}
	if now.Before(due) {
		// Queued sooner than it was due by a timer of an earlier pass: it did not wait.
		due = now
	}
	return span{due, now}, true
}

type queueWaitKey struct{}

// WithQueueWait is ctx carrying a pass's wait for a worker, from when its key was due to when a
// worker took it.
func WithQueueWait(ctx context.Context, from, to time.Time) context.Context {
	return context.WithValue(ctx, queueWaitKey{}, span{from, to})
}

// QueueWait is the wait for a worker the pass's ctx carries: set only when it was past the slack.
func QueueWait(ctx context.Context) (from, to time.Time, ok bool) {
	s, ok := ctx.Value(queueWaitKey{}).(span)
	return s.from, s.to, ok
}
