package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func periodicEntry(trigger time.Time) v1beta1.StateEntry {
	t := metav1.NewTime(trigger)
	return v1beta1.StateEntry{Purpose: v1beta1.SavepointPeriodic, JobID: "job", TriggerID: "t1", TriggerTime: &t, Result: v1beta1.StatePending}
}

func TestLedgerWritesAreToldApartByWhatTheyDidToASavepoint(t *testing.T) {
	at := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	checkpoint := v1beta1.StateEntry{Purpose: v1beta1.StateCheckpoint, JobID: "job", Path: "file:///cp/1", Result: v1beta1.StateCompleted}
	asked := periodicEntry(at)
	ended := asked
	ended.Result, ended.Path, ended.Time, ended.Snapshot = v1beta1.StateCompleted, "file:///sp/1", asked.TriggerTime, "app-periodic-0000abcd"
	older := periodicEntry(at.Add(-10 * time.Minute))
	older.Result, older.Path = v1beta1.StateCompleted, "file:///sp/0"

	c := changeOfLedger([]v1beta1.StateEntry{checkpoint}, []v1beta1.StateEntry{checkpoint, asked})
	require.Equal(t, "asked", c.stages())
	require.Equal(t, 1, c.Asked)

	c = changeOfLedger([]v1beta1.StateEntry{older, asked}, []v1beta1.StateEntry{ended})
	require.Equal(t, "ended+named+trimmed", c.stages(), "the end, its FlinkSnapshot named and the oldest let go in one write")
	require.Equal(t, ledgerChange{Ended: 1, Named: 1, Trimmed: 1}, c)

	failed := asked
	failed.Result, failed.Reason = v1beta1.StateFailed, "declined"
	require.Equal(t, ledgerChange{Ended: 1, Failed: 1}, changeOfLedger([]v1beta1.StateEntry{asked}, []v1beta1.StateEntry{failed}))

	renamed := asked
	renamed.TriggerID = "flink-named"
	require.Equal(t, "triggered", changeOfLedger([]v1beta1.StateEntry{asked}, []v1beta1.StateEntry{renamed}).stages())

	newer := checkpoint
	newer.Path = "file:///cp/2"
	require.Empty(t, changeOfLedger([]v1beta1.StateEntry{checkpoint, ended}, []v1beta1.StateEntry{newer, ended}).stages(),
		"a checkpoint recorded is no savepoint's write")

	reasoned := ended
	reasoned.Reason = "something else"
	require.Equal(t, "changed", changeOfLedger([]v1beta1.StateEntry{ended}, []v1beta1.StateEntry{reasoned}).stages())
}

func TestFlinkSnapshotWritesAreToldApartByWhatTheyChanged(t *testing.T) {
	created := &v1beta1.FlinkSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "s", ResourceVersion: "1",
		Labels: map[string]string{v1beta1.SnapshotStateLabel: "Completed"}}}
	shown := created.DeepCopy()
	shown.ResourceVersion, shown.Status.State = "2", v1beta1.StateCompleted
	relabelled := shown.DeepCopy()
	relabelled.ResourceVersion, relabelled.Labels = "3", map[string]string{v1beta1.SnapshotStateLabel: "Failed"}
	managed := relabelled.DeepCopy()
	managed.ResourceVersion = "4"
	deleting := managed.DeepCopy()
	now := metav1.Now()
	deleting.ResourceVersion, deleting.DeletionTimestamp = "5", &now

	require.Equal(t, "create", snapshotWrite(nil, created))
	require.Equal(t, "status", snapshotWrite(created, shown))
	require.Equal(t, "metadata", snapshotWrite(shown, relabelled))
	require.Equal(t, "other", snapshotWrite(relabelled, managed))
	require.Equal(t, "delete requested", snapshotWrite(managed, deleting))

	r := newSnapshotRecorder()
	from := time.Now()
	r.observe(watch.Added, created, from)
	r.observe(watch.Modified, shown, from.Add(time.Second))
	r.observe(watch.Modified, shown, from.Add(2*time.Second)) // the same resourceVersion again: no write
	r.observe(watch.Deleted, shown, from.Add(3*time.Second))
	kinds, completed := r.between(from, from.Add(3*time.Second))
	require.Equal(t, map[string]int{"create": 1, "status": 1}, kinds, "the delete is after the window")
	require.Equal(t, 1, completed)
}

