package flinkapplication

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// lyingJobManagers puts a proxy in front of every JobManager of the world. While lie holds, the
// answers about job `job` say it is in state (GET /jobs/:id) and that its newest completed
// checkpoint is discarded or not, as discarded says (GET /jobs/:id/checkpoints); what the job does
// and where its checkpoints are does not change. Every other answer is Flink's.
type lyingJobManagers struct {
	lie       atomic.Bool
	job       atomic.Value // string
	state     string
	discarded bool
}

func (w *world) lyingJobManagers(state string, discarded bool) *lyingJobManagers {
	l := &lyingJobManagers{state: state, discarded: discarded}
	l.job.Store("")
	proxy := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		job, _ := l.job.Load().(string)
		if !l.lie.Load() || r.Method != http.MethodGet || job == "" {
			w.route(rw, r)
			return
		}
		rec := httptest.NewRecorder()
		w.route(rec, r)
		body := rec.Body.Bytes()
		switch {
		case strings.HasSuffix(r.URL.Path, "/jobs/"+job) && rec.Code == http.StatusOK:
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				m["state"] = l.state
				body, _ = json.Marshal(m)
			}
		case strings.HasSuffix(r.URL.Path, "/jobs/"+job+"/checkpoints") && rec.Code == http.StatusOK:
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				if latest, ok := m["latest"].(map[string]any); ok {
					if c, ok := latest["completed"].(map[string]any); ok {
						c["discarded"] = l.discarded
					}
				}
				body, _ = json.Marshal(m)
			}
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				rw.Header()[k] = v
			}
		}
		rw.WriteHeader(rec.Code)
		_, _ = rw.Write(body)
	}))
	w.t.Cleanup(func() {
		proxy.CloseClientConnections()
		proxy.Close()
	})
	w.env.FlinkURL = func(namespace, service string, _ int32) string {
		return proxy.URL + "/" + namespace + "/" + service
	}
	return l
}

// discardMarked tells whether the ledger holds a checkpoint entry of the job marked discarded.
func discardMarked(a *v1beta1.FlinkApplication, jobID string) bool {
	for _, e := range a.Status.Ledger {
		if e.JobID == jobID && e.Discarded != nil {
			return true
		}
	}
	return false
}

// A hostile JobManager: for one look it says that a running job FAILED and that its newest
// checkpoint is discarded, then tells the truth again (the job RUNNING, its checkpoints as they
// are). Kept, the mark the lie left in status.ledger had a JobManager that restarts without HA
// before a newer checkpoint is recorded send the job back to the older savepoint, while the
// checkpoint the operator had recorded (and newer ones) were all still in storage (attack review
// of the discard record). Flink's later word disputes the mark: the job is not sent from older
// state, and the user names the state to start from.
func TestAJobManagersOneLieThatCheckpointsAreDiscardedRewindsTheJob(t *testing.T) {
	w := newWorld(t)
	lies := w.lyingJobManagers("FAILED", true)
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig[flink.CheckpointRetentionKey] = "RETAIN_ON_CANCELLATION"
		s.FlinkConfig["state.checkpoints.num-retained"] = "100"
	})
	saved := manualSavepoint(t, w, "wc", "n1")
	savedBy := w.clock.Now()
	w.runFor("wc", 3*time.Minute)
	jobID := w.get("wc").Status.JobStatus.JobID
	recorded, recordedAt := w.recordedCheckpointAt("wc")
	require.NotEmpty(t, recorded)
	require.True(t, recordedAt.After(savedBy), "checkpoint %s at %s is newer than the savepoint", recorded, recordedAt)

	lies.job.Store(jobID)
	lies.lie.Store(true)
	w.runUntil("wc", "the lie kept in the ledger", func(a *v1beta1.FlinkApplication) bool { return discardMarked(a, jobID) })
	lies.lie.Store(false)
	w.runUntil("wc", "the job shown RUNNING again", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.State == v1beta1.JobRunning
	})
	require.True(t, w.storage.Exists(recorded), "%s is still there: the job never ended", recorded)

	w.jm(app, app.Status.DeployHash).Crash()
	w.runUntil("wc", "a job started again, or the application given up", func(a *v1beta1.FlinkApplication) bool {
		j, _, _ := firstRestoreAfter(w, "wc", jobID)
		return j.JobID != "" || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	j, restored, exists := firstRestoreAfter(w, "wc", jobID)
	if j.JobID == "" {
		// Flink took its word back before it restarted: which word was true only storage can say,
		// and the user names the state.
		got := w.get("wc")
		assert.Contains(t, got.Status.Reason, "only its storage can say", "phase %s", got.Status.Phase)
		return
	}
	assert.True(t, exists)
	assert.NotEqual(t, saved, j.RestoredFrom, "job %s went back to the savepoint %s taken before checkpoint %s, which is still in storage",
		j.JobID, saved, recorded)
	assert.False(t, restored.Savepoint, "restored from %s", j.RestoredFrom)
}

// Flink's word that a FAILED job's checkpoints are discarded is in its checkpoint statistics. A
// JobManager that fails those reads (500s between the job's failure and its own restart) and then
// restarts without HA never says it: the job's configuration (NO_EXTERNALIZED_CHECKPOINTS) and
// Flink's details of this very job (FAILED) say it instead. Once the user sets restartFailedJob,
// the job starts from the savepoint that is left, not from the recorded checkpoint Flink discarded
// (attack review of the discard record).
func TestAFailedJobsDiscardedCheckpointsAreNotRestoredWhenTheOneLookAtThemFailed(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig[flink.CheckpointRetentionKey] = "NO_EXTERNALIZED_CHECKPOINTS"
	})
	saved := manualSavepoint(t, w, "wc", "n1")
	savedBy := w.clock.Now()
	w.runFor("wc", 3*time.Minute)
	jobID := w.get("wc").Status.JobStatus.JobID
	recorded, recordedAt := w.recordedCheckpointAt("wc")
	require.NotEmpty(t, recorded)
	require.True(t, recordedAt.After(savedBy), "checkpoint %s at %s is newer than the savepoint", recorded, recordedAt)
	jm := w.jm(app, app.Status.DeployHash)
	// The checkpoint statistics answer 500 from the failure until the JobManager restarts; the job's
	// details (FAILED) are answered all along.
	jm.SetFaults(flinksim.Faults{FailFirst: map[string]int{flinksim.EndpointCheckpoints: 1000}})
	require.True(t, jm.FailJobNow(jobID))
	w.runUntil("wc", "the job shown FAILED", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.State == v1beta1.JobFailed
	})
	assert.True(t, discardMarked(w.get("wc"), jobID), "no look at the statistics succeeded: the job's configuration says")
	require.False(t, w.storage.Exists(recorded), "Flink discarded %s as the job failed", recorded)
	jm.Crash()
	jm.SetFaults(flinksim.Faults{})
	j, exists := w.restartFailedJob("wc", jobID)
	got := w.get("wc")
	require.NotEmpty(t, j.JobID, "phase %s, reason %q", got.Status.Phase, got.Status.Reason)
	assert.True(t, exists, "job %s started from %s, which Flink discarded", j.JobID, j.RestoredFrom)
	assert.Equal(t, saved, j.RestoredFrom, "what is left of the job's state")
}
