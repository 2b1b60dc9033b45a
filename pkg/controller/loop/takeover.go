package loop

import (
	"sort"
	"sync"
	"time"
)

// A quiet takeover. A new leader, or a restarted operator, starts with empty caches: the
// informers' initial lists call the add handlers for the whole fleet within a second or two, and
// queued as they come every object's first pass would run at once, a burst of Flink calls and API
// reads that the steady state spreads over each poll interval. So until the caches have synced (no
// worker runs before that anyway) the keys are only collected. Then the objects that need the
// operator are queued at once, and those at rest (their kind's Resting) are spread evenly over
// Options.StartupSpread: none is looked at later than its poll would have come had the operator
// not restarted, and their polls stay spread afterwards, each pass asking for the next one a poll
// later.

// startupHold collects the keys queued before the caches synced.
type startupHold struct {
	mu      sync.Mutex
	holding bool
	keys    map[Key]struct{}
}

// hold keeps a key while the loop starts, and tells whether it did.
func (h *startupHold) hold(key Key) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.holding {
		return false
	}
	if h.keys == nil {
		h.keys = map[Key]struct{}{}
	}
	h.keys[key] = struct{}{}
	return true
}

// release hands the collected keys to queue and stops holding. Under the lock, so that a key
// queued meanwhile waits for the collected ones rather than overtaking them.
func (h *startupHold) release(queue func(keys []Key)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]Key, 0, len(h.keys))
	for k := range h.keys {
		keys = append(keys, k)
	}
	h.holding, h.keys = false, nil
	queue(keys)
}

// releaseStartup queues what the initial lists brought, once the caches have synced: what needs
// the operator now, the rest spread over the startup spread.
func (l *Loop) releaseStartup() {
	l.start.release(func(keys []Key) {
		var resting []Key
		for _, key := range keys {
			if l.resting(key) {
				resting = append(resting, key)
			} else {
				l.QueueNow(key)
			}
		}
		now := time.Now()
		for _, s := range spreadOver(resting, l.opts.StartupSpread) {
			l.due.at(s.key, now.Add(s.after))
			l.queue.AddAfter(s.key, s.after)
		}
	})
}

type spreadKey struct {
	key   Key
	after time.Duration
}

// spreadOver gives keys delays evenly spaced over interval, the first at once, in the order of
// their names: deterministic, so that a restart puts each object where the last one did.
func spreadOver(keys []Key, interval time.Duration) []spreadKey {
	sorted := append([]Key(nil), keys...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].String() < sorted[j].String() })
	out := make([]spreadKey, len(sorted))
	for i, k := range sorted {
		out[i] = spreadKey{k, time.Duration(int64(interval) * int64(i) / int64(len(sorted)))}
	}
	return out
}
