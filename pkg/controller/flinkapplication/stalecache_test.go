package flinkapplication

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// laggingCache is an Observer whose applications come from a cache that lags the store, as an
// informer's does until the watch delivers the latest events: each read answers what the store held
// lag reads earlier. Owned objects are read fresh.
type laggingCache struct {
	Observer
	lag int

	mu    sync.Mutex
	reads map[string][]*v1beta1.FlinkApplication
	// stale counts the answers older than the store.
	stale int
}

func (w *world) lagApplicationReads(lag int) *laggingCache {
	c := &laggingCache{Observer: w.env.Observer, lag: lag, reads: map[string][]*v1beta1.FlinkApplication{}}
	w.env.Observer = c
	return c
}

func (c *laggingCache) Application(namespace, name string) (*v1beta1.FlinkApplication, error) {
	now, err := c.Observer.Application(namespace, name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := namespace + "/" + name
	c.reads[key] = append(c.reads[key], now)
	reads := c.reads[key]
	i := len(reads) - 1 - c.lag
	if i < 0 {
		i = 0
	}
	if reads[i].ResourceVersion != now.ResourceVersion {
		c.stale++
	}
	return reads[i].DeepCopy(), nil
}

// A pass that reads a cache older than the operator's own last status write must wait for the
// cache, not act on the older status. The path where acting would repeat a side effect: Flink
// before 1.15 ignores the savepoint trigger id it is sent and answers with its own, which the
// operator records in the pass that triggered. A pass reading the status from before that record
// asks Flink about the id it sent, which Flink does not know, and when the job's checkpoint
// statistics cannot be read either, nothing says a savepoint was taken: it would trigger another.
func TestPassOnACacheOlderThanItsOwnWriteDoesNotRepeatASavepoint(t *testing.T) {
	for _, lag := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("cache %d reads behind", lag), func(t *testing.T) {
			w := newWorld(t)
			w.enforceResourceVersions()
			old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.FlinkVersion = "1.14" })
			oldJM := w.jm(old, old.Status.DeployHash)
			oldJM.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointCheckpoints: 1}})
			cache := w.lagApplicationReads(lag)

			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
			app := w.runUntil("wc", "upgraded", upgradedFrom(old))
			w.passes("wc", 10)

			require.Greater(t, cache.staleReads(), 0, "the cache lagged")
			assert.Equal(t, 1, oldJM.SavepointTriggers(), "savepoints of the old job")
			assert.Equal(t, 1, savepointsTaken(w))
			jobs := w.timeline.Jobs(ns + "/wc")
			require.Len(t, jobs, 2, "jobs Flink ran")
			assert.Contains(t, jobs[1].RestoredFrom, "savepoint-")
			assert.Equal(t, jobs[1].JobID, app.Status.JobStatus.JobID)
			w.assertOneJobAtATime(w.events())
		})
	}
}

func (c *laggingCache) staleReads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stale
}
