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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeApache is an API server holding one Apache object, and the Apache operator 1.16 acting on
// it as its source does (AbstractJobReconciler.reconcileSpecChange, ApplicationReconciler and
// SessionJobReconciler.cancelJob, AbstractFlinkService.cancelJob/cancelSessionJob,
// AbstractJobReconciler.setUpgradeSavepointPath, ReconciliationUtils.updateStatusForSpecReconciliation):
// a spec with job.state suspended and upgradeMode savepoint stops the job with a savepoint, then one
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

// reconcile is one pass of the Apache operator over the object.
func (a *fakeApache) reconcile() {
	u := a.object()
	desired, _, _ := unstructured.NestedString(u.Object, "spec", "job", "state")
	reconciled := reconciledSpec(a.t, u)
	job, _ := reconciled["job"].(map[string]interface{})
	if desired != jobSuspended || job["state"] != jobRunning || a.stall {
		return
	}
	if a.delay > 0 {
		a.delay--
		return
	}
	a.clock += 1000
	cancelAt := a.clock
	mode, _, _ := unstructured.NestedString(u.Object, "spec", "job", "upgradeMode")
	status := u.Object["status"].(map[string]interface{})
	jobStatus := status["jobStatus"].(map[string]interface{})
	if mode == upgradeSavepoint && a.savepointFails {
		// UpgradeFailureException("Savepoint Error"), written by FlinkResourceExceptionUtils; the
		// spec is not reconciled and the next pass tries again.
		status["error"] = `{"type":"org.apache.flink.kubernetes.operator.exception.UpgradeFailureException","message":"Savepoint Error",` +
			`"additionalMetadata":{},"throwableList":[{"type":"java.util.concurrent.ExecutionException","message":"org.apache.flink.runtime.checkpoint.CheckpointException: Task local checkpoint failure."}]}`
		a.store(u)
		return
	}
	a.stops++
	if a.onSuspend != nil {
		a.onSuspend()
	}
	jobStatus["state"] = "FINISHED"
	if a.kind == FlinkSessionJob {
		jobStatus["jobId"] = nil
	}
	if mode == upgradeSavepoint {
		a.savepoint = fmt.Sprintf("s3://flink-state/savepoints/savepoint-%s-%04d", jobIDPrefix, a.stops)
		jobStatus["upgradeSavepointPath"] = a.savepoint
		info := jobStatus["savepointInfo"].(map[string]interface{})
		switch {
		case a.uncorroborated:
		case a.snapshotResources:
			a.createUpgradeSnapshot(cancelAt)
		default:
			sp := map[string]interface{}{"timeStamp": cancelAt, "location": a.savepoint, "triggerType": triggerUpgrade, "formatType": "CANONICAL", "triggerNonce": nil}
			info["lastSavepoint"] = sp
			info["savepointHistory"] = append(info["savepointHistory"].([]interface{}), runtime.DeepCopyJSONValue(sp))
		}
		if a.secondSavepoint {
			info["savepointHistory"] = append(info["savepointHistory"].([]interface{}), map[string]interface{}{
				"timeStamp": cancelAt + 5, "location": "s3://flink-state/savepoints/savepoint-periodic", "triggerType": "PERIODIC", "formatType": "CANONICAL"})
		}
		if a.newerCheckpoint {
			jobStatus["checkpointInfo"].(map[string]interface{})["lastCheckpoint"] = map[string]interface{}{
				"timeStamp": cancelAt + 7, "triggerType": "PERIODIC", "formatType": "FULL"}
		}
	}
	a.clock += 20
	spec := runtime.DeepCopyJSONValue(u.Object["spec"]).(map[string]interface{})
	spec["job"].(map[string]interface{})["state"] = jobSuspended
	if mode == "" {
		spec["job"].(map[string]interface{})["upgradeMode"] = upgradeStateless
	}
	last := lastReconciled(spec)
	status["reconciliationStatus"] = map[string]interface{}{
		"reconciliationTimestamp": a.clock, "lastReconciledSpec": last, "lastStableSpec": last, "state": reconcileDeployed}
	status["observedGeneration"] = u.GetGeneration()
	status["lifecycleState"] = lifecycleSuspend
	status["error"] = nil
	if a.afterSuspend != nil {
		a.afterSuspend(u)
	}
	a.store(u)
}

