package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/integ/apachefake"
)

// fakeApache is an API server holding one Apache object, and the Apache operator 1.16 acting on
// it as its source does, in what integ/apachefake writes (which the end-to-end test of kubectl
// flink migrate plays on a real API server too): a spec with job.state suspended and upgradeMode savepoint stops the job with a savepoint, then one
// status write records job state FINISHED, upgradeSavepointPath, either savepointInfo.lastSavepoint
// (triggerType UPGRADE, timeStamp the cancel's start) or, with snapshot resources on, a FlinkStateSnapshot
// labelled UPGRADE created just before, and the suspended spec as lastReconciledSpec.
//
// The operator acts when the object is read, after `delay` reads, so that a migration sees the
// object before and after as it would between polls.
type fakeApache struct {
	t      *testing.T
	client *dynamicfake.FakeDynamicClient
	kind   Kind
	ns     string
	name   string
	faults *faults

	// How the operator behaves.
	snapshotResources bool                             // kubernetes.operator.snapshot.resource.enabled
	delay             int                              // reads after the suspend before it acts
	stall             bool                             // never acts
	savepointFails    bool                             // Flink's stop-with-savepoint fails: status.error, the job runs on
	newerCheckpoint   bool                             // a checkpoint recorded after the savepoint
	secondSavepoint   bool                             // a second savepoint recorded, not older than the upgrade's
	uncorroborated    bool                             // upgradeSavepointPath written without its savepointInfo record
	onSuspend         func()                           // called as the operator stops the job
	afterSuspend      func(*unstructured.Unstructured) // changes what it writes after

	// What it did.
	stops     int    // jobs it stopped (with a savepoint, or cancelled for stateless)
	savepoint string // the last savepoint it took
	reads     int
	clock     int64 // the operator's clock, ms
	conflicts int   // resourceVersion preconditions it refused
	raceOnce  bool  // writes its status once between the migration's read and its patch
}

// faults interrupts the migration at its k-th write, to both API servers: the write is refused,
// or (lost) applied but its answer lost. Every later write fails too, as a stopped process makes none.
type faults struct {
	writes, at int
	lost       bool
	stopped    bool
}

var errInterrupted = errors.New("connection reset by peer (interrupted)")

// write decides the fate of one write: apply it, and the error to answer with.
func (f *faults) write() (apply bool, err error) {
	if f.stopped {
		return false, errInterrupted
	}
	f.writes++
	if f.at != 0 && f.writes == f.at {
		f.stopped = true
		return f.lost, errInterrupted
	}
	return true, nil
}

func newFakeApache(t *testing.T, obj *unstructured.Unstructured, f *faults) *fakeApache {
	kind := FlinkDeployment
	if obj.GetKind() == FlinkSessionJob.Name {
		kind = FlinkSessionJob
	}
	a := &fakeApache{t: t, kind: kind, ns: obj.GetNamespace(), name: obj.GetName(), faults: f, clock: startMillis + 60_000}
	a.client = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), ListKinds, obj)
	a.client.PrependReactor("get", kind.Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		a.reads++
		a.reconcile()
		return false, nil, nil
	})
	a.client.PrependReactor("patch", kind.Resource, a.patch)
	return a
}

func (a *fakeApache) object() *unstructured.Unstructured {
	o, err := a.client.Tracker().Get(a.kind.resource(), a.ns, a.name)
	if err != nil {
		a.t.Fatalf("the Apache object: %v", err)
	}
	return o.(*unstructured.Unstructured)
}

func (a *fakeApache) store(u *unstructured.Unstructured) {
	rv, _ := strconv.Atoi(u.GetResourceVersion())
	u.SetResourceVersion(strconv.Itoa(rv + 1))
	if err := a.client.Tracker().Update(a.kind.resource(), u, a.ns); err != nil {
		a.t.Fatalf("storing the Apache object: %v", err)
	}
}

