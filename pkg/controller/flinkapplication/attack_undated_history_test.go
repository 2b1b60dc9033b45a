package flinkapplication

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// ledger.DateUndated: "a state of the job they do not list is older than every
// one they do" is false for latest.completed, Flink's newest *checkpoint*, which may be older than
// a savepoint the statistics no longer list. The job checkpoints every 5 minutes and keeps a short
// statistics history (web.checkpoints.history: 1). The statistics fail while the operator takes a
// manual savepoint S: it is read COMPLETED undated. The tenant then takes a savepoint of its own
// through Flink's REST API (S2, which the operator does not know), so Flink's latest.savepoint is
// S2 and its history no longer has S. When the statistics answer again they list chk-1 (taken
// before S) and S2: S is dated 1 ms before chk-1. The JobManager restarts without HA; the
// restore goes back to chk-1, older than the savepoint S the operator took and recorded.
func TestAnUndatedSavepointIsNotPutBeforeACheckpointOlderThanIt(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig["execution.checkpointing.interval"] = "300s"
		s.FlinkConfig["state.checkpoints.num-retained"] = "100"
		s.FlinkConfig["web.checkpoints.history"] = "1"
	})
	jm := w.jm(app, app.Status.DeployHash)
	jobID := w.get("wc").Status.JobStatus.JobID
	// chk-1 completes and is recorded.
	w.runUntil("wc", "a checkpoint recorded", func(a *v1beta1.FlinkApplication) bool { return a.Status.JobStatus.LastCheckpointPath != "" })
	w.runFor("wc", 10*time.Second)
	chk, _ := w.recordedCheckpointAt("wc")
	require.NotEmpty(t, chk)

	got, saved := manualSavepointWhileTheStatisticsFail(w, jm, "wc", "n1")
	logLedger(t, got)

	// The tenant's own savepoint, through Flink's REST API.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/jobs/"+jobID+"/savepoints", strings.NewReader(`{"cancel-job":false}`))
	req.Header.Set("Content-Type", "application/json")
	jm.Handler().ServeHTTP(rec, req)
	require.Less(t, rec.Code, 300, rec.Body.String())
	w.clock.Step(10 * time.Second)

	jm.SetFaults(flinksim.Faults{})
	w.runFor("wc", 10*time.Second)
	logLedger(t, w.get("wc"))
	sp, ok := w.storage.Get(saved)
	require.True(t, ok)
	c, ok := w.storage.Get(chk)
	require.True(t, ok)
	require.True(t, sp.CreatedAt.After(c.CreatedAt), "the savepoint is newer than the checkpoint")

	jm.Crash()
	w.runUntil("wc", "a job started again, or the application given up", func(a *v1beta1.FlinkApplication) bool {
		j, _, _ := firstRestoreAfter(w, "wc", jobID)
		return j.JobID != "" || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	j, restored, _ := firstRestoreAfter(w, "wc", jobID)
	t.Logf("savepoint %s created %s; checkpoint %s created %s; job %s restored from %s (created %s)", saved, sp.CreatedAt.Format("15:04:05.000"),
		chk, c.CreatedAt.Format("15:04:05.000"), j.JobID, j.RestoredFrom, restored.CreatedAt.Format("15:04:05.000"))
	require.NotEmpty(t, j.JobID)
	assert.False(t, restored.CreatedAt.Before(sp.CreatedAt), "job %s went back to %s, older than savepoint %s the operator recorded", j.JobID, j.RestoredFrom, saved)
}
