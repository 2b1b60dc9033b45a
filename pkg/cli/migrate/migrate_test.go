package migrate

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A FlinkDeployment in application mode moves end to end: suspended with a savepoint through its
// own spec, the savepoint proven from the status the Apache operator writes, a FlinkApplication
// created starting from exactly that savepoint, and the FlinkDeployment left suspended.
func TestMigratesAFlinkDeploymentFromItsSuspendSavepoint(t *testing.T) {
	w := newWorld(t, runningDeployment(upgradeLastState))
	w.apache.delay = 2
	require.NoError(t, w.run(w.request()))

	assert.Equal(t, 1, w.apache.stops, "one stop with savepoint")
	assert.Equal(t, 1, w.creates)
	app := w.application("orders")
	require.NotNil(t, app)
	assert.Equal(t, w.apache.savepoint, app.Spec.SavepointPath, "starts from exactly the savepoint the suspend recorded")
	assert.Equal(t, v1beta1.JobStateRunning, app.Spec.State)
	assert.Equal(t, v1beta1.UpgradeModeLastState, app.Spec.UpgradeMode, "the job's own upgrade mode, not the one the suspend used")
	assert.Equal(t, "uid-orders", app.Annotations[FromUIDAnnotation])
	assert.NotContains(t, app.Annotations, RecordAnnotation, "the record stays on the Apache object")

	u := w.apache.object()
	assert.Equal(t, jobSuspended, nested(u, "spec", "job", "state"), "left suspended, not deleted")
	assert.Equal(t, upgradeSavepoint, nested(u, "spec", "job", "upgradeMode"))
	r := w.record()
	require.NotNil(t, r)
	assert.Equal(t, stepCreated, r.Step)
	assert.Equal(t, w.apache.savepoint, r.Savepoint)
	assert.Equal(t, upgradeLastState, r.Original.UpgradeMode)
	assert.Equal(t, startMillis-10_000, r.Before.ReconciledAt)

	out := w.out.String()
	for _, step := range []string{
		"asked flink.apache.org FlinkDeployment/orders to suspend with a savepoint",
		"waiting for the Apache operator to record it",
		"savepoint " + w.apache.savepoint + " recorded at 2026-01-01T12:01:01Z; job FINISHED",
		"created FlinkApplication/orders starting from " + w.apache.savepoint,
		"left FlinkDeployment/orders suspended; delete it when you no longer need it",
		"warning: FlinkDeployment/orders: spec.jobManager.resource.cpu",
	} {
		assert.Contains(t, out, step)
	}

	// Run again: the migration is done, and nothing more happens.
	require.NoError(t, w.run(w.request()))
	assert.Equal(t, 1, w.apache.stops)
	assert.Equal(t, 1, w.creates)
}

// The real converter's FlinkApplication is what the migration creates, starting from the savepoint.
func TestMigratesAFlinkDeploymentWithTheRealConverter(t *testing.T) {
	w := newWorld(t, runningDeployment(upgradeLastState))
	w.convert = realConvert
	require.NoError(t, w.run(w.request()))
	app := w.application("orders")
	require.NotNil(t, app)
	assert.Equal(t, w.apache.savepoint, app.Spec.SavepointPath)
	assert.Equal(t, v1beta1.JobStateRunning, app.Spec.State)
	assert.Equal(t, v1beta1.UpgradeModeLastState, app.Spec.UpgradeMode)
	assert.Equal(t, "flink:1.20", app.Spec.Image)
	assert.Equal(t, "uid-orders", app.Annotations[FromUIDAnnotation])
	assert.NotContains(t, w.out.String(), "finalizers", "the Apache operator's finalizer is not the converter's to name")
}

