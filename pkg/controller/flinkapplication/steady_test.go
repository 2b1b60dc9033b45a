package flinkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A running job that nothing happens to is observed at every status poll and written to status only
// when a reader could tell the difference: an idle job not at all, a checkpointing one at most every
// checkpointRecordInterval.
func TestAnIdleApplicationCausesNoStatusWrites(t *testing.T) {
	for _, c := range []struct {
		name                 string
		checkpoint, retained string
		maxWrites            int
		// maxCalls is 8 a minute: one look at the job per poll, its checkpoints and the cluster's
		// slots once a minute.
		maxCalls int64
	}{
		{"no checkpoints", "", "", 0, 40},
		// Records go to the checkpoint book, and to status every tenth: none in these 5 minutes.
		// Nine retained leave the book's wait 10 s of the minute: the checkpoints are looked at
		// every 50 s.
		{"a checkpoint every 10s, 9 retained", "10s", "9", 1, 41},
		// With no retention set the operator's cluster keeps enough checkpoints (10) for a record a
		// minute and the book's wait.
		{"a checkpoint every 10s, no retention set", "10s", "", 1, 40},
		// One retained, as the user set: Flink deletes a checkpoint as soon as the next completes,
		// so each must be recorded, or a job lost with its JobManager would be restarted from a
		// checkpoint that no longer exists.
		{"a checkpoint every 10s, 1 retained", "10s", "1", 30, 70},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			app := checkpointing("wc", c.checkpoint)
			if c.retained != "" {
				app.Spec.FlinkConfig["state.checkpoints.num-retained"] = c.retained
			}
			w.create(app)
			w.runUntilPhase("wc", v1beta1.PhaseRunning)
			w.passes("wc", 5) // the job's first observations settle
			writes := w.crashAtStatusWrite(0, nil)
			calls := w.restCalls.Load()
			end := w.clock.Now().Add(5 * time.Minute)
			passes := 0
			for w.clock.Now().Before(end) {
				w.settle()
				_, _ = w.env.Reconcile(context.Background(), ns, "wc")
				passes++
				w.clock.Step(w.env.Config.StatusPollInterval.Duration)
			}
			assert.LessOrEqual(t, *writes, c.maxWrites, "status writes in 5 minutes of %d passes", passes)
			calls = w.restCalls.Load() - calls
			assert.LessOrEqual(t, calls, c.maxCalls, "Flink REST calls in 5 minutes of %d passes", passes)
			t.Logf("%d status writes and %d REST calls in %d passes over 5 minutes", *writes, calls, passes)
		})
	}
}

// Writing less never hides a failure: a job that fails is in status at the next status poll.
func TestAFailedJobIsReportedWithinOneStatusPoll(t *testing.T) {
	w := newWorld(t)
	w.faults = flinksim.Faults{FailJobsAfter: 2 * time.Minute}
	w.create(wordcount("wc"))
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	poll := w.env.Config.StatusPollInterval.Duration
	deadline := running.Status.JobStatus.StartTime.Add(2*time.Minute + 3*poll)
	var seen time.Time
	for seen.IsZero() {
		require.True(t, w.clock.Now().Before(deadline), "the failure is not reported by %s", w.clock.Now())
		w.settle()
		_, _ = w.env.Reconcile(context.Background(), ns, "wc")
		if w.get("wc").Status.JobStatus.State == v1beta1.JobFailed {
			seen = w.clock.Now()
		}
		w.clock.Step(poll)
	}
	var failed time.Time
	for _, c := range w.timeline.Jobs(ns + "/wc")[0].States {
		if c.State == "FAILED" {
			failed = c.Time
		}
	}
	require.False(t, failed.IsZero())
	assert.LessOrEqual(t, seen.Sub(failed), poll, "reported within one status poll of the failure at %s", failed)
}

// A busy operator reaches each application late. Passes that each make progress but wait for a
// worker do not add up to a missed deadline: the deadline measures the application.
func TestTimeWaitingForAWorkerDoesNotCountAgainstAPhaseDeadline(t *testing.T) {
	for _, c := range []struct {
		name  string
		noted bool
		want  v1beta1.FlinkApplicationPhase
	}{
		{"waits not known to the operator", false, v1beta1.PhaseDeployFailed},
		{"waits measured by the queue", true, v1beta1.PhaseRunning},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			// The job needs several passes to run stable, so that their waits add up past the deadline.
			w.env.Config.JobStabilizationPeriod.Duration = 25 * time.Second
			w.env.Config.ReadinessTimeout.Duration = 20 * time.Second
			w.create(wordcount("wc"))
			late := 8 * time.Second
			for i := 0; i < 100; i++ {
				w.settle()
				ctx := context.Background()
				if c.noted {
					ctx = withQueueWait(ctx, w.clock.Now().Add(-late), w.clock.Now())
				}
				_, _ = w.env.Reconcile(ctx, ns, "wc")
				if p := w.get("wc").Status.Phase; p == v1beta1.PhaseRunning || p == v1beta1.PhaseDeployFailed {
					break
				}
				w.clock.Step(late)
			}
			app := w.get("wc")
			assert.Equal(t, c.want, app.Status.Phase, app.Status.Reason)
		})
	}
}

// A job that fails over turns Red with an Event, and back to Green once it runs again for a while;
// the JobHealthy condition follows. Events come on changes only, not at every poll.
func TestAJobThatFailsOverTurnsRedWithAnEvent(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	w.imageFaults[app.Spec.Image] = flinksim.Faults{RestartJobsEvery: 2 * time.Minute}
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.events()
	sawRed := false
	for end := w.clock.Now().Add(4 * time.Minute); w.clock.Now().Before(end); {
		w.settle()
		_, _ = w.env.Reconcile(context.Background(), ns, "wc")
		got := w.get("wc")
		c := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionJobHealthy)
		require.NotNil(t, c)
		if got.Status.JobStatus.Health == v1beta1.Red {
			sawRed = true
			assert.Equal(t, metav1.ConditionFalse, c.Status)
			assert.Equal(t, "JobRestarting", c.Reason)
		}
		w.clock.Step(w.env.Config.StatusPollInterval.Duration)
	}
	assert.True(t, sawRed, "the job failed over and was shown Red")
	changes := 0
	for _, e := range w.events() {
		if strings.Contains(e, "JobHealthChanged") {
			changes++
		}
	}
	assert.GreaterOrEqual(t, changes, 2, "Green to Red and back")
	assert.LessOrEqual(t, changes, 4, "an Event per change, not per poll (24 polls)")
	final := w.get("wc")
	if final.Status.JobStatus.Health == v1beta1.Green {
		c := meta.FindStatusCondition(final.Status.Conditions, v1beta1.ConditionJobHealthy)
		assert.Equal(t, metav1.ConditionTrue, c.Status)
	}
}
