package loop

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// health tells /healthz whether the loop does its job: every informer has synced, and the
// workers keep taking work while work waits. A cache that never syncs (a list that keeps failing)
// or workers all stuck in a pass otherwise leave an operator that looks alive and does nothing.
type health struct {
	clock clock.PassiveClock
	// stallAfter is how long work may wait while no worker moves; it exceeds the longest pass.
	stallAfter time.Duration
	informers  []namedInformer
	queue      interface {
		Len() int
		ShuttingDown() bool
	}
	// lastMoved is when a worker last took an item, finished one, or found none waiting (UnixNano).
	lastMoved atomic.Int64
}

type namedInformer struct {
	name   string
	synced cache.InformerSynced
}

// moved records that a worker moved: it took or finished an item, or found nothing to do.
func (h *health) moved() { h.lastMoved.Store(h.clock.Now().UnixNano()) }

// check is nil while the loop works, and otherwise says why it does not.
func (h *health) check() error {
	var unsynced []string
	for _, inf := range h.informers {
		if !inf.synced() {
			unsynced = append(unsynced, inf.name)
		}
	}
	if len(unsynced) > 0 {
		return fmt.Errorf("informers not synced: %s", strings.Join(unsynced, ", "))
	}
	return h.stalled()
}

// stalled says whether work waits that no worker takes, or the queue is shut down: a process in
// that state does nothing and is restarted.
func (h *health) stalled() error {
	if h.queue.ShuttingDown() {
		return errors.New("the workqueue is shut down")
	}
	if waiting := h.queue.Len(); waiting > 0 {
		if still := h.clock.Since(time.Unix(0, h.lastMoved.Load())); still > h.stallAfter {
			return fmt.Errorf("%d objects wait in the workqueue and no worker has moved for %s", waiting, still.Round(time.Second))
		}
	}
	return nil
}
