package flinkapplication

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessioncluster"
)

// A session job named like one deleted with deleteMode None, created before the cluster's pass, never
// disposes of the state its predecessor's left job runs from: what a session cluster names for the
// guardian is its leftJobs, which the predecessor's delete waited for, whoever asks (a draft left out
// every entry named like the asking session job: by name, not identity). Sequence:
//  1. session job a runs job X from wc's savepoint P (initialSavepointPath), deleteMode None;
//  2. wc's user deletes P's FlinkSnapshot: the storage is kept (a names P), the object goes;
//  3. a is deleted and gone;
//  4. a new FlinkSessionJob a (another UID) is created and runs, with only its own passes; its pass
//     disposes of a deleted FlinkSnapshot it owns that shows P.
func TestANamesakeSessionJobNeverDisposesOfTheStateItsPredecessorsLeftJobRunsFrom(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	ctx := context.Background()
	runningWith(t, w, "wc", nil)
	older, shown := takeSavepoint(t, w, "wc", "s1")
	takeSavepoint(t, w, "wc", "s2")

	w.createSessionCluster(sessionCluster("session"))
	j := sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState)
	j.Spec.DeleteMode = v1beta1.DeleteModeNone
	j.Spec.Job.InitialSavepointPath = older
	j.UID = types.UID("first-a")
	w.createSessionJob(j)
	w.runSessionsUntil("a running", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	left := w.jobsOf("session", "a")[0]
	require.Equal(t, older, left.RestoredFrom)

	disposeThroughItsSnapshot(w, shown)
	require.True(t, w.storage.Exists(older), "kept while a runs from it")
	require.Nil(t, w.snapshot(shown))

	w.deleteSessionJob("a")
	w.runSessionsUntil("a gone", func() bool { return w.sessionGone("a") })
	c := w.sessionCluster("session")
	require.Len(t, c.Status.LeftJobs, 1, "the delete waited until the cluster listed the left job")

	// A new session job of the same name, whose passes run before the cluster's next pass.
	again := sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState)
	again.UID = types.UID("second-a")
	w.createSessionJob(again)
	for i := 0; i < 120 && !w.sessionJobIn("a", v1beta1.SessionJobRunning); i++ {
		// The jar's upload runs off the worker: on a busy machine the simulated clock would run past
		// Submitting's deadline while it waits for a core.
		w.sessionJobs().Settle()
		w.settle()
		_, _ = w.reconcileSessionJob(ctx, ns, "a")
		w.clock.Step(2 * time.Second)
	}
	require.True(t, w.sessionJobIn("a", v1beta1.SessionJobRunning), w.describeSessions())
	w.createSnapshot("grab", func(s *v1beta1.FlinkSnapshotSpec) {
		s.Owner = v1beta1.SnapshotOwner{Kind: sessionJobKindName, Name: "a"}
		s.Path, s.DisposeOnDelete = older, true
	})
	for i := 0; i < 3; i++ {
		w.settle()
		_, _ = w.reconcileSessionJob(ctx, ns, "a")
	}
	w.deleteSnapshot("grab")
	for i := 0; i < 3; i++ {
		w.settle()
		_, _ = w.reconcileSessionJob(ctx, ns, "a")
	}
	require.Len(t, w.jobsOf("session", "a"), 2, "the namesake runs a job of its own")
	_, ended := w.jobsOf("session", "a")[0].AliveUntil()
	require.False(t, ended, "the left job still runs")
	assert.True(t, w.storage.Exists(older), "the savepoint the left job %s restarts from was disposed of by its namesake's pass; events: %v",
		left.JobID, w.events())
}

// leftJobs runs n session jobs from wc's older savepoint on a session cluster that does not
// checkpoint (a tenant's choice: its jobs then never complete a checkpoint of their own), deletes
// them with deleteMode None, and returns the world once the cluster keeps all n as left jobs.
func leftJobs(t *testing.T, n int) (w *world, older string) {
	return leftJobsWith(t, n, nil)
}

// leftJobsWith is leftJobs with beforeDelete run once all jobs run, before they are deleted; the
// most entries the cluster's stored leftJobs held meanwhile is in w's maxLeftJobsSeen.
func leftJobsWith(t *testing.T, n int, beforeDelete func(*world)) (w *world, older string) {
	w = newWorld(t)
	jar := w.withSessions()
	runningWith(t, w, "wc", nil)
	older, _ = takeSavepoint(t, w, "wc", "s1")

	c := sessionCluster("session")
	delete(c.Spec.FlinkConfig, "execution.checkpointing.interval")
	tms := int32((n + 1) / 2)
	c.Spec.TaskManagerConfig.Replicas = &tms
	w.createSessionCluster(c)
	names := []string{}
	for i := 0; i < n; i++ {
		name := "j" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		names = append(names, name)
		j := sessionJob(name, "session", jar, v1beta1.UpgradeModeLastState)
		j.Spec.DeleteMode = v1beta1.DeleteModeNone
		j.Spec.Job.InitialSavepointPath = older
		w.createSessionJob(j)
	}
	w.runSessionsUntil("all running", func() bool {
		for _, name := range names {
			if !w.sessionJobIn(name, v1beta1.SessionJobRunning) {
				return false
			}
		}
		return true
	})
	if beforeDelete != nil {
		beforeDelete(w)
	}
	for _, name := range names {
		w.deleteSessionJob(name)
	}
	w.runSessionsUntil("all gone, or held for room", func() bool {
		if l := len(w.sessionCluster("session").Status.LeftJobs); l > maxLeftJobsSeen {
			maxLeftJobsSeen = l
		}
		for _, name := range names {
			if !w.sessionGone(name) && !heldForRoom(w, name) {
				return false
			}
		}
		return true
	})
	for i := 0; i < 3; i++ {
		w.reconcileSessions()
		if l := len(w.sessionCluster("session").Status.LeftJobs); l > maxLeftJobsSeen {
			maxLeftJobsSeen = l
		}
	}
	return w, older
}

