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
)

// asPreviousVersion rewrites a status in the shape the operator version before deployment records
// wrote: the hash fields, lastStableSpec, updatingSpec and inPlaceUpdatedFromHash, and no records.
func asPreviousVersion(st *v1beta1.FlinkApplicationStatus) {
	d := st.Deployments
	if s := d.Stable; s != nil {
		st.LastStableSpec = &v1beta1.StableSpec{SpecHash: s.SpecHash, Spec: s.Spec, JobID: s.JobID, RestorePath: s.RestorePath}
		if s.StableTime != nil {
			st.LastStableSpec.StableTime = *s.StableTime
		}
	}
	if c := d.Candidate; c != nil {
		st.UpdatingSpec = c.Spec
		if c.ClusterHash != c.SpecHash {
			st.InPlaceUpdatedFromHash = c.ClusterHash
		}
	}
	st.Deployments = v1beta1.Deployments{}
}

// Status written by the previous operator version, at each point of the lifecycle paths where it
// records an update or a restart in progress, is migrated to deployment records on the first read
// and the path carries on: one savepoint where one was asked for, the jobs it promises, never two
// at once.
func TestStatusOfThePreviousVersionIsMigratedMidPath(t *testing.T) {
	newImage := func(w *world, _ *v1beta1.FlinkApplication) {
		w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	}
	cases := []struct {
		name   string
		spec   func(*v1beta1.FlinkApplicationSpec)
		change func(w *world, old *v1beta1.FlinkApplication)
		// at is where the previous version's status is written.
		at   func(a *v1beta1.FlinkApplication) bool
		done func(a, old *v1beta1.FlinkApplication) bool
		jobs int
		// lyft writes the phase under the Lyft operator's name, as it stored it.
		lyft bool
	}{
		{"running", nil, func(*world, *v1beta1.FlinkApplication) {},
			func(a *v1beta1.FlinkApplication) bool { return true },
			func(a, old *v1beta1.FlinkApplication) bool { return a.Status.Deployments.Stable != nil }, 1, false},
		{"savepoint of a Dual update in flight", nil, newImage,
			func(a *v1beta1.FlinkApplication) bool { return a.Status.SavepointTriggerID != "" },
			upgraded, 2, false},
		{"Dual update submitting", nil, newImage,
			func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseSubmitting && a.Status.JobStatus.JobID != ""
			}, upgraded, 2, false},
		{"Dual update submitting, written by the Lyft operator", nil, newImage,
			func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseSubmitting && a.Status.JobStatus.JobID != ""
			}, upgraded, 2, true},
		{"restart of a failed job submitting", func(s *v1beta1.FlinkApplicationSpec) { s.RestartFailedJob = true },
			func(w *world, old *v1beta1.FlinkApplication) {
				require.True(t, w.jm(old, old.Status.DeployHash).FailJobNow(old.Status.JobStatus.JobID))
			},
			func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseSubmitting && a.Status.JobStatus.JobID != ""
			}, newJobRunning, 2, false},
		{"rollback", nil, func(w *world, _ *v1beta1.FlinkApplication) {
			w.imageFaults["flink-wordcount:2"] = flinksim.Faults{FailJobsAfter: time.Second}
			newImage(w, nil)
		}, func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == v1beta1.PhaseRollingBack },
			func(a, _ *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseDeployFailed && a.Status.JobStatus.State == v1beta1.JobRunning
			}, 3, false},
		{"rollback, written by the Lyft operator", nil, func(w *world, _ *v1beta1.FlinkApplication) {
			w.imageFaults["flink-wordcount:2"] = flinksim.Faults{FailJobsAfter: time.Second}
			newImage(w, nil)
		}, func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == v1beta1.PhaseRollingBack },
			func(a, _ *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseDeployFailed && a.Status.JobStatus.State == v1beta1.JobRunning
			}, 3, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			old := runningWith(t, w, "wc", c.spec)
			c.change(w, old)
			at := w.runUntil("wc", "the point to migrate at", c.at)
			asPreviousVersion(&at.Status)
			if c.lyft {
				at.Status.Phase = map[v1beta1.FlinkApplicationPhase]v1beta1.FlinkApplicationPhase{
					v1beta1.PhaseSubmitting: v1beta1.LyftPhaseSubmittingJob, v1beta1.PhaseRollingBack: v1beta1.LyftPhaseRollingBackJob,
				}[at.Status.Phase]
			}
			_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).UpdateStatus(context.Background(), at, metav1.UpdateOptions{})
			require.NoError(t, err)
			w.restartOperator()

			app := w.runUntil("wc", "path ended", func(a *v1beta1.FlinkApplication) bool { return c.done(a, old) })
			assert.Nil(t, app.Status.LastStableSpec, "migrated fields are left empty")
			assert.Empty(t, app.Status.UpdatingSpec)
			require.NotNil(t, app.Status.Deployments.Stable)
			assert.Equal(t, app.Status.DeployHash, app.Status.Deployments.Stable.ClusterHash)
			jobs := w.timeline.Jobs(ns + "/wc")
			assert.Len(t, jobs, c.jobs, "jobs Flink ran")
			assert.Equal(t, jobs[len(jobs)-1].JobID, app.Status.JobStatus.JobID)
			assert.LessOrEqual(t, savepointsTaken(w), 1)
			w.assertOneJobAtATime(w.events())
		})
	}
}

