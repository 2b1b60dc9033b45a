package flinkapplication

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/internal/apifake"
)

// resourceVersions keeps resourceVersions on FlinkApplication writes as the API server does
// (apifake.ResourceVersions).
type resourceVersions = apifake.ResourceVersions

// enforceResourceVersions returns the world's resourceVersions, which newWorld installs.
func (w *world) enforceResourceVersions() *resourceVersions { return w.rv }

// enforceResourceVersions installs resourceVersions on a FlinkApplication clientset, before its
// first application is created.
func enforceResourceVersions(apps *appfake.Clientset) *resourceVersions {
	return apifake.EnforceResourceVersions(apps)
}

func TestResourceVersionsAreEnforcedByTheFakeClientset(t *testing.T) {
	w := newWorld(t)
	w.enforceResourceVersions()
	ctx := context.Background()
	apps := w.apps.FlinkV1beta1().FlinkApplications(ns)
	created := w.create(wordcount("wc"))
	require.NotEmpty(t, created.ResourceVersion)

	patch := func(rv, phase string) (*v1beta1.FlinkApplication, error) {
		return apps.Patch(ctx, "wc", types.MergePatchType,
			[]byte(fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"status":{"phase":%q},"spec":{"image":"ignored"}}`, rv, phase)),
			metav1.PatchOptions{}, "status")
	}
	first, err := patch(created.ResourceVersion, "Running")
	require.NoError(t, err)
	assert.NotEqual(t, created.ResourceVersion, first.ResourceVersion)
	assert.Equal(t, v1beta1.FlinkApplicationPhase("Running"), first.Status.Phase)
	assert.Equal(t, created.Spec.Image, first.Spec.Image, "a status write leaves the spec alone")

	_, err = patch(created.ResourceVersion, "Savepointing")
	assert.True(t, apierrors.IsConflict(err), "a patch naming an old resourceVersion: %v", err)

	stale := created.DeepCopy()
	stale.Spec.Image = "flink-wordcount:2"
	_, err = apps.Update(ctx, stale, metav1.UpdateOptions{})
	assert.True(t, apierrors.IsConflict(err), "an update naming an old resourceVersion: %v", err)

	fresh := w.get("wc")
	fresh.Spec.Image = "flink-wordcount:2"
	fresh.Status.Phase = "Ignored"
	updated, err := apps.Update(ctx, fresh, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "flink-wordcount:2", updated.Spec.Image)
	assert.Equal(t, v1beta1.FlinkApplicationPhase("Running"), updated.Status.Phase, "an update leaves the status alone")
}

// readHook is an Observer that runs a function once, right after the next application read: what
// happens between a pass's read and its write.
type readHook struct {
	Observer
	then func()
}

func (o *readHook) Application(namespace, name string) (*v1beta1.FlinkApplication, error) {
	app, err := o.Observer.Application(namespace, name)
	if f := o.then; f != nil {
		o.then = nil
		f()
	}
	return app, err
}

// otherProcess is a second operator process over the same clients, remembering nothing of env.
func otherProcess(env *Environment) *Environment {
	return &Environment{Environment: kindpass.Environment{
		Kube: env.Kube, Apps: env.Apps, Flink: env.Flink, FlinkURL: env.FlinkURL, Clock: env.Clock,
		Recorder: env.Recorder, Config: env.Config, Observer: env.Observer, Metrics: env.Metrics,
	}}
}

// as runs f with env as the world's operator.
func (w *world) as(env *Environment, f func()) {
	was := w.env
	w.env = env
	defer func() { w.env = was }()
	f()
}

// An operator process that read the application before another process moved it on (an old
// replica still running during a rollout of the operator) decides from the older status. Its status
// write names the resourceVersion it read, so it fails with 409 instead of putting the phase back
// and the newer process's progress is kept.
func TestStatusWriteFromAnOutdatedReadConflictsInsteadOfOverwriting(t *testing.T) {
	w := newWorld(t)
	rv := w.enforceResourceVersions()
	old := running(t, w, "wc")
	oldJM := w.jm(old, old.Status.DeployHash)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })

	a, b := w.env, otherProcess(w.env)
	var newer *v1beta1.FlinkApplication
	a.Observer = &readHook{Observer: a.Observer, then: func() {
		w.as(b, func() {
			newer = w.runUntil("wc", "savepoint taken", func(x *v1beta1.FlinkApplication) bool { return x.Status.SavepointPath != "" })
		})
	}}
	_, err := a.Reconcile(context.Background(), ns, "wc")
	assert.Error(t, err, "the write based on the outdated read must fail")
	assert.True(t, apierrors.IsConflict(err), "a 409 Conflict: %v", err)
	got := w.get("wc")
	assert.Equal(t, newer.ResourceVersion, got.ResourceVersion, "nothing was written")
	assert.Equal(t, newer.Status.Phase, got.Status.Phase, "the phase is not put back")
	assert.Equal(t, newer.Status, got.Status, "the newer status is kept")
	conflicts, _ := rv.Counts()
	assert.Equal(t, 1, conflicts)

	// The outdated process carries on from what the newer one did: one savepoint, one new job.
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))
	assert.Equal(t, 1, oldJM.SavepointTriggers(), "savepoints of the old job")
	jobs := w.timeline.Jobs(ns + "/wc")
	require.Len(t, jobs, 2)
	assert.Contains(t, jobs[1].RestoredFrom, newer.Status.SavepointPath)
	assert.Equal(t, jobs[1].JobID, app.Status.JobStatus.JobID)
	w.assertOneJobAtATime(w.events())
}

// A single 409 on any of the status writes that record a step before or after it is taken costs a
// pass, nothing more: the next pass reads the stored status again and redoes the work without a
// second savepoint or a second job.
func TestOneConflictingStatusWriteIsRedoneWithoutRepeatingASideEffect(t *testing.T) {
	cases := []struct {
		name string
		when func(stored, next *v1beta1.FlinkApplication) bool
	}{
		{"savepoint trigger id recorded", func(s, n *v1beta1.FlinkApplication) bool {
			return s.Status.SavepointTriggerID == "" && n.Status.SavepointTriggerID != ""
		}},
		{"savepoint path recorded", func(s, n *v1beta1.FlinkApplication) bool {
			return s.Status.SavepointPath == "" && n.Status.SavepointPath != ""
		}},
		{"new job id recorded", func(s, n *v1beta1.FlinkApplication) bool {
			return n.Status.JobStatus.JobID != "" && n.Status.JobStatus.JobID != s.Status.JobStatus.JobID && s.Status.DeployHash != ""
		}},
		{"submitted job's first state recorded", func(s, n *v1beta1.FlinkApplication) bool {
			return s.Status.JobStatus.State == "" && n.Status.JobStatus.State != "" && s.Status.DeployHash != ""
		}},
		{"new job running", func(s, n *v1beta1.FlinkApplication) bool {
			return s.Status.Phase != v1beta1.PhaseRunning && n.Status.Phase == v1beta1.PhaseRunning && s.Status.DeployHash != ""
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			rv := w.enforceResourceVersions()
			old := running(t, w, "wc")
			oldJM := w.jm(old, old.Status.DeployHash)
			rv.ConflictOnce(c.when)
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
			app := w.runUntil("wc", "upgraded", upgradedFrom(old))
			w.passes("wc", 10)

			_, injected := rv.Counts()
			require.Equal(t, 1, injected, "the 409 was answered")
			assert.Equal(t, 1, oldJM.SavepointTriggers(), "savepoints of the old job")
			assert.Equal(t, 1, savepointsTaken(w))
			jobs := w.timeline.Jobs(ns + "/wc")
			require.Len(t, jobs, 2, "jobs Flink ran")
			assert.Contains(t, jobs[1].RestoredFrom, "savepoint-")
			assert.Equal(t, jobs[1].JobID, w.get("wc").Status.JobStatus.JobID)
			assert.Equal(t, app.Status.DeployHash, w.get("wc").Status.DeployHash)
			w.assertOneJobAtATime(w.events())
		})
	}
}
