package migrate

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A stateless job would start empty: refused unless --allow-stateless accepts that, and then it
// is cancelled without a savepoint and starts without state, not from the savepoint it once
// started from.
func TestAStatelessJobMovesOnlyWhenAllowed(t *testing.T) {
	for _, mode := range []string{upgradeStateless, ""} {
		obj := runningDeployment(mode)
		require.NoError(t, unstructured.SetNestedField(obj.Object, "s3://flink-state/savepoints/savepoint-from-2025", "spec", "job", "initialSavepointPath"))
		w := newWorld(t, obj)
		err := w.run(w.request())
		require.Error(t, err)
		assert.Equal(t, Refused, reason(t, err))
		assert.Contains(t, err.Error(), "--allow-stateless")
		assert.Equal(t, 0, w.faults.writes, "nothing written")

		req := w.request()
		req.AllowStateless = true
		require.NoError(t, w.run(req))
		assert.Equal(t, 1, w.apache.stops)
		assert.Equal(t, "", w.apache.savepoint, "no savepoint asked for")
		assert.Equal(t, mode, nested(w.apache.object(), "spec", "job", "upgradeMode"), "the upgrade mode is left as it was")
		app := w.application("orders")
		require.NotNil(t, app)
		assert.Empty(t, app.Spec.SavepointPath)
		assert.Equal(t, v1beta1.JobStateRunning, app.Spec.State)
		assert.Contains(t, w.out.String(), "created FlinkApplication/orders starting from no state (stateless)")
	}
}

// An object of the target's name that this migration did not create is refused: before anything
// is changed when it is there at the start; with the job left stopped and the record kept when it
// appears while the job is being stopped, and the migration goes on once it is gone.
func TestAnObjectNotCreatedByTheMigrationIsRefused(t *testing.T) {
	theirs := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: namespace}}
	w := newWorld(t, runningDeployment(upgradeSavepoint), theirs)
	err := w.run(w.request())
	require.Error(t, err)
	assert.Equal(t, Refused, reason(t, err))
	assert.Contains(t, err.Error(), "FlinkApplication/orders exists already (not by a migration of it)")
	assert.Equal(t, 0, w.faults.writes)
	assert.Equal(t, 0, w.apache.stops)

	w = newWorld(t, runningDeployment(upgradeSavepoint))
	w.apache.onSuspend = func() {
		require.NoError(t, w.fsm.Tracker().Add(theirs.DeepCopy()))
	}
	err = w.run(w.request())
	require.Error(t, err)
	assert.Equal(t, Refused, reason(t, err))
	assert.Contains(t, err.Error(), "exists and was not created by this migration")
	assert.Equal(t, stepCreating, w.record().Step)
	assert.Empty(t, w.application("orders").Spec.SavepointPath, "their object is left as it is")

	require.NoError(t, w.fsm.FlinkV1beta1().FlinkApplications(namespace).Delete(context.Background(), "orders", metav1.DeleteOptions{}))
	require.NoError(t, w.run(w.request()))
	assert.Equal(t, 1, w.apache.stops)
	assert.Equal(t, w.apache.savepoint, w.application("orders").Spec.SavepointPath)
}