// asLyft rewrites a status in the shape the Lyft operator wrote: its hash fields and job status, no
// records, conditions, upgrade mode or history.
func asLyft(st *v1beta1.FlinkApplicationStatus) {
	asPreviousVersion(st)
	st.LastStableSpec, st.Conditions, st.UpgradeMode, st.History, st.PhaseStartedAt = nil, nil, "", nil, nil
	st.ObservedGeneration = 0
}

// An application the Lyft operator runs is adopted as it runs: the Lyft operator hashes specs its own
// way, so its deployHash never equals this operator's hash of the same spec, and that must not
// redeploy the job. An update then goes through as usual.
func TestARunningApplicationOfTheLyftOperatorIsAdoptedWithoutARedeploy(t *testing.T) {
	w := newWorld(t)
	old := running(t, w, "wc")
	// The Lyft operator's status: its hash of the spec differs from ours, as a spec differing in a
	// hashed field shows.
	app := w.get("wc")
	asLyft(&app.Status)
	app.Spec.ProgramArgs = "--as-lyft-hashed-it"
	_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).Update(context.Background(), app, metav1.UpdateOptions{})
	require.NoError(t, err)
	app = w.get("wc")
	asLyft(&app.Status)
	_, err = w.apps.FlinkV1beta1().FlinkApplications(ns).UpdateStatus(context.Background(), app, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.restartOperator()

	w.passes("wc", 10)
	adopted := w.get("wc")
	assert.Equal(t, v1beta1.PhaseRunning, adopted.Status.Phase)
	assert.Equal(t, old.Status.DeployHash, adopted.Status.DeployHash, "the Lyft operator's cluster is kept")
	assert.Equal(t, old.Status.JobStatus.JobID, adopted.Status.JobStatus.JobID, "and its job")
	assert.Len(t, w.timeline.Jobs(ns+"/wc"), 1, "nothing redeployed")

	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	updated := w.runUntil("wc", "updated", upgradedFrom(adopted))
	assert.Contains(t, w.jm(updated, updated.Status.DeployHash).Jobs()[0].RestoredFrom, "savepoint-")
	w.assertOneJobAtATime(w.events())
}

// The Lyft operator records no cause in status for a rollback in flight: the rollback's message says
// the cause was not recorded, rather than "update failed ()".
func TestALyftRollbackInFlightSaysItsCauseWasNotRecorded(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.imageFaults["flink-wordcount:2"] = flinksim.Faults{FailJobsAfter: time.Second}
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	at := w.runUntil("wc", "rolling back", func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == v1beta1.PhaseRollingBack })
	asLyft(&at.Status)
	at.Status.Phase, at.Status.Reason = v1beta1.LyftPhaseRollingBackJob, ""
	_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).UpdateStatus(context.Background(), at, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.restartOperator()

	app := w.runUntil("wc", "rolled back", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseDeployFailed && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	assert.NotContains(t, app.Status.Reason, "()")
	assert.Contains(t, app.Status.Reason, "update failed (cause not recorded)")
}
