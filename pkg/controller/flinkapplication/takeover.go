package flinkapplication

import (
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A quiet takeover (issue 29). A new leader, or a restarted operator, starts with empty caches:
// the informers' initial lists call the add handlers for the whole fleet within a second or two,
// and queued as they come every object's first pass would run at once, a burst of Flink calls and
// API reads that the steady state spreads over each statusPollInterval. So until the caches have
// synced (no worker runs before that anyway) the keys are only collected. Then the objects that
// need the operator (a phase under way, a deletion, a spec not yet acted on, a FlinkSnapshot asked
// for) are queued at once, and those at rest are spread evenly over nine tenths of a
// statusPollInterval: none is looked at later than its poll would have come had the operator not
// restarted, and their polls stay spread afterwards, each pass asking for the next one a poll later.

// startupHold collects the keys queued before the caches synced.
type startupHold struct {
	mu      sync.Mutex
	holding bool
	keys    map[queueKey]struct{}
}

// hold keeps a key while the controller starts, and tells whether it did.
func (h *startupHold) hold(key queueKey) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.holding {
		return false
	}
	if h.keys == nil {
		h.keys = map[queueKey]struct{}{}
	}
	h.keys[key] = struct{}{}
	return true
}

// release hands the collected keys to queue and stops holding. Under the lock, so that a key
// queued meanwhile waits for the collected ones rather than overtaking them.
func (h *startupHold) release(queue func(keys []queueKey)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]queueKey, 0, len(h.keys))
	for k := range h.keys {
		keys = append(keys, k)
	}
	h.holding, h.keys = false, nil
	queue(keys)
}

// releaseStartup queues what the initial lists brought, once the caches have synced: what needs
// the operator now, the rest spread over nine tenths of a statusPollInterval.
func (c *Controller) releaseStartup() {
	c.start.release(func(keys []queueKey) {
		var resting []queueKey
		for _, key := range keys {
			if c.keyAtRest(key) {
				resting = append(resting, key)
			} else {
				c.queueNow(key)
			}
		}
		now := time.Now()
		// Over nine tenths of the interval: the last pass then also ends within it, on a busy
		// machine too (at the full interval the bench saw the last application observed at 10.00 s).
		for _, s := range spreadOver(resting, c.env.Config.StatusPollInterval.Duration*9/10) {
			c.due.at(s.key, now.Add(s.after))
			c.queue.AddAfter(s.key, s.after)
		}
	})
}

type spreadKey struct {
	key   queueKey
	after time.Duration
}

// spreadOver gives keys delays evenly spaced over interval, the first at once, in the order of
// their names: deterministic, so that a restart puts each object where the last one did.
func spreadOver(keys []queueKey, interval time.Duration) []spreadKey {
	sorted := append([]queueKey(nil), keys...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].String() < sorted[j].String() })
	out := make([]spreadKey, len(sorted))
	for i, k := range sorted {
		out[i] = spreadKey{k, time.Duration(int64(interval) * int64(i) / int64(len(sorted)))}
	}
	return out
}

// keyAtRest tells whether the cached object of the key is at rest: nothing it asks of the
// operator is lost by looking at it up to a statusPollInterval later.
func (c *Controller) keyAtRest(key queueKey) bool {
	obj, ok := c.cachedObject(key)
	if !ok {
		// Gone, or not a kind the machine runs (an orphaned FlinkSnapshot): its pass is short.
		return false
	}
	var s subject
	switch o := obj.(type) {
	case *v1beta1.FlinkApplication:
		s = applicationSubject{o}
	case *v1beta1.FlinkSessionJob:
		s = sessionJobSubject{o}
	case *v1beta1.FlinkSessionCluster:
		s = sessionClusterSubject{o}
	default:
		return false
	}
	return atRest(s) && !c.snapshotsWait(key)
}

// atRest tells whether an object rests in a steady phase with its spec acted on and nothing to
// retry. A job shown Red may be one to restart (restartFailedJob): it is looked at first.
func atRest(s subject) bool {
	m, st := s.meta(), s.machine()
	if m.DeletionTimestamp != nil || st.ObservedGeneration != m.Generation || !s.phase().Normalized().IsSteady() {
		return false
	}
	if e := st.LastSeenError; e != nil && !e.IsFailFast {
		return false
	}
	if j := s.job(); j != nil && j.JobStatus.Health == v1beta1.Red {
		return false
	}
	return true
}

// snapshotsWait tells whether a FlinkSnapshot of the object waits for its pass: one not answered
// yet, pending, changed since its answer or deleted.
func (c *Controller) snapshotsWait(key queueKey) bool {
	index := c.snapshotIndexes[key.Namespace]
	if index == nil {
		index = c.snapshotIndexes[metav1.NamespaceAll]
	}
	if index == nil {
		return false
	}
	objs, err := index.ByIndex(snapshotOwnerIndex, snapshotOwnerKey(key.Namespace, key.Kind, key.Name))
	if err != nil {
		return true
	}
	for _, obj := range objs {
		s, ok := obj.(*v1beta1.FlinkSnapshot)
		if !ok {
			continue
		}
		if s.DeletionTimestamp != nil || s.Status.ObservedGeneration != s.Generation ||
			s.Status.State == "" || s.Status.State == v1beta1.StatePending {
			return true
		}
	}
	return false
}
