package fsm

import (
	"sync"
	"time"
)

// A phase deadline measures the application, not the operator: time an application was due but
// waited for a worker, because the queue was backed up, does not count against it (the loop tells
// each pass's wait: loop.QueueWait). Otherwise a busy operator would roll back healthy updates whose
// passes merely came late.

// QueueWaits remembers, per object, the recent waits for a worker.
type QueueWaits struct {
	mu    sync.Mutex
	spans map[string][]span
}

// maxQueueWaits bounds the waits remembered per object; older ones end before its phase began.
const maxQueueWaits = 64

// Note remembers that the object waited for a worker from from to to.
func (q *QueueWaits) Note(key string, from, to time.Time) {
	waited := span{from, to}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.spans == nil {
		q.spans = map[string][]span{}
	}
	s := append(q.spans[key], waited)
	if len(s) > maxQueueWaits {
		s = s[len(s)-maxQueueWaits:]
	}
	q.spans[key] = s
}

// Forget drops an object's waits once it is gone. Without it every application ever deleted kept up
// to maxQueueWaits spans for the life of the process.
func (q *QueueWaits) Forget(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.spans, key)
}

// DropBefore forgets the object's waits that ended before its phase began: no deadline of this
// phase or a later one counts them. Without it each application kept the waits of its start for
// good; at 10,000 applications started at once, that is most of maxQueueWaits each.
func (q *QueueWaits) DropBefore(key string, phaseStart time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.spans[key]
	kept := s[:0]
	for _, w := range s {
		if !w.to.Before(phaseStart) {
			kept = append(kept, w)
		}
	}
	switch {
	case len(kept) == 0:
		delete(q.spans, key)
	case len(kept) < len(s):
		q.spans[key] = append([]span(nil), kept...)
	}
}

// Within is how much of the time from start to now the object spent waiting for a worker.
func (q *QueueWaits) Within(key string, start, now time.Time) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	total := time.Duration(0)
	for _, s := range q.spans[key] {
		if from, to := later(s.from, start), earlier(s.to, now); to.After(from) {
			total += to.Sub(from)
		}
	}
	return total
}