// heldForRoom tells whether the session job's delete waits for room in its cluster's leftJobs.
func heldForRoom(w *world, name string) bool {
	return strings.Contains(w.sessionJob(name).Status.Reason, "the delete waits for room")
}

// maxLeftJobsSeen is the most entries of leftJobs a stored status held in leftJobsWith.
var maxLeftJobsSeen int

var getJobPath = regexp.MustCompile(`/jobs/[0-9a-f]{32}$`)

// Left jobs cost a pass one job list per Flink cluster and a few single reads: a tenant's left jobs
// that never checkpoint, on a JobManager that answers each GET /jobs/:jobid just within the read
// timeout, hold a worker for a few reads, not one per left job (a draft read every one, every pass).
func TestLeftJobsCostOneJobListAndAFewReadsPerPass(t *testing.T) {
	const n = 12
	w, _ := leftJobs(t, n)
	require.Len(t, w.sessionCluster("session").Status.LeftJobs, n, w.describeSessions())

	var reads atomic.Int64
	w.answerTime = func(r *http.Request) time.Duration {
		if r.Method == http.MethodGet && getJobPath.MatchString(r.URL.Path) {
			reads.Add(1)
			return 4 * time.Second // a JobManager that answers just within the read timeout
		}
		return 0
	}
	before := w.clock.Now()
	_, err := w.reconcileSessionCluster(context.Background(), ns, "session")
	require.NoError(t, err)
	took := w.clock.Now().Sub(before)
	w.answerTime = nil
	assert.LessOrEqual(t, reads.Load(), int64(sessioncluster.LeftJobChecksPerPass+1),
		"one pass of the session cluster read %d jobs from its JobManager and took %s for %d left jobs", reads.Load(), took, n)
}

// `kubectl delete flinksessionjobs --all` on a cluster of 101 jobs that started from a savepoint and
// never checkpoint: the cluster lists 100 in leftJobs, and the 101st delete waits for room, its
// session job naming its state meanwhile. No left job runs with its start state named nowhere (a
// draft counted the stored list, which lagged the deletes it let go, and cut the list to 100).
func TestDeletingMoreJobsThanLeftJobsHoldHoldsTheRestInsteadOfForgettingAState(t *testing.T) {
	const n = jobstate.MaxLeftJobs + 1
	w, _ := leftJobs(t, n)
	c := w.sessionCluster("session")
	named := map[string]bool{}
	for _, l := range c.Status.LeftJobs {
		named[l.JobID] = true
	}
	// A session job whose delete is held names its job's state itself.
	held := 0
	sessionJobs, err := w.apps.FlinkV1beta1().FlinkSessionJobs(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	for _, j := range sessionJobs.Items {
		named[jobstate.SessionJobReference(&j).JobID] = true
		if heldForRoom(w, j.Name) {
			held++
		}
	}
	assert.Equal(t, 1, held, "the delete past the list's room waits")
	assert.Len(t, c.Status.LeftJobs, jobstate.MaxLeftJobs)
	var unnamed []string
	for _, r := range w.timeline.Jobs(ns + "/session") {
		if _, ended := r.AliveUntil(); !ended && r.RestoredFrom != "" && !named[r.JobID] {
			unnamed = append(unnamed, r.JobID)
		}
	}
	assert.Empty(t, unnamed, "left jobs that run from a savepoint and are named nowhere (leftJobs holds %d); Warnings: %v",
		len(c.Status.LeftJobs), warningsOf(w.events(), "LeftJobNotKept"))
}

func warningsOf(events []string, reason string) []string {
	var out []string
	for _, e := range events {
		if regexp.MustCompile(`^Warning ` + reason + ` `).MatchString(e) {
			out = append(out, e)
		}
	}
	return out
}

// The same deletes while the session cluster starts a new Flink cluster (ClusterStarting, its new
// cluster slow to become ready): the status the cluster's pass writes never holds more leftJobs than
// the CRD's maxItems, which the API server would refuse on every pass, freezing the cluster's status.
func TestLeftJobsStayWithinTheCRDBoundInEveryPhase(t *testing.T) {
	const n = jobstate.MaxLeftJobs + 1
	maxLeftJobsSeen = 0
	w, _ := leftJobsWith(t, n, func(w *world) {
		w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.Image = "flink:1.20-slow" })
		w.runSessionsUntil("new cluster starting", func() bool { return w.sessionCluster("session").Status.UpdatingHash != "" })
		w.broken[flink.JobManagerNameOf("session", w.sessionCluster("session").Status.UpdatingHash)] = true
	})
	t.Logf("%s; leftJobs now %d", w.describeSessions(), len(w.sessionCluster("session").Status.LeftJobs))
	assert.LessOrEqual(t, maxLeftJobsSeen, jobstate.MaxLeftJobs, "a stored status.leftJobs held %d entries; the CRD admits %d", maxLeftJobsSeen, jobstate.MaxLeftJobs)
}
