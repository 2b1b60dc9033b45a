package flinkapplication

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// asBeforeLedger rewrites a status in the shape the operator version before the ledger wrote: the
// savepoint in flight in its record (deployments.*.savepoint), the state for the next job in
// savepointPath, status.savepoints and jobStatus.lastCheckpoint as the only record of both, and no
// ledger.
func asBeforeLedger(st *v1beta1.FlinkApplicationStatus) {
	for _, e := range st.Ledger {
		if e.Result != v1beta1.StatePending {
			continue
		}
		for _, r := range []*v1beta1.DeploymentRecord{st.Deployments.Stable, st.Deployments.Candidate} {
			if r != nil && r.JobID == e.JobID {
				purpose := e.Purpose
				if purpose != v1beta1.SavepointManual && purpose != v1beta1.SavepointPeriodic {
					purpose = ""
				}
				r.Savepoint = &v1beta1.SavepointTrigger{TriggerID: e.TriggerID, Time: *e.TriggerTime, Purpose: purpose}
			}
		}
	}
	if st.FinalSavepointPath == "" {
		st.SavepointPath = st.Deployments.NextRestorePath
	}
	st.Deployments.NextRestorePath, st.Ledger = "", nil
}

// Status written by the version before the ledger is migrated on its first read, wherever a path
// stands: the savepoint in flight is followed (not taken again), the state a stop left is what the
// next job starts from, and what status.savepoints recorded stays listed.
func TestStatusOfTheVersionBeforeTheLedgerIsMigrated(t *testing.T) {
	newImage := func(w *world) {
		w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	}
	cases := []struct {
		name   string
		spec   func(*v1beta1.FlinkApplicationSpec)
		change func(w *world)
		// at is where the previous version's status is written; for a savepoint in flight, once Flink
		// was asked for it.
		at    func(w *world, a *v1beta1.FlinkApplication) bool
		done  func(a *v1beta1.FlinkApplication) bool
		check func(t *testing.T, w *world, before, after *v1beta1.FlinkApplication)
	}{
		{"an update's savepoint in flight", nil, newImage,
			func(w *world, a *v1beta1.FlinkApplication) bool {
				return a.Status.SavepointTriggerID != "" && w.jm(a, a.Status.DeployHash).SavepointTriggers() == 1
			},
			func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseRunning && a.Spec.Image == "flink-wordcount:2" && a.Status.Deployments.Candidate == nil
			},
			func(t *testing.T, w *world, before, after *v1beta1.FlinkApplication) {
				assert.Equal(t, 1, savepointsTaken(w), "the savepoint in flight is followed, not taken again")
				assert.Equal(t, 1, w.jm(before, before.Status.DeployHash).SavepointTriggers(), "one trigger")
				assert.Contains(t, after.Status.JobStatus.RestorePath, "savepoint-", "the new job starts from it")
				require.NotEmpty(t, after.Status.Savepoints)
				assert.Equal(t, v1beta1.SavepointUpgrade, after.Status.Savepoints[len(after.Status.Savepoints)-1].Trigger)
			}},
		{"a LastState suspend resting on a checkpoint", func(s *v1beta1.FlinkApplicationSpec) { s.UpgradeMode = v1beta1.UpgradeModeLastState },
			func(w *world) {
				w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
			},
			func(_ *world, a *v1beta1.FlinkApplication) bool { return a.Status.Phase == v1beta1.PhaseSuspended },
			func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == v1beta1.PhaseSuspended },
			func(t *testing.T, w *world, before, after *v1beta1.FlinkApplication) {
				assert.Contains(t, before.Status.SavepointPath, "/chk-", "the previous version kept the checkpoint in savepointPath")
				assert.Equal(t, before.Status.SavepointPath, after.Status.Deployments.NextRestorePath, "the state to resume from is kept")
				assert.Empty(t, after.Status.SavepointPath, "and savepointPath no longer names a checkpoint")
				w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateRunning })
				resumed := w.runUntil("wc", "resumed", func(a *v1beta1.FlinkApplication) bool {
					return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.State == v1beta1.JobRunning
				})
				assert.Equal(t, before.Status.SavepointPath, resumed.Status.JobStatus.RestorePath, "resumed from exactly that state")
			}},
		{"a periodic savepoint in flight", func(s *v1beta1.FlinkApplicationSpec) {
			s.PeriodicSavepoint = &v1beta1.PeriodicSchedule{IntervalSeconds: 60}
		}, func(*world) {},
			func(w *world, a *v1beta1.FlinkApplication) bool {
				return a.Status.SavepointTriggerID != "" && savepointsTaken(w) == 1
			},
			func(a *v1beta1.FlinkApplication) bool { return len(a.Status.Savepoints) > 0 },
			func(t *testing.T, w *world, before, after *v1beta1.FlinkApplication) {
				assert.Equal(t, v1beta1.SavepointPeriodic, after.Status.Savepoints[0].Trigger)
				assert.Equal(t, "Completed", after.Status.Savepoints[0].Result)
				assert.Equal(t, 1, savepointsTaken(w), "the savepoint in flight is followed, not taken again")
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			runningWith(t, w, "wc", c.spec)
			c.change(w)
			at := w.runUntil("wc", "the point to migrate at", func(a *v1beta1.FlinkApplication) bool { return c.at(w, a) })
			asBeforeLedger(&at.Status)
			_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).UpdateStatus(context.Background(), at, metav1.UpdateOptions{})
			require.NoError(t, err)
			w.restartOperator()

			after := w.runUntil("wc", "path carried on", c.done)
			assert.Nil(t, after.Status.Deployments.Stable.Savepoint, "the record's trigger moved to the ledger")
			c.check(t, w, at, after)
			w.assertOneJobAtATime(w.events())
		})
	}
}