func TestSavepointCostIsPerAppHourAndPerSavepoint(t *testing.T) {
	c := savepointCounts{
		Apps: 10, Window: 30 * time.Minute, OwnerWrites: 70, OwnerWritesForSavepoints: 60, Savepoints: 30,
		SnapshotWrites: map[string]int{"create": 30, "status": 30, "metadata": 5, "delete": 10},
		SnapshotRequests: map[string]float64{"POST flinksnapshots": 30, "PUT flinksnapshots/status": 90, "PATCH flinksnapshots": 5,
			"DELETE flinksnapshots": 10, "GET flinksnapshots": 4},
	}.cost()
	// 10 apps for half an hour are 5 app-hours.
	require.InDelta(t, 14, c.OwnerWritesPerAppHour, 1e-9)
	require.InDelta(t, 13, c.SnapshotWritesPerAppHour, 1e-9, "deletes are counted apart")
	require.InDelta(t, 6, c.SavepointsPerAppHour, 1e-9)
	require.InDelta(t, 2, c.OwnerWritesNotForSavepointsPerAppHour, 1e-9)
	require.InDelta(t, 2, c.SnapshotDeletesPerAppHour, 1e-9)
	require.InDelta(t, 2, c.OwnerWritesPerSavepoint, 1e-9)
	require.InDelta(t, 65.0/30, c.SnapshotWritesPerSavepoint, 1e-9)
	require.Equal(t, 5, c.SnapshotWritesBeyondNeeded)
	require.Equal(t, 125, c.SnapshotWriteRequests, "creates, updates and patches; no deletes, no reads")
	require.Equal(t, 60, c.SnapshotRequestsForNothing, "90 status updates for 30 status writes")
	require.InDelta(t, 125.0/30, c.SnapshotWriteRequestsPerSavepoint, 1e-9)

	none := savepointCounts{Apps: 10, Window: time.Hour, OwnerWrites: 3}.cost()
	require.Zero(t, none.OwnerWritesPerSavepoint, "no savepoint, no ratio (and no NaN in the JSON)")
	require.InDelta(t, 0.3, none.OwnerWritesNotForSavepointsPerAppHour, 1e-9)
	require.Equal(t, savepointCost{}, savepointCounts{}.cost())
}

func TestTheSavepointingGroupIsAFractionOfTheFleetAndAtLeastOne(t *testing.T) {
	require.Equal(t, 100, savepointingGroupSize(1000, 0.1))
	require.Equal(t, 1, savepointingGroupSize(5, 0.1))
	require.Equal(t, 0, savepointingGroupSize(1000, 0))
	require.Equal(t, "asked 3, ended+named 2, (no savepoint entry) 1", describeCounts(map[string]int{"asked": 3, "ended+named": 2, "": 1}))
	require.Equal(t, 10*time.Minute, (&savepointing{interval: 10 * time.Minute}).window(3*time.Minute))
	require.Equal(t, 3*time.Minute, (&savepointing{interval: time.Minute}).window(3*time.Minute))
}

func TestOwnerWritesInTheWindowAreCountedBySavepointStage(t *testing.T) {
	at := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	app := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "1"}}
	asked := app.DeepCopy()
	asked.ResourceVersion, asked.Status.Ledger = "2", []v1beta1.StateEntry{periodicEntry(at)}
	ended := asked.DeepCopy()
	ended.ResourceVersion = "3"
	ended.Status.Ledger[0].Result, ended.Status.Ledger[0].Path, ended.Status.Ledger[0].Snapshot = v1beta1.StateCompleted, "file:///sp/1", "a-periodic-1"
	touched := ended.DeepCopy()
	touched.ResourceVersion, touched.Status.Phase = "4", v1beta1.PhaseRunning

	r := newRecorder()
	from := time.Now()
	for i, v := range []*v1beta1.FlinkApplication{app, asked, ended, touched} {
		r.observe(watch.Modified, v, from.Add(time.Duration(i)*time.Second))
	}
	w := r.savepointWritesBetween([]string{"ns/a"}, from, from.Add(time.Minute))
	require.Equal(t, ownerWrites{all: 3, forSavepoints: 2, asked: 1, ended: 1,
		byStage: map[string]int{"asked": 1, "ended+named": 1, "": 1}}, w)
}
