package flinkapplication

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

var testRunBefore, testGap = 200, 20

var checkpointsPath = regexp.MustCompile(`/jobs/[0-9a-f]{32}/checkpoints$`)

// shiftTimestamps adds d to every *_timestamp field of a checkpoint statistics answer.
func shiftTimestamps(v any, d int64) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if f, ok := e.(float64); ok && f > 0 && (k == "trigger_timestamp" || k == "latest_ack_timestamp" || k == "restore_timestamp") {
				x[k] = f + float64(d)
				continue
			}
			shiftTimestamps(e, d)
		}
	case []any:
		for _, e := range x {
			shiftTimestamps(e, d)
		}
	}
}

// ledger.DateUndated: a savepoint read COMPLETED while the statistics failed is
// dated when it was read, "no earlier than Flink took it". When the statistics answer, DateUndated
// takes Flink's time for it even when that is LATER than the read (a JobManager clock ahead of the
// operator's), capped only by now: the savepoint moves forward to the pass that reads the
// statistics, the very time the checkpoint Flink took after it is recorded at (TakenByFlink caps it
// at now too). The two tie, and the savepoint wins: the JobManager restarts without HA and the job
// goes back to the savepoint, older than the checkpoint. The savepoint must stay at its read
// time, and the checkpoint win.
func TestAnUndatedSavepointIsNeverDatedLaterThanItWasReadCompleted(t *testing.T) {
	w := newWorld(t)
	ahead := time.Hour.Milliseconds()
	w.rewriteGETAnswers(t, checkpointsPath, func(m map[string]any) { shiftTimestamps(m, ahead) })

	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig["execution.checkpointing.interval"] = "60s"
		s.FlinkConfig["state.checkpoints.num-retained"] = "100"
	})
	w.runFor("wc", time.Duration(testRunBefore)*time.Second)
	jm := w.jm(app, app.Status.DeployHash)
	jobID := w.get("wc").Status.JobStatus.JobID

	got, saved := manualSavepointWhileTheStatisticsFail(w, jm, "wc", "n1")
	logLedger(t, got)
	readAt := time.Time{}
	for _, e := range got.Status.Ledger {
		if e.Path == saved && e.Time != nil {
			readAt = e.Time.Time
		}
	}
	sp, ok := w.storage.Get(saved)
	require.True(t, ok)
	w.clock.Step(time.Duration(testGap) * time.Second)
	jm.SetFaults(flinksim.Faults{})
	w.runFor("wc", 5*time.Second)
	if bp, bat := w.recordedCheckpointAt("wc"); true {
		t.Logf("recorded %s at %s; status lastCheckpoint %s", bp, bat.Format("15:04:05.000"), w.get("wc").Status.JobStatus.LastCheckpointPath)
	}
	recorded, _ := w.recordedCheckpointAt("wc")
	c, ok := w.storage.Get(recorded)
	require.True(t, ok)
	after := w.get("wc")
	logLedger(t, after)
	for _, e := range after.Status.Ledger {
		if e.Path == saved && e.Time != nil {
			assert.False(t, e.Time.After(readAt), "savepoint dated %s, after its completion was read (%s)", e.Time.Format("15:04:05"), readAt.Format("15:04:05"))
		}
	}
	require.True(t, c.CreatedAt.After(sp.CreatedAt), "the recorded checkpoint is newer than the savepoint")

	jm.Crash()
	w.runUntil("wc", "a job started again, or the application given up", func(a *v1beta1.FlinkApplication) bool {
		j, _, _ := firstRestoreAfter(w, "wc", jobID)
		return j.JobID != "" || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	j, restored, _ := firstRestoreAfter(w, "wc", jobID)
	t.Logf("savepoint %s created %s; checkpoint %s created %s; job %s restored from %s", saved, sp.CreatedAt.Format("15:04:05.000"),
		recorded, c.CreatedAt.Format("15:04:05.000"), j.JobID, j.RestoredFrom)
	require.NotEmpty(t, j.JobID)
	assert.False(t, restored.CreatedAt.Before(c.CreatedAt), "job %s went back to %s, older than checkpoint %s the job completed", j.JobID, j.RestoredFrom, recorded)
}
