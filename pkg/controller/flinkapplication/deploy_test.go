package flinkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

func TestFirstDeployRunsTheJob(t *testing.T) {
	w := newWorld(t)
	w.create(wordcount("wc"))
	app := w.runUntilPhase("wc", v1beta1.PhaseRunning)

	hash := flink.ClusterHash(app)
	assert.Equal(t, hash, app.Status.DeployHash)
	assert.Empty(t, app.Status.UpdatingHash)
	assert.Contains(t, app.Finalizers, Finalizer)
	jobs := w.jm(app, hash).Jobs()
	require.Len(t, jobs, 1)
	assert.Equal(t, app.Status.JobStatus.JobID, jobs[0].ID, "status names the job Flink runs")
	assert.Equal(t, 3, jobs[0].Parallelism)
	assert.Empty(t, jobs[0].RestoredFrom)
	assert.Equal(t, v1beta1.JobRunning, app.Status.JobStatus.State)
	assert.Equal(t, "wordcount.jar", app.Status.JobStatus.JarName)

	// The cluster has the objects of its hash, owned by the application, and the generic Service points at it.
	ctx := context.Background()
	tm, err := w.kube.AppsV1().Deployments(ns).Get(ctx, flink.TaskManagerName(app, hash), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(2), *tm.Spec.Replicas, "ceil(3/2) TaskManagers")
	assert.Equal(t, "wc", tm.OwnerReferences[0].Name)
	svc, err := w.kube.CoreV1().Services(ns).Get(ctx, "wc", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, hash, svc.Spec.Selector["flink-app-hash"])

	// History and Events tell the story; conditions say it is ready.
	var path []v1beta1.FlinkApplicationPhase
	for _, h := range app.Status.History {
		path = append(path, h.To)
	}
	assert.Equal(t, []v1beta1.FlinkApplicationPhase{v1beta1.PhaseClusterStarting, v1beta1.PhaseSubmitting, v1beta1.PhaseRunning}, path)
	assert.Contains(t, eventReasons(w.events()), "JobSubmitted")
	ready := condition(app, v1beta1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, metav1.ConditionTrue, ready.Status)
	assert.Equal(t, app.Generation, app.Status.ObservedGeneration)
}

func TestFirstDeployRestoresTheGivenSavepoint(t *testing.T) {
	w := newWorld(t)
	// A savepoint left by an earlier incarnation of the job.
	old := wordcount("old")
	w.create(old)
	oldApp := w.runUntilPhase("old", v1beta1.PhaseRunning)
	w.update("old", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	oldApp = w.runUntil("old", "upgraded", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash != oldApp.Status.DeployHash
	})
	savepoint := oldApp.Status.JobStatus.RestorePath
	require.NotEmpty(t, savepoint)

	app := wordcount("wc")
	app.Spec.SavepointInfo.SavepointLocation = savepoint // the deprecated field still works
	w.create(app)
	got := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	jobs := w.jm(got, got.Status.DeployHash).Jobs()
	require.Len(t, jobs, 1)
	assert.Equal(t, savepoint, jobs[0].RestoredFrom)
	assert.Equal(t, savepoint, got.Status.JobStatus.RestorePath)
}

func TestFailedFirstDeployEndsInDeployFailedWithTheCause(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(w *world)
		reason string
	}{
		{"jar missing from the image", func(w *world) { w.imageJars["flink-wordcount:1"] = []string{"other.jar"} }, "wordcount.jar"},
		{"cluster never becomes ready", func(w *world) {
			w.broken["wc-"+flink.ClusterHash(withNamespace(wordcount("wc")))+"-jm"] = true
		}, "ClusterStarting did not complete"},
		{"savepoint to restore does not exist", func(w *world) {}, "savepoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			c.break_(w)
			app := wordcount("wc")
			if c.name == "savepoint to restore does not exist" {
				app.Spec.SavepointPath = "file:///checkpoints/savepoints/savepoint-000000-gone"
			}
			w.create(app)
			got := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
			assert.Contains(t, got.Status.Reason, c.reason)
			assert.Empty(t, got.Status.DeployHash)
			assert.Equal(t, flink.ClusterHash(got), got.Status.FailedDeployHash)
			// It rests there: more passes change nothing until the spec changes.
			for i := 0; i < 20; i++ {
				_, _ = w.reconcile("wc")
			}
			assert.Equal(t, v1beta1.PhaseDeployFailed, w.get("wc").Status.Phase)

			// Fixing the spec deploys it.
			delete(w.imageJars, "flink-wordcount:1")
			w.broken = map[string]bool{}
			w.update("wc", func(a *v1beta1.FlinkApplication) {
				a.Spec.Image = "flink-wordcount:1"
				a.Spec.SavepointPath = ""
				a.Spec.RestartNonce = "fixed"
			})
			w.runUntilPhase("wc", v1beta1.PhaseRunning)
		})
	}
}

