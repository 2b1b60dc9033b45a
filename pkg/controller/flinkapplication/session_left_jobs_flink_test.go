package flinkapplication

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// haLeftJob is an HA session cluster "session" that does not checkpoint, a job left on it by
// session job "a" (deleteMode None) started from wc's older savepoint, and the cluster hash it runs
// on.
func haLeftJob(t *testing.T) (w *world, older, hash, jobID string) {
	w = newWorld(t)
	jar := w.withSessions()
	runningWith(t, w, "wc", nil)
	older, _ = takeSavepoint(t, w, "wc", "s1")
	takeSavepoint(t, w, "wc", "s2")

	c := sessionCluster("session")
	delete(c.Spec.FlinkConfig, "execution.checkpointing.interval")
	c.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
	c.Spec.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/ha"
	w.createSessionCluster(c)
	j := sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState)
	j.Spec.DeleteMode = v1beta1.DeleteModeNone
	j.Spec.Job.InitialSavepointPath = older
	w.createSessionJob(j)
	w.runSessionsUntil("a running", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	w.deleteSessionJob("a")
	w.runSessionsUntil("a gone", func() bool { return w.sessionGone("a") })
	w.reconcileSessions()
	left := w.jobsOf("session", "a")[0]
	require.Equal(t, older, left.RestoredFrom)
	require.Len(t, w.sessionCluster("session").Status.LeftJobs, 1)
	return w, older, w.sessionCluster("session").Status.DeployHash, left.JobID
}

// A kept HA cluster a left job runs on is never deleted under it: bringBackJobManagers creates its
// JobManager again, and the same pass's clean-up loop (watchSessionCluster) judged (in a draft) that
// cluster by the objects it observed before: no JobManager Deployment and no pod, so
// jobsLeftOnCluster says "" and deleteCluster deletes, by name, the JobManager just created with the
// rest of the cluster. Sequence:
//  1. HA session cluster, session job a runs job X from wc's savepoint P, deleted with deleteMode
//     None: X is left on Flink cluster H1 and listed in leftJobs;
//  2. the session cluster's spec changes: H2 runs, H1 is kept (Flink lists X running there);
//  3. H1's JobManager Deployment goes (kubectl delete, eviction of the Deployment's owner...).
//
// Flink HA would bring X back with a JobManager of H1; instead H1 is deleted, X never runs again,
// and its leftJobs entry stays for ever (H1's HA ConfigMaps are no one's to remove).
func TestAnHAClusterALeftJobRunsOnIsKeptWhenItsJobManagerGoes(t *testing.T) {
	w, _, h1, x := haLeftJob(t)
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.FlinkConfig["state.checkpoints.num-retained"] = "4" })
	w.runSessionsUntil("H2 runs", func() bool {
		d := w.sessionCluster("session").Status.DeployHash
		return d != "" && d != h1 && w.sessionCluster("session").Status.Phase == v1beta1.SessionClusterRunning
	})
	for i := 0; i < 10; i++ {
		w.reconcileSessions()
	}
	_, err := w.kube.AppsV1().Deployments(ns).Get(context.Background(), flink.JobManagerNameOf("session", h1), metav1.GetOptions{})
	require.NoError(t, err, "H1 is kept while X runs on it: %s", w.describeSessions())

	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerNameOf("session", h1), metav1.DeleteOptions{}))
	var deleted []string
	for i := 0; i < 30; i++ {
		w.reconcileSessions()
		for _, e := range w.events() {
			if strings.Contains(e, "ClusterDeleted") && strings.Contains(e, h1) {
				deleted = append(deleted, e)
			}
		}
	}
	_, err = w.kube.AppsV1().Deployments(ns).Get(context.Background(), flink.JobManagerNameOf("session", h1), metav1.GetOptions{})
	alive := false
	for _, r := range w.jobsOf("session", "a") {
		if _, ended := r.AliveUntil(); r.JobID == x && !ended {
			alive = true
		}
	}
	t.Logf("leftJobs %v; HA ConfigMaps %v; %s", w.sessionCluster("session").Status.LeftJobs, w.haConfigMaps(), w.describeSessions())
	assert.Empty(t, deleted, "Flink cluster %s was deleted under left job %s", h1, x)
	assert.False(t, apierrors.IsNotFound(err), "the JobManager of %s, which Flink HA needs to bring left job %s back, is gone", h1, x)
	assert.True(t, alive, "left job %s (deleteMode None) no longer runs", x)
}

// A left job's entry does not go on one list answer: a draft of settleLeftJobs dropped it when GET
// /jobs listed the job globally terminal, and GET /jobs is the tenant's JobManager's answer (docs/security.md: every
// answer is hostile input; "no durable state is lost whatever a tenant or a JobManager does").
// Sequence:
//  1. session job a runs job X from wc's savepoint P, deleted with deleteMode None; X never
//     completes a checkpoint (its tasks fail every 5 s and restart from P);
//  2. the session cluster's JobManager lists X as FINISHED in GET /jobs, while it runs on;
//  3. the cluster drops X's entry; wc's user lets P go (its FlinkSnapshot deleted, disposeOnDelete).
//
// P is disposed of while X runs and restarts from it. The same JobManager's GET /jobs/X (RUNNING)
// is never read: one list entry is taken as proof.
func TestAJobManagerListingALeftJobEndedDoesNotLetItsStartStateGo(t *testing.T) {
	w, older, shown, left := jobLeftByDeleteModeNone(t, flinksim.Faults{RestartJobsEvery: 5 * time.Second})
	require.Len(t, w.sessionCluster("session").Status.LeftJobs, 1)
	inner := w.server.Config.Handler
	w.server.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/jobs") {
			inner.ServeHTTP(rw, r)
			return
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		var body map[string]any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
			rw.WriteHeader(rec.Code)
			_, _ = rw.Write(rec.Body.Bytes())
			return
		}
		if list, ok := body["jobs"].([]any); ok {
			for _, j := range list {
				if m, ok := j.(map[string]any); ok && m["id"] == left.JobID {
					m["status"] = "FINISHED" // the lie
				}
			}
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(body)
	})
	for end := w.clock.Now().Add(5 * time.Minute); w.clock.Now().Before(end); {
		w.reconcileSessions()
	}
	w.server.Config.Handler = inner
	assert.Len(t, w.sessionCluster("session").Status.LeftJobs, 1, "the job's own read says it runs: its entry stays")

	disposeThroughItsSnapshot(w, shown)
	_, ended := w.jobsOf("session", "a")[0].AliveUntil()
	require.False(t, ended, "X still runs (and restarts from P)")
	assert.True(t, w.storage.Exists(older), "savepoint %s, which running left job %s restarts from, was disposed of on its JobManager's "+
		"word that the job FINISHED; events: %v", older, left.JobID, w.events())
}
