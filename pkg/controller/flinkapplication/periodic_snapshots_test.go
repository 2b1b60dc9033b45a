package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// everyTwoMinutes is a cron schedule whose times tell it from an interval: the even minutes of the
// operator's clock (time.Local), whatever time the job started.
const everyTwoMinutes = "*/2 * * * *"

// scheduleTimes are the even minutes of the local clock in (from, to].
func scheduleTimes(from, to time.Time) []time.Time {
	var out []time.Time
	for t := from.Truncate(time.Minute).Add(time.Minute); !t.After(to); t = t.Add(time.Minute) {
		if t.In(time.Local).Minute()%2 == 0 {
			out = append(out, t)
		}
	}
	return out
}

// triggerTimes are the trigger times of the ledger's entries of a purpose, oldest first.
func triggerTimes(app *v1beta1.FlinkApplication, purpose v1beta1.SavepointPurpose) []time.Time {
	var out []time.Time
	for _, e := range app.Status.Ledger {
		if e.Purpose == purpose && e.TriggerTime != nil {
			out = append(out, e.TriggerTime.Time)
		}
	}
	return out
}

// runFor reconciles for d of simulated time.
func (w *world) runFor(name string, d time.Duration) {
	for end := w.clock.Now().Add(d); w.clock.Now().Before(end); {
		_, _ = w.reconcile(name)
	}
}

// assertTakenAt checks that one snapshot was asked for at each schedule time, within the few passes
// that follow it.
func assertTakenAt(t *testing.T, want, got []time.Time) {
	t.Helper()
	require.Len(t, got, len(want), "one snapshot per schedule time: want %v, got %v", want, got)
	for i := range want {
		assert.False(t, got[i].Before(want[i]), "never before its time: %s for %s", got[i], want[i])
		assert.Less(t, got[i].Sub(want[i]), 5*time.Second, "on time: %s for %s", got[i], want[i])
	}
}

func countReason(events []string, reason string) (n int, messages []string) {
	for _, e := range events {
		if f := strings.Fields(e); len(f) >= 2 && f[1] == reason {
			n++
			messages = append(messages, e)
		}
	}
	return n, messages
}

// A cron schedule takes one savepoint at each of its times, measured on the operator's clock, and
// none between them; the job keeps running.
func TestACronScheduleTakesOneSavepointAtEachOfItsTimes(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.PeriodicSavepoint = &v1beta1.PeriodicSchedule{Schedule: everyTwoMinutes}
	})
	stableAt := app.Status.Deployments.Stable.StableTime.Time
	w.runFor("wc", 9*time.Minute)

	app = w.get("wc")
	assertTakenAt(t, scheduleTimes(stableAt, w.clock.Now().Add(-5*time.Second)), triggerTimes(app, v1beta1.SavepointPeriodic))
	for _, e := range app.Status.Ledger {
		if e.Purpose == v1beta1.SavepointPeriodic && e.Result != v1beta1.StatePending {
			assert.Equal(t, v1beta1.StateCompleted, e.Result, e.Reason)
		}
	}
	assert.Equal(t, app.Status.JobStatus.JobID, w.get("wc").Status.JobStatus.JobID)
	assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)
}