// What the Apache operator records after the stop does not prove its savepoint the newest state:
// nothing is created, the record stays, and running again refuses again without a second stop.
func TestASavepointThatCannotBeProvenNewestIsRefused(t *testing.T) {
	for _, c := range []struct {
		name   string
		set    func(*fakeApache)
		fields string
	}{
		{"a newer checkpoint", func(a *fakeApache) { a.newerCheckpoint = true },
			"status.jobStatus.checkpointInfo.lastCheckpoint.timeStamp"},
		{"a second savepoint", func(a *fakeApache) { a.secondSavepoint = true },
			"status.jobStatus.savepointInfo also records savepoint s3://flink-state/savepoints/savepoint-periodic"},
		{"upgradeSavepointPath alone", func(a *fakeApache) { a.uncorroborated = true },
			"is recorded neither in status.jobStatus.savepointInfo.lastSavepoint"},
		{"a stop without savepoint", func(a *fakeApache) {
			a.afterSuspend = func(u *unstructured.Unstructured) {
				spec := reconciledSpec(t, u)
				spec["job"].(map[string]interface{})["upgradeMode"] = upgradeLastState
				_ = unstructured.SetNestedField(u.Object, lastReconciled(spec), "status", "reconciliationStatus", "lastReconciledSpec")
			}
		}, "lastReconciledSpec has job.upgradeMode last-state"},
		{"a second savepoint snapshot", func(a *fakeApache) {
			a.snapshotResources = true
			a.onSuspend = func() { createSnapshot(t, a, "orders-savepoint-periodic-1", "PERIODIC", a.clock) }
		}, "FlinkStateSnapshot orders-savepoint-periodic-1 records a savepoint"},
		{"the job started after", func(a *fakeApache) {
			a.afterSuspend = func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "1767268999999", "status", "jobStatus", "startTime")
			}
		}, "status.jobStatus.startTime 2026-01-01T12:03:19.999Z is after the savepoint"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, runningDeployment(upgradeSavepoint))
			c.set(w.apache)
			err := w.run(w.request())
			require.Error(t, err)
			assert.Equal(t, Failed, reason(t, err))
			assert.Contains(t, err.Error(), c.fields)
			assert.Contains(t, err.Error(), "Nothing was created")
			assert.Nil(t, w.application("orders"))
			assert.Equal(t, stepSuspendRequested, w.record().Step)

			err = w.run(w.request())
			require.Error(t, err)
			assert.Equal(t, Failed, reason(t, err))
			assert.Equal(t, 1, w.apache.stops)
		})
	}
}

// createSnapshot is a FlinkStateSnapshot of the job's savepoint, completed.
func createSnapshot(t *testing.T, a *fakeApache, name, trigger string, at int64) {
	s := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": ApacheGroup + "/" + apacheVersion, "kind": "FlinkStateSnapshot",
		"metadata": map[string]interface{}{"name": name, "namespace": a.ns, "labels": map[string]interface{}{snapshotTriggerLabel: trigger}},
		"spec": map[string]interface{}{"jobReference": map[string]interface{}{"kind": a.kind.Name, "name": a.name},
			"savepoint": map[string]interface{}{"disposeOnDelete": true}},
		"status": map[string]interface{}{"state": "COMPLETED", "path": "s3://flink-state/savepoints/" + name},
	}}
	s.SetCreationTimestamp(metav1.NewTime(time.UnixMilli(at).Truncate(time.Second)))
	require.NoError(t, a.client.Tracker().Create(FlinkStateSnapshots, s, a.ns))
}

// The Apache operator reports that the savepoint failed: the migration ends saying so, naming the
// field and how to give the job back; once the operator's retry succeeds, running again finishes.
func TestASavepointTheApacheOperatorReportsFailedIsRefused(t *testing.T) {
	w := newWorld(t, runningSessionJob(upgradeSavepoint), sessionCluster())
	w.apache.savepointFails = true
	err := w.run(w.request())
	require.Error(t, err)
	assert.Equal(t, Failed, reason(t, err))
	assert.Contains(t, err.Error(), "the Apache operator reports in status.error: UpgradeFailureException: Savepoint Error")
	assert.Contains(t, err.Error(), `kubectl patch flinksessionjobs.flink.apache.org etl -n jobs --type merge`)
	assert.Contains(t, err.Error(), `"upgradeMode":"savepoint"`)
	assert.Nil(t, w.sessionJob("etl"))
	assert.Equal(t, stepSuspendRequested, w.record().Step)
	assert.Equal(t, 0, w.apache.stops)

	w.apache.savepointFails = false
	require.NoError(t, w.run(w.request()))
	assert.Equal(t, 1, w.apache.stops)
	assert.Equal(t, w.apache.savepoint, w.sessionJob("etl").Spec.Job.InitialSavepointPath)
}

