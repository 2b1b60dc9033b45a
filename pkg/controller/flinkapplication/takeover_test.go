package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// restCallsOfAPass runs one pass of the application and counts the REST calls it made.
func (w *world) restCallsOfAPass(name string) int64 {
	before := w.restCalls.Load()
	w.settle()
	_, err := w.env.Reconcile(context.Background(), ns, name)
	require.NoError(w.t, err)
	return w.restCalls.Load() - before
}

// A restarted operator (or a new leader) knows nothing of when it last read an application's
// checkpoints and cluster overview. Its first pass of a steady application reads the job and
// nothing else, and writes nothing: what it does not read yet is read at the time the old process
// would have, which status dates. Only an outage that outlasted the checkpoint record window
// brings the checkpoint record up to date at once, as the record's safety asks: in the checkpoint
// book, which the new process read, so still without a status write.
func TestATakeoversFirstPassOfASteadyApplicationMakesOneRESTCallAndNoWrite(t *testing.T) {
	for _, c := range []struct {
		name       string
		outage     time.Duration
		checkpoint string
		calls      int64
		writes     int
	}{
		{"no checkpoints, a short outage", 15 * time.Second, "", 1, 0},
		{"no checkpoints, a long outage", 5 * time.Minute, "", 1, 0},
		{"checkpoints every 10s, a short outage", 15 * time.Second, "10s", 1, 0},
		// The recorded checkpoint is older than the record window: the old operator would have read
		// the checkpoints by now, and Flink may already have deleted the recorded one. The newest
		// goes to status at once, not to the book's next write: a process that died before that
		// write would leave a checkpoint Flink no longer has as the job's only record
		// (TestATakeoversLateRecordOutlivesTheProcessThatMadeIt).
		{"checkpoints every 10s, an outage past the record window", 5 * time.Minute, "10s", 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			app := checkpointing("wc", c.checkpoint)
			w.create(app)
			w.runUntilPhase("wc", v1beta1.PhaseRunning)
			poll := w.env.Config.StatusPollInterval.Duration
			// Steady for a few minutes, polled as the controller polls it; the operator dies just after
			// a pass that recorded a checkpoint, the worst moment for a short outage to find the record
			// due.
			recorded := ""
			for end := w.clock.Now().Add(3 * time.Minute); w.clock.Now().Before(end) ||
				c.checkpoint != "" && w.recordedCheckpoint("wc") == recorded; {
				recorded = w.recordedCheckpoint("wc")
				w.clock.Step(poll)
				w.restCallsOfAPass("wc")
			}
			w.downFor(c.outage)
			w.restartOperator()
			writes := w.crashAtStatusWrite(0, nil)
			calls := w.restCallsOfAPass("wc")
			assert.LessOrEqual(t, calls, c.calls, "REST calls of the first pass")
			assert.Equal(t, c.writes, *writes, "status writes of the first pass")
			got := w.get("wc")
			assert.Equal(t, v1beta1.Green, got.Status.JobStatus.Health)
			if c.checkpoint != "" {
				_, at := w.recordedCheckpointAt("wc")
				assert.WithinDuration(t, w.clock.Now(), at, time.Minute+10*time.Second,
					"the recorded checkpoint is within a record window and an interval")
			}
			// What the first pass left unread is read within the record window, as before the restart.
			var all int64
			for end := w.clock.Now().Add(w.env.Config.CheckpointRecordInterval.Duration); w.clock.Now().Before(end); {
				w.clock.Step(poll)
				all += w.restCallsOfAPass("wc")
			}
			assert.GreaterOrEqual(t, all, int64(6+2), "a minute of polls reads the job at each, its checkpoints and overview once")
		})
	}
}

// A phase with a deadline, caught by an outage of the operator longer than the deadline, is not
// given up by the operator that comes back: the outage earned nothing. The deadline still holds
// for the time the new process waits.
func TestAnOutageLongerThanAPhaseDeadlineFiresNoDeadline(t *testing.T) {
	w := newWorld(t)
	w.env.Config.ClusterStartTimeout.Duration = time.Minute
	app := wordcount("wc")
	jm := flink.JobManagerName(withNamespace(wordcount("wc")), flink.ClusterHash(withNamespace(wordcount("wc"))))
	w.broken[jm] = true
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseClusterStarting)
	for end := w.clock.Now().Add(30 * time.Second); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, v1beta1.PhaseClusterStarting, w.get("wc").Status.Phase, "mid-deadline")
	w.downFor(5 * time.Minute)
	w.restartOperator()
	restarted := w.clock.Now()
	_, _ = w.reconcile("wc")
	assert.Equal(t, v1beta1.PhaseClusterStarting, w.get("wc").Status.Phase, "the first pass after the outage")
	got := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Contains(t, got.Status.Reason, "ClusterStarting did not complete")
	assert.LessOrEqual(t, w.clock.Now().Sub(restarted), time.Minute+5*time.Second, "the deadline still holds")
}
