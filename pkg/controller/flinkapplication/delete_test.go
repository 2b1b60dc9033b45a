package flinkapplication

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// deleteApp marks the application deleted as the API server does for an object with finalizers.
func (w *world) deleteApp(name string) {
	app := w.get(name)
	now := metav1.NewTime(w.clock.Now())
	app.DeletionTimestamp = &now
	_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).Update(context.Background(), app, metav1.UpdateOptions{})
	require.NoError(w.t, err)
}

func finalized(a *v1beta1.FlinkApplication) bool { return !hasFinalizer(a) }

func TestDeleteModes(t *testing.T) {
	cases := []struct {
		mode          v1beta1.DeleteMode
		wantState     string
		wantSavepoint bool
	}{
		{v1beta1.DeleteModeSavepoint, "CANCELED", true},
		{v1beta1.DeleteModeForceCancel, "CANCELED", false},
		{v1beta1.DeleteModeNone, "RUNNING", false},
	}
	for _, c := range cases {
		t.Run(string(c.mode), func(t *testing.T) {
			w := newWorld(t)
			app := wordcount("wc")
			app.Spec.DeleteMode = c.mode
			w.create(app)
			live := w.runUntilPhase("wc", v1beta1.PhaseRunning)
			w.deleteApp("wc")
			got := w.runUntil("wc", "finalizer removed", finalized)

			jobs := w.jm(live, live.Status.DeployHash).Jobs()
			require.Len(t, jobs, 1)
			assert.Equal(t, c.wantState, jobs[0].State)
			if c.wantSavepoint {
				require.NotEmpty(t, got.Status.FinalSavepointPath)
				assert.True(t, w.storage.Exists(got.Status.FinalSavepointPath))
				assert.Contains(t, eventReasons(w.events()), "FinalSavepoint")
			} else {
				assert.Empty(t, got.Status.FinalSavepointPath)
			}
		})
	}
}

func TestDeleteWithFailingSavepointStopsRetryingAndSaysWhatToDo(t *testing.T) {
	w := newWorld(t)
	live := running(t, w, "wc")
	jm := w.jm(live, live.Status.DeployHash)
	jm.SetFaults(flinksim.Faults{FailSavepoints: true})
	w.deleteApp("wc")
	got := w.runUntil("wc", "delete blocked", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseDeleting && strings.HasPrefix(a.Status.Reason, "final savepoint failed")
	})
	assert.Contains(t, got.Status.Reason, "deleteMode")
	triggers := jm.SavepointTriggers()
	for i := 0; i < 50; i++ {
		_, _ = w.reconcile("wc")
	}
	assert.Equal(t, triggers, jm.SavepointTriggers(), "no more attempts until the user changes something")
	assert.True(t, hasFinalizer(w.get("wc")), "the job's state is not given up silently")
	assert.Equal(t, "RUNNING", jm.Jobs()[0].State)

	// Choosing ForceCancel finishes the delete.
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.DeleteMode = v1beta1.DeleteModeForceCancel })
	w.runUntil("wc", "finalizer removed", finalized)
	assert.Equal(t, "CANCELED", jm.Jobs()[0].State)
}

// crashBeforeEveryOtherStatusWrite makes every other status write fail, which is what the operator
// sees when it is killed after a pass's side effects and before its status write: the next pass
// starts from the status before.
func (w *world) crashBeforeEveryOtherStatusWrite() *int {
	n := 0
	w.apps.PrependReactor("patch", "flinkapplications", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" {
			return false, nil, nil
		}
		n++
		if n%2 == 1 {
			return true, nil, errors.New("operator killed before the status write")
		}
		return false, nil, nil
	})
	return &n
}

// TestCrashBeforeAnyStatusWriteNeverRepeatsASavepointOrASubmission kills the operator after every
// other pass's side effects, along every handler's path, and checks that Flink saw each savepoint
// and each submission once.
func TestCrashBeforeAnyStatusWriteNeverRepeatsASavepointOrASubmission(t *testing.T) {
	for _, c := range updatePaths() {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			writes := w.crashBeforeEveryOtherStatusWrite()
			c.play(t, w)
			assert.Greater(t, *writes, 10)
		})
	}
}

// updatePath is an update through one handler's path, followed by a delete, and what Flink must
// have seen.
type updatePath struct {
	name string
	// update breaks what it needs to and changes the spec; it returns the phase the update must pass.
	update        func(w *world, old *v1beta1.FlinkApplication) v1beta1.FlinkApplicationPhase
	endPhase      v1beta1.FlinkApplicationPhase
	wantTriggers  int // savepoints of the old job
	wantOldJobs   int // jobs the old cluster ran (a rollback restarts one)
	wantNewJobs   int // jobs the new cluster ran
	wantRestoreOf string
}