// A deployment mode the CRD would refuse (written around it, or by a newer version) is reported,
// not guessed at. BlueGreen, which this test used before it was built, is supported now.
func TestUnsupportedDeploymentModeIsReported(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	app.Spec.DeploymentMode = "Canary"
	w.create(app)
	got := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	assert.Contains(t, got.Status.Reason, "deploymentMode Canary is not supported")
}

func withNamespace(app *v1beta1.FlinkApplication) *v1beta1.FlinkApplication {
	app.Namespace = ns
	return app
}

func eventReasons(events []string) []string {
	var out []string
	for _, e := range events {
		// FakeRecorder writes "<type> <reason> <message>".
		if f := strings.Fields(e); len(f) >= 2 {
			out = append(out, f[1])
		}
	}
	return out
}

func condition(app *v1beta1.FlinkApplication, typ string) *metav1.Condition {
	for i := range app.Status.Conditions {
		if app.Status.Conditions[i].Type == typ {
			return &app.Status.Conditions[i]
		}
	}
	return nil
}

// A job RUNNING without slots is not stable: the stabilization period counts from when its tasks
// were deployed, not from when Flink called it RUNNING.
func TestStabilizationCountsFromTaskDeployment(t *testing.T) {
	w := newWorld(t)
	w.create(wordcount("wc"))
	app := w.runUntil("wc", "job submitted", func(a *v1beta1.FlinkApplication) bool {
		jm := w.jm(a, a.Status.UpdatingHash)
		return a.Status.UpdatingHash != "" && jm != nil && len(jm.Jobs()) > 0
	})
	tm := flink.TaskManagerName(app, app.Status.UpdatingHash)
	w.broken[tm] = true // its TaskManagers are gone: no slots
	for start := w.clock.Now(); w.clock.Since(start) < 30*time.Second; {
		_, _ = w.reconcile("wc")
	}
	require.NotEqual(t, v1beta1.PhaseRunning, w.get("wc").Status.Phase, "a job without slots is not running")
	require.Equal(t, "RUNNING", w.jm(app, app.Status.UpdatingHash).Jobs()[0].State, "Flink calls it RUNNING all the same")

	delete(w.broken, tm)
	slots := w.clock.Now()
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	assert.GreaterOrEqual(t, w.clock.Since(slots), w.env.Config.JobStabilizationPeriod.Duration)
}

// A first deploy writes status twice, beside its finalizer: the job id goes out with the move into
// ClusterStarting, the pass that finds the cluster ready submits the job under it, and nothing more
// is written until the job runs stable (quiet_submission.go). Each write of a custom resource costs
// the API server ten times an Event's CPU; at a hundred deploys at once they bound how fast the
// fleet starts.
func TestAFirstDeploySubmitsInThePassThatFindsItsClusterReady(t *testing.T) {
	w := newWorld(t)
	var patches []string
	writes := w.crashAtStatusWrite(0, func(patch []byte) bool {
		patches = append(patches, string(patch))
		return true
	})
	w.create(wordcount("wc"))
	app := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	for i, p := range patches {
		t.Logf("status write %d: %.300s", i+1, p)
	}
	// ClusterStarting (with the job id), Running.
	assert.Equal(t, 2, *writes, "status writes from create to Running")
	require.NotEmpty(t, patches)
	assert.Contains(t, patches[0], app.Status.JobStatus.JobID, "the job id goes out with the move into ClusterStarting")
	var toSubmitting time.Time
	for _, h := range app.Status.History {
		if h.To == v1beta1.PhaseSubmitting {
			toSubmitting = h.Time.Time
		}
	}
	jobs := w.timeline.Jobs(ns + "/wc")
	require.Len(t, jobs, 1)
	assert.Equal(t, toSubmitting.Unix(), jobs[0].States[0].Time.Unix(), "submitted in the pass that moved into Submitting")
}

// The state a job started from counts as no newer than the job's start, not as new as the moment
// it ran stable: a checkpoint the job took while it stabilized is newer, and a LastState stop or a
// recovery right after must restore that one, not the older state the job came from.
func TestTheStateAJobStartedFromIsOlderThanItsFirstCheckpoints(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))
	js := app.Status.JobStatus
	require.NotEmpty(t, js.RestorePath)
	require.NotNil(t, js.RestoreTime)
	require.NotNil(t, js.StartTime)
	assert.False(t, js.RestoreTime.After(js.StartTime.Time), "restoreTime %s after the job's start %s", js.RestoreTime, js.StartTime)
}