// patch is the API server's merge patch of the main resource: status is a subresource it leaves
// alone; metadata.resourceVersion in the patch is a precondition; a spec change bumps generation.
func (a *fakeApache) patch(action k8stesting.Action) (bool, runtime.Object, error) {
	p := action.(k8stesting.PatchAction)
	if p.GetPatchType() != types.MergePatchType {
		return true, nil, fmt.Errorf("the fake takes merge patches, not %s", p.GetPatchType())
	}
	if a.raceOnce {
		a.raceOnce = false
		u := a.object()
		_ = unstructured.SetNestedField(u.Object, strconv.FormatInt(a.clock, 10), "status", "jobStatus", "updateTime")
		a.store(u)
	}
	apply, ferr := a.faults.write()
	if !apply {
		return true, nil, ferr
	}
	var patch map[string]interface{}
	if err := json.Unmarshal(p.GetPatch(), &patch); err != nil {
		return true, nil, err
	}
	cur := a.object()
	if rv, ok, _ := unstructured.NestedString(patch, "metadata", "resourceVersion"); ok && rv != cur.GetResourceVersion() {
		a.conflicts++
		return true, nil, apierrors.NewConflict(a.kind.resource().GroupResource(), a.name, errors.New("the object has been modified"))
	}
	unstructured.RemoveNestedField(patch, "metadata", "resourceVersion")
	delete(patch, "status")
	merged := mergePatch(cur.DeepCopy().Object, patch).(map[string]interface{})
	u := &unstructured.Unstructured{Object: merged}
	if !reflect.DeepEqual(cur.Object["spec"], merged["spec"]) {
		u.SetGeneration(cur.GetGeneration() + 1)
	}
	a.store(u)
	if ferr != nil {
		return true, nil, ferr
	}
	return true, a.object(), nil
}

