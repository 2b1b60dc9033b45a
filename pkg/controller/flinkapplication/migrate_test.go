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