// Times that pass while the operator is away are taken as one savepoint when it is back, never as a
// burst; times that pass while the job does not run (suspended) are not made up at all.
func TestMissedScheduleTimesAreNotMadeUp(t *testing.T) {
	w := newWorld(t)
	runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.PeriodicSavepoint = &v1beta1.PeriodicSchedule{Schedule: everyTwoMinutes}
	})
	w.runFor("wc", 3*time.Minute)
	before := len(triggerTimes(w.get("wc"), v1beta1.SavepointPeriodic))
	require.Positive(t, before)

	w.downFor(7 * time.Minute) // three or four schedule times
	back := w.clock.Now()
	w.runFor("wc", 10*time.Second)
	got := triggerTimes(w.get("wc"), v1beta1.SavepointPeriodic)
	require.Len(t, got, before+1, "one savepoint for the times missed while the operator was away")
	assert.Less(t, got[before].Sub(back), 2*time.Second, "taken as soon as the operator is back")
	next := scheduleTimes(back, back.Add(2*time.Minute))[0]
	w.runFor("wc", next.Sub(w.clock.Now())+5*time.Second)
	got = triggerTimes(w.get("wc"), v1beta1.SavepointPeriodic)
	assertTakenAt(t, []time.Time{next}, got[before+1:])

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
	w.runUntilPhase("wc", v1beta1.PhaseSuspended)
	w.runFor("wc", 5*time.Minute)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateRunning })
	resumed := w.runUntil("wc", "resumed and stable", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.Deployments.Stable != nil &&
			a.Status.Deployments.Stable.StableTime != nil && a.Status.Deployments.Stable.StableTime.After(back.Add(3*time.Minute))
	})
	stableAt := resumed.Status.Deployments.Stable.StableTime.Time
	taken := len(triggerTimes(resumed, v1beta1.SavepointPeriodic))
	w.runFor("wc", 5*time.Minute)
	assertTakenAt(t, scheduleTimes(stableAt, w.clock.Now().Add(-5*time.Second)), triggerTimes(w.get("wc"), v1beta1.SavepointPeriodic)[taken:])
}

// A schedule the operator cannot read is said once per spec generation, naming the field, and
// takes nothing; the job runs on untouched.
func TestAnUnreadableScheduleWarnsAndTakesNothing(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.PeriodicSavepoint = &v1beta1.PeriodicSchedule{Schedule: "every day at noon"}
		s.PeriodicCheckpoint = &v1beta1.PeriodicSchedule{Schedule: "61 * * * *"}
	})
	w.runFor("wc", 3*time.Minute)
	n, messages := countReason(w.events(), "InvalidSchedule")
	assert.Equal(t, 2, n, "once for each field: %v", messages)
	assert.Contains(t, strings.Join(messages, "\n"), `spec.periodicSavepoint.schedule "every day at noon"`)
	assert.Contains(t, strings.Join(messages, "\n"), `spec.periodicCheckpoint.schedule "61 * * * *"`)

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.PeriodicCheckpoint = &v1beta1.PeriodicSchedule{Schedule: "0 0 30 2 *"} // February 30th
	})
	w.runFor("wc", time.Minute)
	n, messages = countReason(w.events(), "InvalidSchedule")
	assert.Equal(t, 2, n, "said again for the new generation: %v", messages)
	assert.Contains(t, strings.Join(messages, "\n"), "names no time")

	app := w.get("wc")
	assert.Empty(t, triggerTimes(app, v1beta1.SavepointPeriodic))
	assert.Empty(t, triggerTimes(app, v1beta1.PeriodicCheckpoint))
	assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID, "the job keeps running")
	assert.Nil(t, app.Status.LastSeenError)
}

// The Running phase comes back for the next scheduled snapshot however long its usual poll is.
func TestRunningWakesForTheNextScheduledSnapshot(t *testing.T) {
	w := newWorld(t)
	w.env.Config.StatusPollInterval.Duration = 10 * time.Minute
	runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.PeriodicSavepoint = &v1beta1.PeriodicSchedule{Schedule: "* * * * *"}
	})
	checked := 0
	for end := w.clock.Now().Add(3 * time.Minute); w.clock.Now().Before(end); {
		now := w.clock.Now()
		after, err := w.reconcile("wc")
		require.NoError(t, err)
		if w.get("wc").Status.Phase != v1beta1.PhaseRunning {
			continue
		}
		next := now.Truncate(time.Minute).Add(time.Minute)
		assert.Positive(t, after)
		assert.LessOrEqual(t, after, next.Sub(now), "at %s", now)
		checked++
	}
	assert.Greater(t, checked, 100)
	assert.GreaterOrEqual(t, len(triggerTimes(w.get("wc"), v1beta1.SavepointPeriodic)), 3)
}