// mergePatch applies a JSON merge patch (RFC 7386).
func mergePatch(target, patch interface{}) interface{} {
	p, ok := patch.(map[string]interface{})
	if !ok {
		return patch
	}
	t, ok := target.(map[string]interface{})
	if !ok {
		t = map[string]interface{}{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

// reconcile is one pass of the Apache operator over the object: apachefake writes what 1.16 does,
// and the fake's knobs change it.
func (a *fakeApache) reconcile() {
	u := a.object()
	asked, err := apachefake.SuspendAsked(u)
	if err != nil {
		a.t.Fatalf("the Apache object: %v", err)
	}
	if !asked || a.stall {
		return
	}
	if a.delay > 0 {
		a.delay--
		return
	}
	a.clock += 1000
	stop := apachefake.Stop{CancelAt: a.clock, SnapshotResources: a.snapshotResources, Unrecorded: a.uncorroborated}
	mode, _, _ := unstructured.NestedString(u.Object, "spec", "job", "upgradeMode")
	if mode == upgradeSavepoint && a.savepointFails {
		apachefake.SavepointError(u)
		a.store(u)
		return
	}
	a.stops++
	if a.onSuspend != nil {
		a.onSuspend()
	}
	if mode == upgradeSavepoint {
		a.savepoint = fmt.Sprintf("s3://flink-state/savepoints/savepoint-%s-%04d", jobIDPrefix, a.stops)
		stop.Savepoint = a.savepoint
	}
	a.clock += 20
	stop.ReconciledAt = a.clock
	if err := stop.Record(u); err != nil {
		a.t.Fatalf("recording the stop: %v", err)
	}
	if stop.Savepoint != "" && a.snapshotResources && !a.uncorroborated {
		snap := stop.Snapshot(u, stop.CancelAt)
		apachefake.CompleteSnapshot(snap, time.UnixMilli(stop.CancelAt))
		if err := a.client.Tracker().Create(FlinkStateSnapshots, snap, a.ns); err != nil {
			a.t.Fatalf("creating the upgrade FlinkStateSnapshot: %v", err)
		}
	}
	if stop.Savepoint != "" {
		jobStatus := u.Object["status"].(map[string]interface{})["jobStatus"].(map[string]interface{})
		info := jobStatus["savepointInfo"].(map[string]interface{})
		if a.secondSavepoint {
			history, _ := info["savepointHistory"].([]interface{})
			info["savepointHistory"] = append(history, map[string]interface{}{
				"timeStamp": stop.CancelAt + 5, "location": "s3://flink-state/savepoints/savepoint-periodic", "triggerType": "PERIODIC", "formatType": "CANONICAL"})
		}
		if a.newerCheckpoint {
			jobStatus["checkpointInfo"].(map[string]interface{})["lastCheckpoint"] = map[string]interface{}{
				"timeStamp": stop.CancelAt + 7, "triggerType": "PERIODIC", "formatType": "FULL"}
		}
	}
	if a.afterSuspend != nil {
		a.afterSuspend(u)
	}
	a.store(u)
}

// lastReconciled is status.reconciliationStatus.lastReconciledSpec as the Apache operator writes it.
func lastReconciled(spec map[string]interface{}) string { return apachefake.LastReconciledSpec(spec) }

func reconciledSpec(t *testing.T, u *unstructured.Unstructured) map[string]interface{} {
	spec, err := apachefake.ReconciledSpec(u)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

const (
	startMillis = int64(1_767_268_800_000) // 2026-01-01T12:00:00Z
	jobIDPrefix = "3f2a9c"
	namespace   = "jobs"
)

// runningDeployment is an application-mode FlinkDeployment whose job the Apache operator runs,
// with the status 1.16 writes for it.
func runningDeployment(upgradeMode string) *unstructured.Unstructured {
	spec := map[string]interface{}{
		"image": "flink:1.20", "flinkVersion": "v1_20", "serviceAccount": "flink",
		"flinkConfiguration": map[string]interface{}{
			"state.savepoints.dir": "s3://flink-state/savepoints", "state.checkpoints.dir": "s3://flink-state/checkpoints"},
		"jobManager":  map[string]interface{}{"resource": map[string]interface{}{"memory": "2048m", "cpu": int64(1)}},
		"taskManager": map[string]interface{}{"resource": map[string]interface{}{"memory": "2048m", "cpu": int64(1)}},
		"job": map[string]interface{}{"jarURI": "local:///opt/flink/usrlib/orders.jar", "parallelism": int64(2),
			"upgradeMode": upgradeMode, "state": jobRunning},
	}
	return apacheObjectOf("FlinkDeployment", "orders", spec)
}

// runningSessionJob is a FlinkSessionJob on the Apache session cluster "session".
func runningSessionJob(upgradeMode string) *unstructured.Unstructured {
	spec := map[string]interface{}{
		"deploymentName": "session",
		"job": map[string]interface{}{"jarURI": "https://repo.example.com/jobs/etl-1.4.jar", "entryClass": "com.example.Etl",
			"parallelism": int64(2), "upgradeMode": upgradeMode, "state": jobRunning, "args": []interface{}{"--window", "5m"}},
	}
	return apacheObjectOf("FlinkSessionJob", "etl", spec)
}

func apacheObjectOf(kind, name string, spec map[string]interface{}) *unstructured.Unstructured {
	status := apachefake.RunningStatus(kind, name, spec, apachefake.Running{JobID: jobIDPrefix + "0b1e5d4c3a29f8e7d6c5b4a3", StartedAt: startMillis})
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": ApacheGroup + "/" + apacheVersion, "kind": kind,
		"metadata": map[string]interface{}{"name": name, "namespace": namespace, "uid": "uid-" + name,
			"generation": int64(1), "resourceVersion": "1",
			"labels":     map[string]interface{}{"team": "payments"},
			"finalizers": []interface{}{"flinkdeployments.flink.apache.org/finalizer"}},
		"spec":   spec,
		"status": status,
	}}
	return u
}

// The fake speaks of the resources the migration reads.
func TestTheFakeNamesTheMigrationsResources(t *testing.T) {
	if ApacheGroup != apachefake.Group || apacheVersion != apachefake.Version || FlinkDeployments != apachefake.FlinkDeployments ||
		FlinkSessionJobs != apachefake.FlinkSessionJobs || FlinkStateSnapshots != apachefake.FlinkStateSnapshots ||
		snapshotTriggerLabel != apachefake.TriggerLabel || triggerUpgrade != apachefake.TriggerUpgrade {
		t.Fatal("integ/apachefake and pkg/cli/migrate name the Apache operator's resources differently")
	}
}
