package flinkapplication

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// TestCrashBeforeAnyStatusWriteAlongTheLifecyclePaths kills the operator after every other pass's
// side effects along the paths of Single mode, LastState, suspend and resume, in-place rescaling,
// JobManager recovery and rollback to the last stable spec. Flink must see each savepoint and each
// job once, never two jobs at once, and the last job must restore the state the path promises.
func TestCrashBeforeAnyStatusWriteAlongTheLifecyclePaths(t *testing.T) {
	for _, c := range lifecyclePaths() {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			writes := w.crashBeforeEveryOtherStatusWrite()
			c.play(t, w)
			assert.Greater(t, *writes, 8)
		})
	}
}

// lifecyclePath is a path through the lifecycle and what Flink must have seen at its end.
type lifecyclePath struct {
	name   string
	spec   func(*v1beta1.FlinkApplicationSpec)
	change func(w *world, old *v1beta1.FlinkApplication)
	// done tells when the path ended.
	done       func(a, old *v1beta1.FlinkApplication) bool
	savepoints int
	jobs       int
	// restored is what the last job's restore path contains.
	restored string
}

// lifecyclePaths are the paths of Single mode, LastState, suspend and resume, in-place rescaling,
// JobManager recovery and rollback to the last stable spec.
func lifecyclePaths() []lifecyclePath {
	single := func(s *v1beta1.FlinkApplicationSpec) { s.DeploymentMode = v1beta1.DeploymentModeSingle }
	newImage := func(w *world, _ *v1beta1.FlinkApplication) {
		w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	}
	return []lifecyclePath{
		{"Single, Savepoint", single, newImage, upgraded, 1, 2, "savepoint-"},
		{"Single, LastState", func(s *v1beta1.FlinkApplicationSpec) {
			single(s)
			s.UpgradeMode = v1beta1.UpgradeModeLastState
		}, newImage, upgraded, 0, 2, "/chk-"},
		{"suspend and resume", nil, func(w *world, _ *v1beta1.FlinkApplication) {
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
			w.runUntilPhase("wc", v1beta1.PhaseSuspended)
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateRunning })
		}, newJobRunning, 1, 2, "savepoint-"},
		{"in-place rescale", func(s *v1beta1.FlinkApplicationSpec) { s.ScaleMode = v1beta1.ScaleModeInPlace }, func(w *world, _ *v1beta1.FlinkApplication) {
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 6 })
		}, newJobRunning, 1, 2, "savepoint-"},
		{"JobManager recovery", nil, func(w *world, old *v1beta1.FlinkApplication) {
			require.NoError(w.t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(), flink.JobManagerName(old, old.Status.DeployHash), metav1.DeleteOptions{}))
		}, newJobRunning, 0, 2, "/chk-"},
		{"Single, unstable update rolls back", single, func(w *world, _ *v1beta1.FlinkApplication) {
			w.imageFaults["flink-wordcount:2"] = flinksim.Faults{RestartJobsEvery: 3 * time.Second}
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
		}, func(a, _ *v1beta1.FlinkApplication) bool { return a.Status.Phase == v1beta1.PhaseDeployFailed }, 1, 3, "/"},
	}
}

// play runs the path in w and checks what Flink saw.
func (c lifecyclePath) play(t *testing.T, w *world) {
	old := runningWith(t, w, "wc", c.spec)
	c.change(w, old)
	app := w.runUntil("wc", "path ended", func(a *v1beta1.FlinkApplication) bool { return c.done(a, old) })

	jobs := w.timeline.Jobs(ns + "/wc")
	require.Len(t, jobs, c.jobs, "jobs Flink ran")
	assert.Contains(t, jobs[len(jobs)-1].RestoredFrom, c.restored)
	assert.Equal(t, jobs[len(jobs)-1].JobID, app.Status.JobStatus.JobID)
	assert.Equal(t, c.savepoints, savepointsTaken(w), "savepoints taken")
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"), "never two live jobs")
}

func upgraded(a, old *v1beta1.FlinkApplication) bool { return upgradedFrom(old)(a) }

func newJobRunning(a, old *v1beta1.FlinkApplication) bool {
	return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != old.Status.JobStatus.JobID &&
		a.Status.JobStatus.State == v1beta1.JobRunning
}

func savepointsTaken(w *world) int {
	n := 0
	for _, s := range w.storage.Snapshots() {
		if s.Savepoint {
			n++
		}
	}
	return n
}
