package flinkapplication

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// Attack review s5 (7d50d71, 3d15c88, 228d9f5, the clusters refactor). Each test below that is
// skipped reproduces a defect on 228d9f5: remove its t.Skip line to see it fail.

// skewedClock makes the JobManagers of services that skew names answer every time they report
// (trigger_timestamp, latest_ack_timestamp) moved by a fixed amount: a JobManager whose clock is
// off, or a hostile one that says what it likes.
type skewedClock struct {
	mu   sync.Mutex
	skew func(service string) time.Duration
}

func (s *skewedClock) set(f func(service string) time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skew = f
}

func (s *skewedClock) of(service string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.skew == nil {
		return 0
	}
	return s.skew(service)
}

// skewJobManagerClocks wraps the world's JobManager routes in a skewedClock.
func (w *world) skewJobManagerClocks() *skewedClock {
	s := &skewedClock{}
	inner := w.server.Config.Handler
	w.server.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
		skew := time.Duration(0)
		if len(parts) >= 2 {
			skew = s.of(parts[1])
		}
		if skew == 0 || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/checkpoints") {
			inner.ServeHTTP(rw, r)
			return
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var v interface{}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if rec.Code == http.StatusOK && dec.Decode(&v) == nil {
			shiftTimes(v, skew.Milliseconds())
			if b, err := json.Marshal(v); err == nil {
				body = b
			}
		}
		for k, vs := range rec.Header() {
			if k != "Content-Length" {
				rw.Header()[k] = vs
			}
		}
		rw.WriteHeader(rec.Code)
		_, _ = rw.Write(body)
	})
	return s
}

func shiftTimes(v interface{}, ms int64) {
	switch x := v.(type) {
	case map[string]interface{}:
		for k, e := range x {
			if n, ok := e.(json.Number); ok && (k == "trigger_timestamp" || k == "latest_ack_timestamp") {
				if i, err := n.Int64(); err == nil && i > 0 {
					x[k] = json.Number(jsonInt(i + ms))
				}
				continue
			}
			shiftTimes(e, ms)
		}
	case []interface{}:
		for _, e := range x {
			shiftTimes(e, ms)
		}
	}
}

func jsonInt(i int64) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// 7d50d71 records the failed attempt's newest checkpoint in the ledger with the time the attempt's
// JobManager gives it, unbounded (ledger.Complete bounds a savepoint's time by now; Record does
// not), and names it as the stable record's restore path. The rollback's job starts from it, and
// jobstate.Job.StartedFrom (3d15c88: RecordedTimeOf, the ledger first) dates what that job started from by that
// time. An attempt's JobManager an hour ahead (a wrong clock, or the failed image saying so) makes
// the checkpoint the rollback started from newer than every checkpoint the rolled-back job
// completes in its first hour: when that job is lost with its JobManager, the restore rule goes
// back to the attempt's checkpoint, older state than the newest the lost job completed.
func TestS5AnAttemptsJobManagerAheadInTimeDoesNotMakeARollbacksJobRestoreOlderState(t *testing.T) {
	w := newWorld(t)
	clocks := w.skewJobManagerClocks()
	app := running(t, w, "wc")
	stableSvc := flink.VersionedServiceName(app, app.Status.DeployHash)
	clocks.set(func(service string) time.Duration {
		if service != stableSvc {
			return s5Skew
		}
		return 0
	})

	w.env.Config.JobStabilizationPeriod.Duration = 2 * time.Minute
	w.imageFaults["flink-wordcount:2"] = flinksim.Faults{FailJobsAfter: 45 * time.Second}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	back := w.runUntil("wc", "rolled back", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	require.False(t, strings.HasPrefix(back.Status.Reason, "rollback failed"), "reason %q", back.Status.Reason)
	rolled := back.Status.JobStatus.JobID
	from := back.Status.JobStatus.RestorePath
	require.NotEmpty(t, from)
	at := ledger.Of(&back.Status.Ledger).TimeOf(from)
	t.Logf("the rollback's job %s started from %s, recorded as taken at %s (now %s)", rolled, from, at, w.clock.Now())

	// The user puts the spec back to the one running; the rolled-back job runs and checkpoints on
	// for a few minutes.
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = app.Spec.Image })
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	for i := 0; i < 30; i++ {
		w.clock.Step(10 * time.Second)
		_, _ = w.reconcile("wc")
	}
	cur := w.get("wc")
	rec := ledger.Of(&cur.Status.Ledger).Checkpoint(rolled)
	require.NotNil(t, rec, "the operator recorded a checkpoint of the rolled-back job (ledger %+v)", cur.Status.Ledger)
	newest := rec.Path
	require.Greater(t, chkID(newest), chkID(from), "the rolled-back job checkpointed past %s", from)

	// Its JobManager goes: the job is lost, and starts again from the newest state recorded.
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(cur, cur.Status.DeployHash), metav1.DeleteOptions{}))
	again := w.runUntil("wc", "running again, or failed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != rolled && a.Status.JobStatus.State == v1beta1.JobRunning ||
			a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	t.Logf("phase %s reason %q job %s from %s", again.Status.Phase, again.Status.Reason, again.Status.JobStatus.JobID, again.Status.JobStatus.RestorePath)
	assert.GreaterOrEqual(t, chkID(again.Status.JobStatus.RestorePath), chkID(newest),
		"restored %s, older than %s which the lost job %s completed", again.Status.JobStatus.RestorePath, newest, rolled)
}

