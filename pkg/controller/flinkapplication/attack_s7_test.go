package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/watch"
)

// Attack review s7 (of ba1bda1..f701a0f). Each test below failed on f701a0f. A record's job and the
// application Flink runs it in now change hands together (takeJob, forgetJob in records.go), and
// the cache keeps annotation values up to 32 characters (watch/cache_trim.go).

// followARerun restarts the JobManager of wc's running job (old) with Flink 2.3 running it again
// under a new id, for every JobManager of the world too when everywhere says so, and waits until wc
// follows the job; it returns the first job's id, the JobManager and wc then.
func followARerun(t *testing.T, w *world, old *v1beta1.FlinkApplication, everywhere bool) (string, *flinksim.JobManager, *v1beta1.FlinkApplication) {
	first := old.Status.JobStatus.JobID
	faults := flinksim.Faults{RerunUnderNewJobID: true, RerunTakes: 20 * time.Second}
	if everywhere {
		w.faults = faults
	}
	jm := w.jm(old, old.Status.DeployHash)
	jm.SetFaults(faults)
	jm.Restart()
	app := w.runUntil("wc", "following the re-run job", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != first &&
			a.Status.JobStatus.State == v1beta1.JobRunning
	})
	require.Equal(t, first, jobstate.Stable(&app.Status.JobOwnerStatus).ApplicationID)
	return first, jm, app
}

// A rescale in place under the adaptive scheduler keeps the job Flink 2.3 re-ran under a new id,
// but handleRescaling (rescaling.go) writes the live job's id into the candidate record the rescale
// recorded (recordTarget: no applicationID) and promotes it: the record keeps the job id and forgets
// the application the job runs in. At the next failover Flink re-runs that application again; the
// JobManager knows neither the followed id nor an application of it, weighApplication asks about the
// job's own id, and the job Flink runs on is taken for gone (the class of explorer seed 11000453).
func TestARescaleInPlaceKeepsTheApplicationAReRunJobRunsIn(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkVersion = "2.3"
		withKubernetesHA(s)
		s.ScaleMode = v1beta1.ScaleModeInPlace
		s.FlinkConfig[flink.SchedulerKey] = "adaptive"
	})
	first, jm, app := followARerun(t, w, old, false)
	rerun := app.Status.JobStatus.JobID

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 4 })
	app = w.runUntil("wc", "rescaled in place", func(a *v1beta1.FlinkApplication) bool {
		h := a.Status.History
		return a.Status.Phase == v1beta1.PhaseRunning && len(h) > 0 && h[len(h)-1].Reason == "Rescaled"
	})
	t.Logf("job %s, records %+v", app.Status.JobStatus.JobID, jobstate.Stable(&app.Status.JobOwnerStatus))
	require.Equal(t, rerun, app.Status.JobStatus.JobID, "rescaled in place, the same job")
	assert.Equal(t, first, jobstate.Stable(&app.Status.JobOwnerStatus).ApplicationID,
		"the record no longer names the application job %s runs in", rerun)

	// The consequence: the next failover re-runs the application; its job is taken for gone.
	jm.Restart()
	app = w.runUntil("wc", "following the second re-run job", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != rerun &&
			a.Status.JobStatus.State == v1beta1.JobRunning || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	w.passes("wc", 20)
	app = w.get("wc")
	t.Logf("after the second failover: %s (%s), job %s; live on the cluster %v", app.Status.Phase, app.Status.Reason,
		app.Status.JobStatus.JobID, liveJobIDs(jm))
	assert.Equal(t, 1, w.timeline.MostAlive(ns+"/wc"))
	assert.NotEqual(t, v1beta1.PhaseDeployFailed, app.Status.Phase)
	assert.NotContains(t, eventReasons(w.events()), "JobLost", "the job Flink re-ran was taken for lost")
}

