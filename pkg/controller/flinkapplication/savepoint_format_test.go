package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// savepointFormats are the formats Flink wrote the ledger's completed savepoints of the purpose in.
func (w *world) savepointFormats(app *v1beta1.FlinkApplication, purpose v1beta1.SavepointPurpose) []string {
	var out []string
	for _, e := range app.Status.Ledger {
		if e.Purpose == purpose && e.Result == v1beta1.StateCompleted {
			snap, ok := w.storage.Get(e.Path)
			require.True(w.t, ok, "savepoint %s is in storage", e.Path)
			out = append(out, snap.Format)
		}
	}
	return out
}

// savepointFormatType Native reaches Flink with every savepoint the operator takes: a periodic one
// of the running job, and the upgrade's savepoint with cancel.
func TestNativeSavepointsForPeriodicAndUpgradeSavepoints(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.SavepointFormatType = v1beta1.SavepointFormatNative
		s.PeriodicSavepoint = &v1beta1.PeriodicSchedule{IntervalSeconds: 60}
	})
	w.runUntil("wc", "a periodic savepoint", func(a *v1beta1.FlinkApplication) bool {
		return len(w.savepointFormats(a, v1beta1.SavepointPeriodic)) > 0
	})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))

	periodic, upgrade := w.savepointFormats(app, v1beta1.SavepointPeriodic), w.savepointFormats(app, v1beta1.SavepointUpgrade)
	require.NotEmpty(t, periodic)
	require.Len(t, upgrade, 1)
	for _, f := range append(periodic, upgrade...) {
		assert.Equal(t, "NATIVE", f)
	}
	n, _ := countReason(w.events(), "SavepointFormatUnavailable")
	assert.Zero(t, n, "Flink 1.20 takes it")
}

// Flink 1.14 has no savepoint format: none is sent (it would refuse the savepoint), the savepoints
// are its only format, canonical, and a Warning says so once per spec generation.
func TestNativeFormatIsNotSentToFlink114(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkVersion = "1.14"
		s.SavepointFormatType = v1beta1.SavepointFormatNative
		s.PeriodicSavepoint = &v1beta1.PeriodicSchedule{IntervalSeconds: 60}
	})
	w.runFor("wc", 2*time.Minute+30*time.Second)
	app := w.get("wc")
	formats := w.savepointFormats(app, v1beta1.SavepointPeriodic)
	require.GreaterOrEqual(t, len(formats), 2, "the savepoints are taken: %+v", app.Status.Ledger)
	for _, f := range formats {
		assert.Equal(t, "CANONICAL", f)
	}
	assert.Equal(t, "1.14.0", w.jm(app, app.Status.DeployHash).Release())
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID, "the job keeps running")
	n, messages := countReason(w.events(), "SavepointFormatUnavailable")
	require.Equal(t, 1, n, "%v", messages)
	assert.Contains(t, messages[0], "spec.savepointFormatType is Native, which Flink 1.14 cannot take")
}
