package loop

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"
)

func appKey(name string) Key {
	return Key{"FlinkApplication", cache.ObjectName{Namespace: "jobs", Name: name}}
}

// laneOrder is a workqueue over lanes whose resting objects are those named, and a way to take
// what waits in it, in order.
func laneOrder(resting ...string) (*laneQueue, func(n int) []string, func(Key)) {
	rest := map[string]bool{}
	for _, name := range resting {
		rest[name] = true
	}
	lanes := newLaneQueue(func(k Key) bool { return rest[k.Name] })
	q := newQueue(nil, lanes)
	take := func(n int) []string {
		var names []string
		for i := 0; i < n && q.Len() > 0; i++ {
			key, _ := q.Get()
			lanes.takenFrom(key)
			q.Done(key)
			names = append(names, key.Name)
		}
		return names
	}
	return lanes, take, func(k Key) { q.Add(k) }
}

// At 10,000 applications the polls of jobs at rest can keep every worker busy. A user's create or
// edit, or an object in a phase under way, is not queued behind them.
func TestAnEventAndAPhaseUnderWayGoAheadOfThePollsOfObjectsAtRest(t *testing.T) {
	var resting []string
	for i := range 20 {
		resting = append(resting, fmt.Sprintf("r%02d", i))
	}
	lanes, take, add := laneOrder(resting...)
	for _, name := range resting {
		add(appKey(name)) // their polls come due
	}
	add(appKey("updating")) // its own poll, but it is not at rest
	lanes.ask(appKey("created"))
	add(appKey("created"))
	assert.Equal(t, []string{"updating", "created"}, take(2))

	// An event for an object whose poll already waits moves it ahead.
	lanes.ask(appKey("r19"))
	add(appKey("r19"))
	assert.Equal(t, []string{"r19"}, take(1))
	assert.Equal(t, resting[:19], take(100), "the polls keep their order")
}

// While a fleet deploys for an hour, what needs the operator fills its lane: the Running jobs'
// polls still get one turn in every neededRun+1.
func TestThePollsOfObjectsAtRestAreNotStarved(t *testing.T) {
	_, take, add := laneOrder("r1", "r2", "r3")
	for _, name := range []string{"r1", "r2", "r3", "n1", "n2", "n3", "n4", "n5", "n6", "n7"} {
		add(appKey(name))
	}
	assert.Equal(t, []string{"n1", "n2", "n3", "r1", "n4", "n5", "n6", "r2", "n7", "r3"}, take(10))
}

// An event that comes while a worker has the object is not lost, and its next pass is in the
// needed lane.
func TestAnEventDuringAPassQueuesTheNextPassAhead(t *testing.T) {
	lanes := newLaneQueue(func(Key) bool { return true })
	q := newQueue(nil, lanes)
	q.Add(appKey("a"))
	q.Add(appKey("b"))
	key, _ := q.Get()
	require.Equal(t, "a", key.Name)
	assert.Equal(t, laneResting, lanes.takenFrom(key))
	lanes.ask(key)
	q.Add(key) // while the worker has it
	q.Done(key)
	next, _ := q.Get()
	assert.Equal(t, "a", next.Name, "asked during its pass, it goes ahead of b's poll")
	assert.Equal(t, laneNeeded, lanes.takenFrom(next))
	q.Done(next)
	assert.Equal(t, 1, q.Len())
}