// createUpgradeSnapshot is FlinkStateSnapshotUtils.createUpgradeSnapshotResource, and the
// snapshot's own first reconcile (alreadyExists: COMPLETED with the path).
func (a *fakeApache) createUpgradeSnapshot(at int64) {
	name := fmt.Sprintf("%s-savepoint-upgrade-%d", a.name, at)
	s := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": ApacheGroup + "/" + apacheVersion, "kind": "FlinkStateSnapshot",
		"metadata": map[string]interface{}{"name": name, "namespace": a.ns,
			"labels": map[string]interface{}{snapshotTriggerLabel: triggerUpgrade}},
		"spec": map[string]interface{}{
			"jobReference": map[string]interface{}{"kind": a.kind.Name, "name": a.name},
			"savepoint":    map[string]interface{}{"path": a.savepoint, "alreadyExists": true, "disposeOnDelete": false, "formatType": "CANONICAL"},
		},
		"status": map[string]interface{}{"state": "COMPLETED", "path": a.savepoint, "failures": int64(0)},
	}}
	s.SetCreationTimestamp(metav1.NewTime(time.UnixMilli(at).Truncate(time.Second)))
	if err := a.client.Tracker().Create(FlinkStateSnapshots, s, a.ns); err != nil {
		a.t.Fatalf("creating the upgrade FlinkStateSnapshot: %v", err)
	}
}

// lastReconciled is status.reconciliationStatus.lastReconciledSpec as SpecUtils.writeSpecWithMeta
// writes it.
func lastReconciled(spec map[string]interface{}) string {
	b, _ := json.Marshal(map[string]interface{}{"spec": spec,
		"resource_metadata": map[string]interface{}{"apiVersion": ApacheGroup + "/" + apacheVersion, "firstDeployment": false}})
	return string(b)
}

func reconciledSpec(t *testing.T, u *unstructured.Unstructured) map[string]interface{} {
	raw, _, _ := unstructured.NestedString(u.Object, "status", "reconciliationStatus", "lastReconciledSpec")
	if raw == "" {
		return map[string]interface{}{} // before the first deployment
	}
	var w struct {
		Spec map[string]interface{} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		t.Fatalf("lastReconciledSpec: %v", err)
	}
	return w.Spec
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
	return apacheObjectOf("FlinkDeployment", "orders", spec, map[string]interface{}{
		"jobManagerDeploymentStatus": "READY", "clusterInfo": map[string]interface{}{"flink-version": "1.20.1"}})
}

// runningSessionJob is a FlinkSessionJob on the Apache session cluster "session".
func runningSessionJob(upgradeMode string) *unstructured.Unstructured {
	spec := map[string]interface{}{
		"deploymentName": "session",
		"job": map[string]interface{}{"jarURI": "https://repo.example.com/jobs/etl-1.4.jar", "entryClass": "com.example.Etl",
			"parallelism": int64(2), "upgradeMode": upgradeMode, "state": jobRunning, "args": []interface{}{"--window", "5m"}},
	}
	return apacheObjectOf("FlinkSessionJob", "etl", spec, map[string]interface{}{})
}

func apacheObjectOf(kind, name string, spec, extraStatus map[string]interface{}) *unstructured.Unstructured {
	last := lastReconciled(runtime.DeepCopyJSONValue(spec).(map[string]interface{}))
	status := map[string]interface{}{
		"jobStatus": map[string]interface{}{
			"jobName": name, "jobId": jobIDPrefix + "0b1e5d4c3a29f8e7d6c5b4a3", "state": flinkRunning,
			"startTime": strconv.FormatInt(startMillis, 10), "updateTime": strconv.FormatInt(startMillis+30_000, 10),
			"savepointInfo":  map[string]interface{}{"savepointHistory": []interface{}{}, "lastPeriodicSavepointTimestamp": int64(0)},
			"checkpointInfo": map[string]interface{}{"lastPeriodicCheckpointTimestamp": int64(0)},
		},
		"error": nil, "observedGeneration": int64(1), "lifecycleState": "STABLE",
		"reconciliationStatus": map[string]interface{}{
			"reconciliationTimestamp": startMillis - 10_000, "lastReconciledSpec": last, "lastStableSpec": last, "state": reconcileDeployed},
	}
	for k, v := range extraStatus {
		status[k] = v
	}
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