// What the stopped Apache deployment keeps under the FlinkApplication's names is named, with how
// to free it.
func TestLeftoversOfTheApacheDeploymentAreNamed(t *testing.T) {
	obj := runningDeployment(upgradeSavepoint)
	require.NoError(t, unstructured.SetNestedField(obj.Object, map[string]interface{}{"template": "{{name}}.flink.example.com"}, "spec", "ingress"))
	w := newWorld(t, obj)
	w.convert = realConvert
	controller := true
	for gvr, owner := range map[schema.GroupVersionResource]metav1.OwnerReference{
		services:  {APIVersion: "apps/v1", Kind: "Deployment", Name: "orders", UID: "uid-jm", Controller: &controller},
		ingresses: {APIVersion: "flink.apache.org/v1beta1", Kind: "FlinkDeployment", Name: "orders", UID: "uid-orders", Controller: &controller},
	} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(gvr.GroupVersion().String())
		u.SetKind(map[string]string{"services": "Service", "ingresses": "Ingress"}[gvr.Resource])
		u.SetName("orders")
		u.SetNamespace(namespace)
		u.SetOwnerReferences([]metav1.OwnerReference{owner})
		require.NoError(t, w.apache.client.Tracker().Create(gvr, u, namespace))
	}
	// The stopped JobManager's Service holds the application's stable Service's name: a
	// FlinkApplication created now would fail its deploy (e2e: DeployFailed after its retries,
	// and for good), so the migration stops before it, the savepoint recorded, and says how to
	// free the name.
	err := w.run(w.request())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Service jobs/orders is the stopped Apache JobManager's")
	assert.Contains(t, err.Error(), "kubectl delete deployment orders -n jobs")
	assert.Nil(t, w.application("orders"), "nothing is created while the name is held")
	require.NoError(t, w.apache.client.Tracker().Delete(services, namespace, "orders"))
	require.NoError(t, w.run(w.request()))
	assert.NotNil(t, w.application("orders"))
	assert.Equal(t, 1, w.apache.stops, "one savepoint")
	assert.Contains(t, w.out.String(), "warning: Ingress jobs/orders is FlinkDeployment/orders's (spec.ingress)")
}

// A FlinkSessionJob moves to a FlinkSessionJob on the FlinkSessionCluster of its cluster's name,
// converted by the real converter; with snapshot resources on, the savepoint is proven from the
// FlinkStateSnapshot the Apache operator creates for it.
func TestMigratesASessionJobProvenByItsUpgradeSnapshot(t *testing.T) {
	w := newWorld(t, runningSessionJob(upgradeSavepoint), sessionCluster())
	w.apache.snapshotResources = true
	require.NoError(t, w.run(w.request()))

	assert.Equal(t, 1, w.apache.stops)
	job := w.sessionJob("etl")
	require.NotNil(t, job)
	assert.Equal(t, w.apache.savepoint, job.Spec.Job.InitialSavepointPath)
	assert.Equal(t, v1beta1.JobStateRunning, job.Spec.Job.State)
	assert.Equal(t, "session", job.Spec.ClusterName)
	assert.Equal(t, []string{"--window", "5m"}, job.Spec.Job.Args)
	assert.Equal(t, "uid-etl", job.Annotations[FromUIDAnnotation])
	assert.Equal(t, jobSuspended, nested(w.apache.object(), "spec", "job", "state"))
	assert.Contains(t, w.record().ProvenBy, "FlinkStateSnapshot etl-savepoint-upgrade-")
	assert.Contains(t, w.out.String(), "created FlinkSessionJob/etl starting from "+w.apache.savepoint)
}

// The migration is interrupted after each of its writes, the write refused or applied with its
// answer lost, and run again: each time the job is stopped once, one object is created, and the
// end is the same as without the interruption.
func TestAnInterruptionAfterEveryWriteResumes(t *testing.T) {
	for _, c := range []struct {
		name string
		obj  func() *unstructured.Unstructured
	}{
		{"FlinkDeployment", func() *unstructured.Unstructured { return runningDeployment(upgradeSavepoint) }},
		{"FlinkSessionJob", func() *unstructured.Unstructured { return runningSessionJob(upgradeLastState) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			reference := newWorld(t, c.obj(), sessionCluster())
			reference.apache.delay = 1
			require.NoError(t, reference.run(reference.request()))
			writes := reference.faults.writes
			require.Equal(t, 4, writes, "the record with the suspend, the savepoint, the object, the end")
			want := createdSpec(t, reference)

			for k := 1; k <= writes; k++ {
				for _, lost := range []bool{false, true} {
					t.Run(fmt.Sprintf("write %d lost %v", k, lost), func(t *testing.T) {
						w := newWorld(t, c.obj(), sessionCluster())
						w.apache.delay = 1
						w.faults.at, w.faults.lost = k, lost
						require.Error(t, w.run(w.request()))

						*w.faults = faults{} // the process starts again
						require.NoError(t, w.run(w.request()))
						assert.Equal(t, 1, w.apache.stops, "exactly one savepoint asked for")
						assert.Equal(t, 1, w.creates, "exactly one object created")
						assert.Equal(t, want, createdSpec(t, w))
						assert.Equal(t, stepCreated, w.record().Step)
						assert.Equal(t, jobSuspended, nested(w.apache.object(), "spec", "job", "state"))
					})
				}
			}
		})
	}
}

