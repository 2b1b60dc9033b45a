package loop

import (
	"sync"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Two lanes in the workqueue. At 10,000 applications the polls of jobs at rest keep the
// workers busy, and on a machine with no core to spare they fall behind: keys waited up to 50 s
// for a worker. In one FIFO a user's create or edit, or a savepoint an upgrade waits on, queued
// behind all of them, which is what the Apache operator's users report at that size
// (java-operator-sdk#2293). So the queue keeps two lanes: what needs the operator (an event asked
// for the object, or it is not at rest: a phase under way, a deletion, a spec not acted on, a Red
// job, a FlinkSnapshot asked for) goes ahead of the polls of objects at rest. The polls are not
// starved: while both lanes wait, every neededRun keys of the first are followed by one poll, so
// a fleet deploying for an hour still has its Running jobs looked at.
//
// The lanes only order what waits; the workqueue still hands a key to one worker at a time and
// queues it once however often it is added.

// lane is where a queued key waits.
type lane uint8

const (
	laneResting lane = iota + 1
	laneNeeded
)

func (l lane) String() string {
	if l == laneNeeded {
		return "needed"
	}
	return "resting"
}

// neededRun is how many keys of the needed lane a worker takes, while polls wait, before a poll.
const neededRun = 3

// laneEntry is a key in a lane's FIFO; seq tells whether it is still where the key waits (a key
// moved to the needed lane leaves a stale entry behind in the other).
type laneEntry struct {
	key Key
	seq uint64
}

type laneSpot struct {
	lane lane
	seq  uint64
}

// laneQueue is the workqueue's storage (workqueue.Queue): two FIFOs. The workqueue calls Push, Pop,
// Touch and Len under its own lock; ask and takenFrom come from event handlers and workers, so the
// laneQueue has a lock of its own.
type laneQueue struct {
	mu sync.Mutex
	// resting tells whether the object of a key rests (its kind's Resting): looked up when the
	// key is queued, from the informer caches.
	resting func(Key) bool
	fifo    map[lane][]laneEntry
	// at is where each queued key waits; count, how many keys wait in each lane.
	at    map[Key]laneSpot
	count map[lane]int
	seq   uint64
	// asked are the keys an event asked for since a worker last took them.
	asked map[Key]struct{}
	// took is the lane each key was last taken from, until its worker asks.
	took map[Key]lane
	// run is how many needed keys were taken since the last poll.
	run int
}

var _ workqueue.Queue[Key] = (*laneQueue)(nil)

func newLaneQueue(resting func(Key) bool) *laneQueue {
	return &laneQueue{resting: resting, fifo: map[lane][]laneEntry{}, at: map[Key]laneSpot{},
		count: map[lane]int{}, asked: map[Key]struct{}{}, took: map[Key]lane{}}
}

// ask marks a key as asked for by an event, before it is added to the workqueue: it goes to the
// needed lane, or moves there if it already waits among the polls.
func (q *laneQueue) ask(key Key) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked[key] = struct{}{}
}

// Push queues a key in the lane it belongs to now.
func (q *laneQueue) Push(key Key) {
	q.mu.Lock()
	_, asked := q.asked[key]
	q.mu.Unlock()
	// Outside the lock: the lookup reads the informer caches.
	l := laneNeeded
	if !asked && q.resting(key) {
		l = laneResting
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.put(key, l)
}

func (q *laneQueue) put(key Key, l lane) {
	q.seq++
	q.fifo[l] = append(q.fifo[l], laneEntry{key, q.seq})
	q.at[key] = laneSpot{l, q.seq}
	q.count[l]++
}

// Touch is the workqueue's word that a queued key was added again: asked for, it moves ahead.
func (q *laneQueue) Touch(key Key) {
	q.mu.Lock()
	defer q.mu.Unlock()
	spot, queued := q.at[key]
	if _, asked := q.asked[key]; !asked || !queued || spot.lane == laneNeeded {
		return
	}
	q.count[spot.lane]--
	q.put(key, laneNeeded)
}

// Len is how many keys wait.
func (q *laneQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.at)
}

// Pop takes the next key: from the needed lane, but a poll after every neededRun of them while
// polls wait. The workqueue calls it only when Len is above 0.
func (q *laneQueue) Pop() Key {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := laneNeeded
	if q.count[laneNeeded] == 0 || (q.count[laneResting] > 0 && q.run >= neededRun) {
		l = laneResting
	}
	if l == laneNeeded {
		q.run++
	} else {
		q.run = 0
	}
	for {
		e := q.fifo[l][0]
		q.fifo[l][0] = laneEntry{}
		q.fifo[l] = q.fifo[l][1:]
		if spot, ok := q.at[e.key]; ok && spot == (laneSpot{l, e.seq}) {
			delete(q.at, e.key)
			delete(q.asked, e.key)
			q.count[l]--
			q.took[e.key] = l
			return e.key
		}
	}
}

// takenFrom is the lane a worker's key was taken from, once.
func (q *laneQueue) takenFrom(key Key) lane {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.took[key]
	delete(q.took, key)
	return l
}

// queueName names the loop's workqueue in the workqueue_* series.
const queueName = "flinkapplications"

// newQueue is the loop's rate-limited workqueue over its two lanes, its delays on clk (the real
// clock when nil).
func newQueue(clk clock.WithTicker, lanes *laneQueue) workqueue.TypedRateLimitingInterface[Key] {
	base := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[Key]{Name: queueName, Clock: clk, Queue: lanes})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[Key]{
		Name: queueName, Clock: clk, Queue: base})
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[Key](),
		workqueue.TypedRateLimitingQueueConfig[Key]{Name: queueName, Clock: clk, DelayingQueue: delaying})
}