func updatePaths() []updatePath {
	return []updatePath{
		{"savepoint and upgrade", func(w *world, _ *v1beta1.FlinkApplication) v1beta1.FlinkApplicationPhase {
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
			return v1beta1.PhaseSavepointing
		}, v1beta1.PhaseRunning, 1, 1, 1, "savepoint-"},
		{"savepoint fails, checkpoint recovery", func(w *world, old *v1beta1.FlinkApplication) v1beta1.FlinkApplicationPhase {
			w.jm(old, old.Status.DeployHash).SetFaults(flinksim.Faults{FailSavepoints: true})
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
			return v1beta1.PhaseRecovering
		}, v1beta1.PhaseRunning, 1, 1, 1, "/chk-"},
		{"savepointDisabled cancels", func(w *world, _ *v1beta1.FlinkApplication) v1beta1.FlinkApplicationPhase {
			w.update("wc", func(a *v1beta1.FlinkApplication) {
				a.Spec.Image = "flink-wordcount:2"
				a.Spec.SavepointDisabled = true
			})
			return v1beta1.PhaseCancelling
		}, v1beta1.PhaseRunning, 0, 1, 1, ""},
		{"failed update rolls back", func(w *world, _ *v1beta1.FlinkApplication) v1beta1.FlinkApplicationPhase {
			w.imageJars["flink-wordcount:bad"] = []string{}
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:bad" })
			return v1beta1.PhaseRollingBack
		}, v1beta1.PhaseDeployFailed, 1, 2, 0, "savepoint-"},
	}
}

// play runs the update and the delete in w and checks what Flink saw.
func (c updatePath) play(t *testing.T, w *world) {
	old := running(t, w, "wc")
	oldJM := w.jm(old, old.Status.DeployHash)
	require.Len(t, oldJM.Jobs(), 1, "first deploy submitted once")

	via := c.update(w, old)
	app := w.runUntil("wc", "update ended", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == c.endPhase && (a.Status.DeployHash != old.Status.DeployHash || c.endPhase == v1beta1.PhaseDeployFailed)
	})
	assert.Contains(t, phasesVisited(app), via)
	assert.Equal(t, c.wantTriggers, oldJM.SavepointTriggers(), "savepoints of the old job")
	assert.Len(t, oldJM.Jobs(), c.wantOldJobs, "jobs on the old cluster")
	if c.wantNewJobs > 0 {
		jobs := w.jm(app, app.Status.DeployHash).Jobs()
		require.Len(t, jobs, c.wantNewJobs, "jobs on the new cluster")
		assert.Contains(t, jobs[0].RestoredFrom, c.wantRestoreOf)
	}
	assert.Empty(t, w.timeline.Overlaps(ns+"/wc"))
	// Lyft's meaning of status.savepointPath and savepointTriggerId: empty once the new job runs.
	assert.Empty(t, app.Status.SavepointPath)
	assert.Empty(t, app.Status.SavepointTriggerID)

	// Deleting crashes the same way and still takes one final savepoint.
	live := w.get("wc")
	liveJM := w.jm(live, live.Status.DeployHash)
	before := liveJM.SavepointTriggers()
	w.deleteApp("wc")
	got := w.runUntil("wc", "finalizer removed", finalized)
	assert.Equal(t, before+1, liveJM.SavepointTriggers(), "one final savepoint")
	assert.NotEmpty(t, got.Status.FinalSavepointPath, "the final savepoint is recorded before the finalizer goes")
	assert.Equal(t, got.Status.FinalSavepointPath, got.Status.SavepointPath, "savepointPath names the final savepoint, as Lyft's does")
	assert.True(t, w.storage.Exists(got.Status.FinalSavepointPath))
}

// The savepoint-with-cancel completes and the job reaches CANCELED before the operator looks again:
// the final savepoint must still be recorded, not skipped because the job is no longer alive.
func TestFinalSavepointIsRecordedWhenTheJobEndsBeforeThePoll(t *testing.T) {
	w := newWorld(t)
	live := running(t, w, "wc")
	w.deleteApp("wc")
	w.runUntil("wc", "savepoint triggered", func(a *v1beta1.FlinkApplication) bool { return a.Status.SavepointTriggerID != "" })
	for w.jm(live, live.Status.DeployHash).SavepointTriggers() == 0 {
		_, _ = w.env.Reconcile(context.Background(), ns, "wc")
	}
	w.clock.Step(time.Minute) // savepoint done, job CANCELED, before the next pass
	got := w.runUntil("wc", "finalizer removed", finalized)
	require.NotEmpty(t, got.Status.FinalSavepointPath)
	assert.True(t, w.storage.Exists(got.Status.FinalSavepointPath))
	assert.Equal(t, 1, w.jm(live, live.Status.DeployHash).SavepointTriggers())
}