// chkID is the checkpoint number of a path Flink names …/chk-N; -1 for any other.
func chkID(path string) int {
	i := strings.LastIndex(path, "/chk-")
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSuffix(path[i+len("/chk-"):], "/"))
	if err != nil {
		return -1
	}
	return n
}

var s5Skew = time.Hour

// haSessionJobSubmitting is an HA session cluster "session" and a session job "a" whose job runs on
// it but has not run stable yet (Submitting), having completed checkpoints.
func haSessionJobSubmitting(t *testing.T) (*world, string, string) {
	return sessionJobSubmitting(t, true)
}

func sessionJobSubmitting(t *testing.T, ha bool) (*world, string, string) {
	w := newWorld(t)
	jar := w.withSessions()
	c := sessionCluster("session")
	if ha {
		c.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
		c.Spec.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/ha"
	}
	w.createSessionCluster(c)
	w.env.Config.JobStabilizationPeriod.Duration = 20 * time.Minute
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState))
	w.runSessionsUntil("a submitted and checkpointing", func() bool {
		j := w.sessionJob("a")
		cand := jobstate.Candidate(&j.Status.JobOwnerStatus)
		if j.Status.Phase != v1beta1.SessionJobSubmitting || cand == nil || cand.JobID == "" {
			return false
		}
		for _, r := range w.jobsOf("session", "a") {
			if r.JobID == cand.JobID && r.AliveFrom().Before(w.clock.Now().Add(-time.Minute)) {
				return true
			}
		}
		return false
	})
	j := w.sessionJob("a")
	return w, jobstate.Candidate(&j.Status.JobOwnerStatus).JobID, w.sessionCluster("session").Status.DeployHash
}

// 228d9f5: a session job in Submitting follows its job while the HA session cluster's JobManager
// is gone under the same hash, but only while the session cluster's spec says HA (haKeepsJobs
// reads c.Spec.FlinkConfig, the spec as it is now, not what the cluster of that hash was deployed
// with). The user changes the session cluster's spec as its JobManager is gone: until the new
// Flink cluster runs, status.deployHash is still the old one, which HA brings back with the job;
// the session job takes its job for gone all the same, waits for the cluster and, in
// handleWaitingForCluster, records a new target without the job id (recordSessionTarget) and
// submits a second job. Checked: never two live jobs of "a", and no job of "a" is started from
// older state than its predecessor completed.
func TestS5ASessionJobDoesNotTakeItsJobForGoneWhenTheHASessionClustersSpecChanges(t *testing.T) {
	for name, change := range map[string]func(*v1beta1.FlinkSessionCluster){
		"HA taken off": func(c *v1beta1.FlinkSessionCluster) {
			delete(c.Spec.FlinkConfig, "high-availability.type")
			delete(c.Spec.FlinkConfig, "high-availability.storageDir")
		},
		"HA kept": func(c *v1beta1.FlinkSessionCluster) { c.Spec.FlinkConfig["execution.checkpointing.interval"] = "11s" },
	} {
		t.Run(name, func(t *testing.T) {
			w, first, hash := haSessionJobSubmitting(t)
			require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerNameOf("session", hash), metav1.DeleteOptions{}))
			// The same moment, the user changes the session cluster's spec.
			w.updateSessionCluster("session", change)
			for i := 0; i < 200; i++ {
				w.reconcileSessions()
			}
			t.Logf("%s", w.describeSessions())
			for _, r := range w.jobsOf("session", "a") {
				t.Logf("job %s on %s from %q alive from %s", r.JobID, r.JobManager, r.RestoredFrom, r.AliveFrom())
			}
			j := w.sessionJob("a")
			t.Logf("first job %s; a's job now %s (phase %s); HA ConfigMaps %v", first, j.Status.JobStatus.JobID, j.Status.Phase, w.haConfigMaps())
			w.assertOneJobEach("a")
			w.assertNoJobOfAStartsBehind(first)
		})
	}
}