// Jobs the Apache operator is not running steadily, or objects with no job, are refused before
// anything is changed, each naming the field that decided.
func TestObjectsThatCannotMoveAreRefusedUntouched(t *testing.T) {
	for _, c := range []struct {
		name   string
		obj    func() *unstructured.Unstructured
		fields string
	}{
		{"a failed job", func() *unstructured.Unstructured {
			u := runningDeployment(upgradeSavepoint)
			_ = unstructured.SetNestedField(u.Object, "FAILED", "status", "jobStatus", "state")
			_ = unstructured.SetNestedField(u.Object, "s3://flink-state/savepoints/savepoint-old", "status", "jobStatus", "upgradeSavepointPath")
			return u
		}, "the job is FAILED, not RUNNING (status.jobStatus.state)"},
		{"a spec change not reconciled", func() *unstructured.Unstructured {
			u := runningDeployment(upgradeSavepoint)
			u.SetGeneration(2)
			return u
		}, "metadata.generation 2, status.observedGeneration 1"},
		{"an upgrade under way", func() *unstructured.Unstructured {
			u := runningDeployment(upgradeSavepoint)
			_ = unstructured.SetNestedField(u.Object, "UPGRADING", "status", "reconciliationStatus", "state")
			return u
		}, "status.reconciliationStatus.state UPGRADING"},
		{"a session cluster", func() *unstructured.Unstructured {
			u := runningDeployment(upgradeSavepoint)
			unstructured.RemoveNestedField(u.Object, "spec", "job")
			return u
		}, "is a session cluster (no spec.job)"},
		{"never deployed", func() *unstructured.Unstructured {
			u := runningDeployment(upgradeSavepoint)
			unstructured.RemoveNestedField(u.Object, "status", "reconciliationStatus", "lastReconciledSpec")
			return u
		}, "status.reconciliationStatus.lastReconciledSpec is empty"},
		{"a record that is not one", func() *unstructured.Unstructured {
			u := runningDeployment(upgradeSavepoint)
			u.SetAnnotations(map[string]string{RecordAnnotation: "yes"})
			return u
		}, "which is not a migration record"},
		{"a session job without its cluster", func() *unstructured.Unstructured {
			return runningSessionJob(upgradeSavepoint)
		}, "runs on FlinkSessionCluster session, which flinkfsm does not have"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, c.obj())
			before := w.apache.object()
			err := w.run(w.request())
			require.Error(t, err)
			assert.Equal(t, Refused, reason(t, err))
			assert.Contains(t, err.Error(), c.fields)
			assert.Equal(t, 0, w.faults.writes)
			assert.Equal(t, before, w.apache.object())
		})
	}
}

// A job suspended before the migration with upgradeMode last-state has no savepoint proven its
// newest state: refused, with what to do instead.
func TestAJobSuspendedWithLastStateIsRefused(t *testing.T) {
	w := newWorld(t, runningDeployment(upgradeLastState))
	suspendByHand(t, w)
	err := w.run(w.request())
	require.Error(t, err)
	assert.Equal(t, Refused, reason(t, err))
	assert.Contains(t, err.Error(), "is suspended already, and what it records does not prove which state is newest")
	assert.Contains(t, err.Error(), "lastReconciledSpec has job.upgradeMode last-state")
	assert.Contains(t, err.Error(), "Resume it (spec.job.state running)")
	assert.Equal(t, 0, w.faults.writes)
}

// An Apache object resumed after its migration (its old manifest applied again, say) runs the job
// beside flinkfsm's: a run of the migration says so and fails; an object a sync tool applies is
// warned of before anything is changed.
func TestAnApacheObjectResumedAfterTheMigrationIsReported(t *testing.T) {
	obj := runningDeployment(upgradeSavepoint)
	obj.SetAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": "payments:flink.apache.org/FlinkDeployment:jobs/orders"})
	w := newWorld(t, obj)
	require.NoError(t, w.run(w.request()))
	assert.Contains(t, w.out.String(), "warning: FlinkDeployment/orders is applied by Argo CD: set spec.job.state suspended in its source")

	u := w.apache.object()
	require.NoError(t, unstructured.SetNestedField(u.Object, jobRunning, "spec", "job", "state"))
	w.apache.store(u)
	err := w.run(w.request())
	require.Error(t, err)
	assert.Equal(t, Failed, reason(t, err))
	assert.Contains(t, err.Error(), "was migrated to FlinkApplication/orders, but its spec.job.state is running again")
	assert.Equal(t, 1, w.creates)
}