// Periodic checkpoints are triggered and followed as manual ones are, recorded in the ledger under
// their own purpose, never listed as savepoints, never disposed of, and never push a savepoint out
// of savepointRetention.
func TestPeriodicCheckpointsAreLedgerCheckpointsNeverDisposedOf(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.SavepointRetention = &v1beta1.SavepointRetention{Keep: 1, DisposeOlder: true}
	})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "kept" })
	app := w.runUntil("wc", "the manual savepoint", func(a *v1beta1.FlinkApplication) bool { return len(a.Status.Savepoints) == 1 })
	savepoint := app.Status.Savepoints[0].Path

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.PeriodicCheckpoint = &v1beta1.PeriodicSchedule{IntervalSeconds: 60}
	})
	seen := map[string]v1beta1.StateEntry{}
	for end := w.clock.Now().Add(3*time.Minute + 30*time.Second); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
		for _, e := range w.get("wc").Status.Ledger {
			if e.Purpose == v1beta1.PeriodicCheckpoint && e.Result != v1beta1.StatePending {
				seen[e.TriggerID] = e
			}
		}
	}
	assert.GreaterOrEqual(t, len(seen), 3, "one a minute")
	assert.LessOrEqual(t, len(seen), 4)
	for _, e := range seen {
		assert.Equal(t, v1beta1.StateCompleted, e.Result, e.Reason)
		assert.Contains(t, e.Path, "chk-")
		assert.Equal(t, old.Status.JobStatus.JobID, e.JobID)
	}

	app = w.get("wc")
	require.Len(t, app.Status.Savepoints, 1, "status.savepoints lists savepoints only")
	assert.Equal(t, savepoint, app.Status.Savepoints[0].Path, "checkpoints do not count against savepointRetention")
	assert.True(t, w.storage.Exists(savepoint), "nor get a savepoint disposed of")
	assert.NotContains(t, app.Status.SavepointPath, "chk-")
	events := w.events()
	assert.Contains(t, eventReasons(events), "CheckpointCompleted")
	for _, e := range events {
		if strings.Contains(e, "Dispos") {
			assert.NotContains(t, e, "chk-", "a checkpoint is never disposed of")
		}
	}
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID, "the job keeps running")
}

// A session job takes periodic checkpoints on a cron schedule as an application does, and its
// messages name its own fields.
func TestSessionJobsTakePeriodicCheckpointsAndNameTheirFields(t *testing.T) {
	w, _ := runningJobs(t)
	w.events()
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) {
		j.Spec.Job.PeriodicCheckpoint = &v1beta1.PeriodicSchedule{Schedule: "* * * * *"}
		j.Spec.Job.PeriodicSavepoint = &v1beta1.PeriodicSchedule{Schedule: "@fortnightly"}
	})
	for end := w.clock.Now().Add(150 * time.Second); w.clock.Now().Before(end); {
		w.reconcileSessions()
	}
	var completed int
	for _, e := range w.sessionJob("a").Status.Ledger {
		assert.NotEqual(t, v1beta1.SavepointPeriodic, e.Purpose)
		if e.Purpose == v1beta1.PeriodicCheckpoint && e.Result == v1beta1.StateCompleted {
			completed++
		}
	}
	assert.Positive(t, completed)
	for _, e := range w.sessionJob("b").Status.Ledger {
		assert.NotEqual(t, v1beta1.PeriodicCheckpoint, e.Purpose, "b has no schedule")
	}
	n, messages := countReason(w.events(), "InvalidSchedule")
	require.Equal(t, 1, n, "%v", messages)
	assert.Contains(t, messages[0], `spec.job.periodicSavepoint.schedule "@fortnightly"`)
	w.assertOneJobEach("a", "b")
}