// assertNoJobOfAStartsBehind checks that no job of session job "a" after first (a later run, under
// another id or first's own submitted again) started from older state than the newest checkpoint
// of first the operator recorded (or without state when it recorded one).
func (w *world) assertNoJobOfAStartsBehind(first string) {
	w.t.Helper()
	// The newest state of first the operator recorded before a later job started: what it
	// completed after its last record window is known to Flink's storage only, which the operator
	// cannot list. A job submitted again under first's id records under that id too.
	newestBefore := func(start time.Time) int64 {
		newest := int64(-1)
		for _, e := range w.sessionJob("a").Status.Ledger {
			if s, ok := w.storage.Get(e.Path); ok && e.JobID == first && e.Result == v1beta1.StateCompleted &&
				s.CreatedAt.Before(start) && s.CheckpointID > newest {
				newest = s.CheckpointID
			}
		}
		return newest
	}
	for i, r := range w.jobsOf("session", "a") {
		if i == 0 {
			require.Equal(w.t, first, r.JobID)
			continue
		}
		// The lost job ran for a minute, checkpointing every 10 s, past a record window: the next
		// job goes on from a checkpoint of it, and from none older than the newest recorded.
		s, ok := w.storage.Get(r.RestoredFrom)
		if !assert.True(w.t, ok && s.JobID == first, "job %s of a started from %q, not from a checkpoint its predecessor %s completed",
			r.JobID, r.RestoredFrom, first) {
			continue
		}
		newest := newestBefore(r.AliveFrom())
		assert.True(w.t, s.CheckpointID >= newest, "job %s of a started from %q, older than checkpoint %d its predecessor %s completed",
			r.JobID, r.RestoredFrom, newest, first)
	}
}

// The control: the same loss of the JobManager without a spec change, which 228d9f5 fixed.
func TestS5ControlASessionJobFollowsItsJobThroughTheHASessionClustersJobManagerLoss(t *testing.T) {
	w, first, hash := haSessionJobSubmitting(t)
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerNameOf("session", hash), metav1.DeleteOptions{}))
	for i := 0; i < 200; i++ {
		w.reconcileSessions()
	}
	t.Logf("%s", w.describeSessions())
	for _, r := range w.jobsOf("session", "a") {
		t.Logf("job %s on %s from %q alive from %s", r.JobID, r.JobManager, r.RestoredFrom, r.AliveFrom())
	}
	j := w.sessionJob("a")
	t.Logf("first job %s; a's job now %s (phase %s)", first, j.Status.JobStatus.JobID, j.Status.Phase)
	w.assertOneJobEach("a")
	w.assertNoJobOfAStartsBehind(first)
}

// Without HA: the JobManager of the session cluster goes while the session job's job, submitted
// and checkpointing, has not run stable yet. The job is gone with its JobManager (positive
// evidence); the next job must start from the newest checkpoint it completed, which Flink retained
// on storage, not from the state the lost job itself started from.
func TestS5ASessionJobLostInSubmittingWithItsJobManagerGoesOnFromItsCheckpoints(t *testing.T) {
	w, first, hash := sessionJobSubmitting(t, false)
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerNameOf("session", hash), metav1.DeleteOptions{}))
	for i := 0; i < 200; i++ {
		w.reconcileSessions()
	}
	t.Logf("%s", w.describeSessions())
	for _, r := range w.jobsOf("session", "a") {
		t.Logf("job %s on %s from %q alive from %s", r.JobID, r.JobManager, r.RestoredFrom, r.AliveFrom())
	}
	w.assertOneJobEach("a")
	w.assertNoJobOfAStartsBehind(first)
}

// 3d15c88 made restarts in place ask chooseRestoreInPlace, but recoverDeployment's HA branch still
// asks chooseRestore and keeps only its Path: with a savepointRedeployNonce pending the doubt is
// excused (seed 90042's defect, under HA), and without one the choice's Problem is dropped and
// NextRestorePath becomes "". Should HA not have the job (its ConfigMaps were deleted with the
// JobManager Deployment, as a Fleet's JobManager finds nothing), it is submitted again from that
// path: older than the savepoint in doubt.
func TestS5AnHAJobLostWithASavepointInDoubtIsNotRestartedInPlaceBehindIt(t *testing.T) {
	for name, redeploy := range map[string]bool{"redeploy pending": true, "no redeploy": false} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			app := runningWith(t, w, "wc", withKubernetesHA)
			first, inDoubt := w.savepointInDoubt(app)

			// The JobManager Deployment goes, and its HA ConfigMaps with it.
			require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(app, app.Status.DeployHash), metav1.DeleteOptions{}))
			id := flink.HAClusterIDOf("wc", app.Status.DeployHash)
			for _, name := range w.haConfigMaps() {
				if strings.HasPrefix(name, id+"-") {
					require.NoError(t, w.kube.CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}))
				}
			}
			if redeploy {
				w.update("wc", func(a *v1beta1.FlinkApplication) {
					a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = first, "redeploy"
				})
			}
			for i := 0; i < 300; i++ {
				_, _ = w.reconcile("wc")
				w.clock.Step(2 * time.Second)
			}
			got := w.get("wc")
			t.Logf("phase %s reason %q job %s", got.Status.Phase, got.Status.Reason, got.Status.JobStatus.JobID)
			for i, j := range w.timeline.Jobs(ns + "/wc") {
				t.Logf("job %s on %s from %q", j.JobID, j.JobManager, j.RestoredFrom)
				if i == 0 || redeploy && j.RestoredFrom == first {
					// The first job, and the one the user named the state of.
					continue
				}
				s, ok := w.storage.Get(j.RestoredFrom)
				assert.False(t, !ok || s.CheckpointID < inDoubt.CheckpointID, "job %s started from %q, older than savepoint %s in doubt",
					j.JobID, j.RestoredFrom, inDoubt.Path)
			}
		})
	}
}
