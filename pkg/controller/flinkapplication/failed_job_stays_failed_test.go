package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// A job that FAILED is not started again without restartFailedJob, also once its JobManager
// restarts without HA and forgets it: Flink was seen to end the job, which is not a job lost with
// its JobManager. Setting restartFailedJob then starts it again from its newest state.
func TestAFailedJobStaysFailedWhenItsJobManagerForgetsIt(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", nil)
	jobID := app.Status.JobStatus.JobID
	jm := w.jm(app, app.Status.DeployHash)
	require.True(t, jm.FailJobNow(jobID))
	w.runUntil("wc", "the job shown FAILED", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.State == v1beta1.JobFailed
	})
	jm.Crash()

	for range 20 {
		w.clock.Step(5 * time.Second)
		_, _ = w.reconcile("wc")
	}
	got := w.get("wc")
	assert.Len(t, w.timeline.Jobs(ns+"/wc"), 1, "no job started again; phase %s, reason %q", got.Status.Phase, got.Status.Reason)
	assert.Equal(t, jobID, got.Status.JobStatus.JobID)
	assert.Equal(t, v1beta1.JobFailed, got.Status.JobStatus.State, "the job is still shown as Flink last told it")
	assert.Equal(t, v1beta1.PhaseRunning, got.Status.Phase)

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.RestartFailedJob = true })
	w.runUntil("wc", "a job started again", func(*v1beta1.FlinkApplication) bool {
		return len(w.timeline.Jobs(ns+"/wc")) > 1
	})
}

// Nor when its JobManager Deployment is deleted: the cluster is created again, without the job.
func TestAFailedJobStaysFailedWhenItsJobManagerDeploymentIsCreatedAgain(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", nil)
	jobID := app.Status.JobStatus.JobID
	require.True(t, w.jm(app, app.Status.DeployHash).FailJobNow(jobID))
	w.runUntil("wc", "the job shown FAILED", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.JobStatus.State == v1beta1.JobFailed
	})
	require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(app, app.Status.DeployHash), metav1.DeleteOptions{}))
	for range 30 {
		w.clock.Step(5 * time.Second)
		_, _ = w.reconcile("wc")
	}
	got := w.get("wc")
	assert.True(t, w.clusterExists(got, app.Status.DeployHash), "the cluster is created again")
	assert.Len(t, w.timeline.Jobs(ns+"/wc"), 1, "no job started again; phase %s, reason %q", got.Status.Phase, got.Status.Reason)
	assert.Equal(t, v1beta1.JobFailed, got.Status.JobStatus.State)
	assert.Contains(t, eventReasons(w.events()), "RecoverDeployment")
}