// A JobManager Deployment deleted under Flink HA is created again and the job HA recovers is waited
// for (recoverDeployment → restartInPlace with keepJob): the restart's candidate record takes the
// lost job's id (recover_deployment.go, c.JobID = lost) but not the application it runs in, which
// recordRestart (records.go) does not copy either. When the lost job is one Flink 2.3 had re-run
// under a new id, the new JobManager brings back the application (of the first job's id) and runs
// it again; asked about an application of the followed job's own id, it knows none, and the job
// is taken for gone: the object's job that HA brought back is not followed.
func TestAJobManagerDeploymentRecreatedUnderHAFollowsTheReRunJobsApplication(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkVersion = "2.3"
		withKubernetesHA(s)
	})
	_, _, app := followARerun(t, w, old, true)
	rerun := app.Status.JobStatus.JobID
	w.passes("wc", 10)

	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(app, app.Status.DeployHash), metav1.DeleteOptions{}))
	app = w.runUntil("wc", "following the job HA brought back, or failed", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != rerun && a.Status.JobStatus.JobID != "" &&
			a.Status.JobStatus.State == v1beta1.JobRunning || a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	w.passes("wc", 20)
	app = w.get("wc")
	jm := w.jm(app, app.Status.DeployHash)
	t.Logf("after the Deployment was created again: %s (%s), job %s; live on the cluster %v; events %v", app.Status.Phase, app.Status.Reason,
		app.Status.JobStatus.JobID, liveJobIDs(jm), eventReasons(w.events()))
	assert.NotEqual(t, v1beta1.PhaseDeployFailed, app.Status.Phase)
	assert.Equal(t, 1, w.timeline.MostAlive(ns+"/wc"))
	assert.NotContains(t, eventReasons(w.events()), "JobLost", "the job Flink HA brought back was taken for lost")
}

// A session job reads its Flink cluster's checkpoint retention from the JobManager Deployment's
// flink.k8s.io/checkpoint-retention annotation (run_config.go renderedRetention), which ea8a8dc made
// the cache trim keep. But keepOwnMetadata (watch/cache_trim.go) still drops every kept annotation
// whose value is longer than maxAnnotationKept (16), a bound made for the retained-checkpoints
// count, and every retention value is longer: RETAIN_ON_CANCELLATION and DELETE_ON_CANCELLATION
// have 22 characters, NO_EXTERNALIZED_CHECKPOINTS 27. Through the operator's informer cache the
// annotation is never there, renderedRetention answers ok=false, and runConfigOfJob falls back to
// the session cluster's spec as it is now: after an edit from NO_EXTERNALIZED_CHECKPOINTS to
// RETAIN_ON_CANCELLATION, a LastState move cancels the old job as if its checkpoints survived and
// Flink discards them (TestASessionJobsStopFollowsTheRetentionItsFlinkClusterRunsWith passes only
// because the unit world reads Deployments from the API, not through the trimmed cache).
func TestTheOperatorsCacheKeepsTheRetentionASessionClusterWasRenderedWith(t *testing.T) {
	w := sessionJobRunningWithoutExternalizedCheckpoints(t)
	cluster := w.sessionCluster("session")
	hash := cluster.Status.DeployHash
	require.NotEmpty(t, hash)
	written, err := w.kube.AppsV1().Deployments(ns).Get(context.Background(), flink.JobManagerNameOf("session", hash), metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "NO_EXTERNALIZED_CHECKPOINTS", written.Annotations[flink.CheckpointRetentionAnnotation], "the operator wrote it")

	var synced []cache.InformerSynced
	wt := watch.New(watch.Config{Kube: w.kube, Apps: w.apps, Namespaces: []string{ns},
		Enqueue: func(string, string, string) {}, Synced: func(_ string, s cache.InformerSynced) { synced = append(synced, s) }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wt.Start(ctx)
	require.True(t, cache.WaitForCacheSync(ctx.Done(), synced...))
	owned, _, err := wt.Listers().Owned(flink.OwnerFromSessionCluster(cluster))
	require.NoError(t, err)
	require.NotNil(t, owned[hash], "the cache holds the cluster")
	require.NotNil(t, owned[hash].JobManager)
	got, ok := owned[hash].JobManager.Annotations[flink.CheckpointRetentionAnnotation]
	assert.True(t, ok, "the cached JobManager Deployment lost %s (annotations %v)", flink.CheckpointRetentionAnnotation, owned[hash].JobManager.Annotations)
	assert.Equal(t, "NO_EXTERNALIZED_CHECKPOINTS", got)
}
