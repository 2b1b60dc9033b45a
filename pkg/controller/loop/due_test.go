package loop

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/tools/cache"
)

func TestTheQueueMeasuresWaitsFromTheEarliestDueTime(t *testing.T) {
	var d dueTimes
	key := Key{"FlinkApplication", cache.ObjectName{Namespace: "jobs", Name: "wc"}}
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	d.at(key, t0.Add(10*time.Second))
	d.at(key, t0) // an event queues it sooner
	waited, ok := d.taken(key, t0.Add(3*time.Second))
	assert.True(t, ok)
	assert.True(t, waited.remembered())
	assert.Equal(t, span{t0, t0.Add(3 * time.Second)}, waited)
	_, ok = d.taken(key, t0.Add(4*time.Second))
	assert.False(t, ok, "forgotten once taken")
	d.at(key, t0)
	waited, ok = d.taken(key, t0.Add(queueWaitSlack/2))
	assert.True(t, ok)
	assert.False(t, waited.remembered(), "a short wait is normal")
}
