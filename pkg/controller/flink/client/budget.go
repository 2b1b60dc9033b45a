package client

import (
	"context"
	"sync"
)

// budget is the process-wide room for JobManager answers (inFlight). Unlike a FIFO semaphore, a
// caller whose share fits goes ahead of one that waits for more: a large answer waiting for room must
// not hold back the small answers of every other tenant behind it. One JobManager can make its own
// answers slow (a body that trickles holds its share for the call's timeout), never everyone's. A
// large answer that keeps finding no room fails at its call's timeout and is asked again later.
type budget struct {
	mu      sync.Mutex
	free    int64
	waiters []*budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

func newBudget(n int64) *budget { return &budget{free: n} }

// Acquire takes n of the room, waiting until it is free or ctx ends.
func (b *budget) Acquire(ctx context.Context, n int64) error {
	b.mu.Lock()
	if n <= b.free {
		b.free -= n
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-w.ready:
			// Granted as the context ended: give it back.
			b.free += n
			b.grant()
		default:
			b.remove(w)
		}
		return ctx.Err()
	}
}

// TryAcquire takes n of the room if it is free now.
func (b *budget) TryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.free {
		return false
	}
	b.free -= n
	return true
}

// Release gives n back and grants every waiter that now fits, oldest first.
func (b *budget) Release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.free += n
	b.grant()
}

func (b *budget) grant() {
	kept := b.waiters[:0]
	for _, w := range b.waiters {
		if w.n <= b.free {
			b.free -= w.n
			close(w.ready)
			continue
		}
		kept = append(kept, w)
	}
	clear(b.waiters[len(kept):])
	b.waiters = kept
}

func (b *budget) remove(w *budgetWaiter) {
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			return
		}
	}
}
