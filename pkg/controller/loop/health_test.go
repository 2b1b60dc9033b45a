package loop

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testclock "k8s.io/utils/clock/testing"
)

type fakeQueue struct {
	waiting  int
	shutDown bool
}

func (q *fakeQueue) Len() int           { return q.waiting }
func (q *fakeQueue) ShuttingDown() bool { return q.shutDown }

func newTestHealth() (*health, *testclock.FakeClock, *fakeQueue, map[string]bool) {
	clk := testclock.NewFakeClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	q := &fakeQueue{}
	synced := map[string]bool{"FlinkApplication in all namespaces": true, "Deployment in all namespaces": true}
	h := &health{clock: clk, stallAfter: 5 * time.Minute, queue: q}
	for name := range synced {
		h.informers = append(h.informers, namedInformer{name, func() bool { return synced[name] }})
	}
	h.moved()
	return h, clk, q, synced
}

func TestHealthyWhileSyncedAndMoving(t *testing.T) {
	h, clk, q, _ := newTestHealth()
	assert.NoError(t, h.check())

	// Nothing to do for a long time is no stall.
	clk.Step(time.Hour)
	assert.NoError(t, h.check(), "idle with an empty queue")

	// Work waits, and the workers keep taking it.
	q.waiting = 10
	for i := 0; i < 20; i++ {
		clk.Step(time.Minute)
		h.moved()
		assert.NoError(t, h.check(), "work waits but workers move")
	}
}

func TestUnhealthyUntilEveryInformerSynced(t *testing.T) {
	h, _, _, synced := newTestHealth()
	synced["FlinkApplication in all namespaces"] = false
	err := h.check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "informers not synced: FlinkApplication in all namespaces")
	assert.NotContains(t, err.Error(), "Deployment")

	synced["FlinkApplication in all namespaces"] = true
	assert.NoError(t, h.check())
}

func TestUnhealthyWhenWorkWaitsAndNoWorkerMoves(t *testing.T) {
	h, clk, q, _ := newTestHealth()
	q.waiting = 3
	clk.Step(5 * time.Minute)
	assert.NoError(t, h.check(), "a pass may take up to stallAfter")
	clk.Step(time.Second)
	err := h.check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "3 objects wait in the workqueue and no worker has moved for 5m1s")

	// A worker coming back makes it healthy again.
	h.moved()
	assert.NoError(t, h.check())
}

func TestUnhealthyWhenTheQueueIsShutDown(t *testing.T) {
	h, _, q, _ := newTestHealth()
	q.shutDown = true
	err := h.check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "workqueue is shut down")
}
