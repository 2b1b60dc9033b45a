package flinkapplication

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func logLedger(t *testing.T, app *v1beta1.FlinkApplication) {
	for _, e := range app.Status.Ledger {
		tt, at := "", ""
		if e.TriggerTime != nil {
			tt = e.TriggerTime.Format("15:04:05.000")
		}
		if e.Time != nil {
			at = e.Time.Format("15:04:05.000")
		}
		t.Logf("ledger %s %s %s trig=%s at=%s path=%s reason=%q", e.Purpose, e.JobID, e.Result, tt, at, e.Path, e.Reason)
	}
}

// A delete with deleteMode Savepoint whose JobManager's statistics fail from the moment the
// savepoint with cancel completes (a hostile or broken JobManager) ends: the savepoint is not held
// pending for Flink's time of it when no checkpoint recorded since its trigger could be newer.
func TestADeleteWithSavepointEndsWhileTheStatisticsFail(t *testing.T) {
	w := newWorld(t)
	w.timings = flinksim.Timings{Savepoint: 40 * time.Second}
	app := wordcount("wc")
	app.Spec.DeleteMode = v1beta1.DeleteModeSavepoint
	w.create(app)
	live := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.clock.Step(25 * time.Second)
	w.passes("wc", 3)
	jm := w.jm(live, live.Status.DeployHash)
	require.NotNil(t, jm)

	w.deleteApp("wc")
	for i := 0; i < 200 && jm.SavepointTriggers() == 0; i++ {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, 1, jm.SavepointTriggers())
	// Checkpoints complete and are read while the savepoint is in progress...
	for end := w.clock.Now().Add(30 * time.Second); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	// ...then the statistics fail, from before the savepoint completes on.
	jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointCheckpoints: 1}})
	deadline := w.clock.Now().Add(2 * time.Hour)
	for w.clock.Now().Before(deadline) && hasFinalizer(w.get("wc")) {
		_, _ = w.reconcile("wc")
	}
	got := w.get("wc")
	logLedger(t, got)
	t.Logf("phase %s reason %q jobs %+v", got.Status.Phase, got.Status.Reason, jm.Jobs())
	reasons := eventReasons(w.events())
	if len(reasons) > 30 {
		reasons = reasons[len(reasons)-30:]
	}
	t.Logf("events %v", reasons)
	assert.False(t, hasFinalizer(got), "the delete never ends: its job is CANCELED with a completed savepoint, and the finalizer stays for two hours")
}

// A checkpoint Flink took after a savepoint, while its statistics failed, is recorded only once
// they answer again, after the savepoint was read completed and dated then: the statistics that
// record it date the savepoint too (ledger.DateUndated), and a JobManager that restarts without HA
// sends the job back to the newer checkpoint, not to the savepoint.
func TestACheckpointRecordedAfterAnUndatedSavepointOutranksIt(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig["execution.checkpointing.interval"] = "60s"
		s.FlinkConfig["state.checkpoints.num-retained"] = "100"
	})
	w.runFor("wc", 90*time.Second)
	jm := w.jm(app, app.Status.DeployHash)
	jobID := w.get("wc").Status.JobStatus.JobID

	// A manual savepoint; the checkpoint statistics fail from before it is sent.
	_, saved := manualSavepointWhileTheStatisticsFail(w, jm, "wc", "n1")
	sp, ok := w.storage.Get(saved)
	require.True(t, ok)
	// The statistics answer again; the checkpoint Flink took after the savepoint is recorded.
	jm.SetFaults(flinksim.Faults{})
	w.runFor("wc", 5*time.Second)
	recorded, recordedAt := w.recordedCheckpointAt("wc")
	c, ok := w.storage.Get(recorded)
	require.True(t, ok)
	logLedger(t, w.get("wc"))
	t.Logf("savepoint %s created %s; checkpoint %s created %s (recorded at %s)", saved, sp.CreatedAt.Format("15:04:05.000"),
		recorded, c.CreatedAt.Format("15:04:05.000"), recordedAt.Format("15:04:05.000"))
	require.True(t, c.CreatedAt.After(sp.CreatedAt), "the recorded checkpoint is newer than the savepoint")

	jm.Crash()
	w.runUntil("wc", "a job started again, or the application given up", func(a *v1beta1.FlinkApplication) bool {
		j, _, _ := firstRestoreAfter(w, "wc", jobID)
		return j.JobID != "" || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	j, restored, _ := firstRestoreAfter(w, "wc", jobID)
	t.Logf("job %s restored from %s (created %s); phase %s", j.JobID, j.RestoredFrom, restored.CreatedAt.Format("15:04:05.000"), w.get("wc").Status.Phase)
	require.NotEmpty(t, j.JobID)
	assert.False(t, restored.CreatedAt.Before(c.CreatedAt), "job %s went back to %s, older than checkpoint %s the job completed", j.JobID, j.RestoredFrom, recorded)
}

// manualSavepointWhileTheStatisticsFail takes a manual savepoint of the application while its
// JobManager fails every read of the checkpoint statistics, so that Flink never dates it, and
// returns the application once the savepoint completed, and the savepoint's path.
func manualSavepointWhileTheStatisticsFail(w *world, jm *flinksim.JobManager, name, nonce string) (*v1beta1.FlinkApplication, string) {
	jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointCheckpoints: 1}})
	w.update(name, func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = v1beta1.Nonce(nonce) })
	got := w.runUntil(name, "savepoint "+nonce, func(a *v1beta1.FlinkApplication) bool {
		return a.Status.SavepointTriggerNonce == v1beta1.Nonce(nonce) && len(a.Status.Savepoints) > 0 &&
			a.Status.Savepoints[len(a.Status.Savepoints)-1].Result == "Completed"
	})
	return got, got.Status.Savepoints[len(got.Status.Savepoints)-1].Path
}

// rewriteGETAnswers puts a proxy between the operator and every JobManager that rewrites the JSON
// answers of the GETs whose path matches, as a JobManager that lies (or whose clock is off) would.
func (w *world) rewriteGETAnswers(t *testing.T, path *regexp.Regexp, rewrite func(map[string]any)) {
	proxy := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !path.MatchString(r.URL.Path) {
			w.route(rw, r)
			return
		}
		rec := httptest.NewRecorder()
		w.route(rec, r)
		body := rec.Body.Bytes()
		var m map[string]any
		if rec.Code == http.StatusOK && json.Unmarshal(body, &m) == nil {
			rewrite(m)
			body, _ = json.Marshal(m)
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				rw.Header()[k] = v
			}
		}
		rw.WriteHeader(rec.Code)
		_, _ = rw.Write(body)
	}))
	t.Cleanup(func() { proxy.CloseClientConnections(); proxy.Close() })
	w.env.FlinkURL = func(namespace, service string, _ int32) string { return proxy.URL + "/" + namespace + "/" + service }
}