// createdSpec is the spec of the object a migration created, the savepoint included.
func createdSpec(t *testing.T, w *world) interface{} {
	if w.apache.kind == FlinkDeployment {
		app := w.application(w.apache.name)
		require.NotNil(t, app)
		return app.Spec
	}
	job := w.sessionJob(w.apache.name)
	require.NotNil(t, job)
	return job.Spec
}

// The operator writes its status between the migration's read and its request: the request,
// made on that read, is refused by resourceVersion and made again on what is there now.
func TestTheRequestIsMadeOnTheObjectAsItIs(t *testing.T) {
	w := newWorld(t, runningDeployment(upgradeSavepoint))
	w.apache.raceOnce = true
	require.NoError(t, w.run(w.request()))
	assert.Equal(t, 1, w.apache.conflicts)
	assert.Equal(t, 1, w.apache.stops)
	assert.Equal(t, 1, w.creates)
}

// A job that does not stop within --timeout leaves its record and says how to go on; the next run
// waits for the same suspend, and asks for no second savepoint.
func TestAJobThatDoesNotStopInTimeLeavesTheRecord(t *testing.T) {
	w := newWorld(t, runningDeployment(upgradeSavepoint))
	w.apache.stall = true
	req := w.request()
	req.Timeout = time.Minute
	err := w.run(req)
	require.Error(t, err)
	assert.Equal(t, TimedOut, reason(t, err))
	assert.Contains(t, err.Error(), "did not stop the job and record it within 1m0s")
	assert.Contains(t, err.Error(), "run the same command again to continue waiting")
	assert.Contains(t, w.out.String(), "waiting: status.reconciliationStatus.lastReconciledSpec has job.state running")
	assert.Equal(t, stepSuspendRequested, w.record().Step)
	assert.Nil(t, w.application("orders"), "nothing created while the job may still run")

	w.apache.stall = false
	require.NoError(t, w.run(w.request()))
	assert.Equal(t, 1, w.apache.stops)
	assert.Equal(t, w.apache.savepoint, w.application("orders").Spec.SavepointPath)
	assert.Contains(t, w.out.String(), "continuing", "a resumed run says so")
}

// --dry-run prints the plan and writes nothing.
func TestDryRunChangesNothing(t *testing.T) {
	w := newWorld(t, runningDeployment(upgradeSavepoint))
	req := w.request()
	req.DryRun = true
	before := w.apache.object()
	require.NoError(t, w.run(req))
	assert.Equal(t, 0, w.faults.writes)
	assert.Equal(t, 0, w.apache.stops)
	assert.Equal(t, before, w.apache.object())
	assert.Nil(t, w.application("orders"))
	assert.Contains(t, w.out.String(), "dry run: nothing is changed")
	assert.Contains(t, w.out.String(), "set spec.job.state suspended and spec.job.upgradeMode savepoint")
	assert.Contains(t, w.out.String(), "create FlinkApplication/orders starting from that savepoint")
}

// A job the Apache operator suspended with a savepoint before the migration moves from that
// savepoint, without being asked for another.
func TestAJobSuspendedWithASavepointMovesFromIt(t *testing.T) {
	w := newWorld(t, runningDeployment(upgradeSavepoint))
	suspendByHand(t, w)
	stopsBefore := w.apache.stops
	require.NoError(t, w.run(w.request()))
	assert.Equal(t, stopsBefore, w.apache.stops)
	assert.Equal(t, w.apache.savepoint, w.application("orders").Spec.SavepointPath)
	assert.True(t, w.record().AlreadySuspended)
	assert.Contains(t, w.out.String(), "is suspended already: savepoint "+w.apache.savepoint)
}

// suspendByHand is a user suspending the job with a savepoint before any migration.
func suspendByHand(t *testing.T, w *world) {
	u := w.apache.object()
	require.NoError(t, unstructured.SetNestedField(u.Object, jobSuspended, "spec", "job", "state"))
	u.SetGeneration(u.GetGeneration() + 1)
	w.apache.store(u)
	w.apache.reconcile()
	require.Equal(t, 1, w.apache.stops)
}

func nested(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}
