package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A new savepointTriggerNonce takes one savepoint of the running job, which keeps running, however
// often the operator restarts meanwhile; a periodic schedule takes them on time; an update's
// savepoint is recorded beside them.
func TestSavepointsOnDemandAndOnSchedule(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	jm := w.jm(old, old.Status.DeployHash)
	jobID := old.Status.JobStatus.JobID

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "first" })
	for i := 0; i < 30 && len(w.get("wc").Status.Savepoints) == 0; i++ {
		_, _ = w.reconcile("wc")
		w.restartOperator() // a restart between any two passes takes no second savepoint
	}
	app := w.get("wc")
	require.Len(t, app.Status.Savepoints, 1)
	r := app.Status.Savepoints[0]
	assert.Equal(t, v1beta1.SavepointManual, r.Trigger)
	assert.Equal(t, "Completed", r.Result)
	assert.Contains(t, r.Path, "savepoint-")
	assert.Equal(t, v1beta1.Nonce("first"), app.Status.SavepointTriggerNonce)
	assert.Equal(t, 1, jm.SavepointTriggers())
	assert.Equal(t, jobID, app.Status.JobStatus.JobID, "the job keeps running")
	assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.PeriodicSavepoint = &v1beta1.PeriodicSchedule{IntervalSeconds: 60}
	})
	for end := w.clock.Now().Add(3*time.Minute + 30*time.Second); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	periodic := 0
	for _, r := range w.get("wc").Status.Savepoints {
		if r.Trigger == v1beta1.SavepointPeriodic && r.Result == "Completed" {
			periodic++
		}
	}
	assert.GreaterOrEqual(t, periodic, 3, "one a minute")
	assert.LessOrEqual(t, periodic, 4)

	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.PeriodicSavepoint = nil
		a.Spec.Image = "flink-wordcount:2"
	})
	updated := w.runUntil("wc", "updated", upgradedFrom(old))
	last := updated.Status.Savepoints[len(updated.Status.Savepoints)-1]
	assert.Equal(t, v1beta1.SavepointUpgrade, last.Trigger)
	assert.LessOrEqual(t, len(updated.Status.Savepoints), v1beta1.MaxSavepoints)
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
}

// A retention of two keeps the last two savepoints in status and disposes of the older ones through
// Flink, never the one the running job was restored from.
func TestSavepointRetentionDisposesOfOlderSavepoints(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.SavepointRetention = &v1beta1.SavepointRetention{Keep: 2, DisposeOlder: true}
	})
	var paths []string
	for i, nonce := range []string{"a", "b", "c", "d"} {
		w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = v1beta1.Nonce(nonce) })
		for j := 0; j < 40 && len(w.get("wc").Status.Savepoints) < min(i+1, 2) || w.get("wc").Status.SavepointTriggerNonce != v1beta1.Nonce(nonce) || w.get("wc").Status.SavepointTriggerID != ""; j++ {
			_, _ = w.reconcile("wc")
		}
		st := w.get("wc").Status
		paths = append(paths, st.Savepoints[len(st.Savepoints)-1].Path)
	}
	for j := 0; j < 5; j++ {
		_, _ = w.reconcile("wc")
	}
	st := w.get("wc").Status
	require.Len(t, st.Savepoints, 2)
	assert.Equal(t, paths[2:], []string{st.Savepoints[0].Path, st.Savepoints[1].Path})
	assert.False(t, w.storage.Exists(paths[0]), "disposed of")
	assert.False(t, w.storage.Exists(paths[1]), "disposed of")
	assert.True(t, w.storage.Exists(paths[3]), "the newest stays")
	assert.Contains(t, eventReasons(w.events()), "SavepointDisposed")
}
