// Package apachefake plays the Apache Flink Kubernetes operator 1.16 on the objects of
// flink.apache.org: it writes their status as that operator does for a job it runs and, once
// spec.job.state asks for a suspend, as it does after it has stopped the job (with a savepoint, for
// upgradeMode savepoint). pkg/cli/migrate's unit tests play it on a fake API server with these
// functions; the end-to-end test of kubectl flink migrate plays it on the local cluster's API
// server with Operator.
//
// What it writes follows the operator's source: AbstractJobReconciler.reconcileSpecChange,
// ApplicationReconciler and SessionJobReconciler.cancelJob, AbstractFlinkService.cancelJob,
// cancelSessionJob and deleteClusterDeployment, AbstractJobReconciler.setUpgradeSavepointPath,
// ReconciliationUtils.updateStatusForSpecReconciliation, SpecUtils.writeSpecWithMeta and
// FlinkStateSnapshotUtils.createUpgradeSnapshotResource.
package apachefake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and Version are the Apache operator's API group and the one version 1.16 serves.
const (
	Group   = "flink.apache.org"
	Version = "v1beta1"
)

// The Apache operator's resources.
var (
	FlinkDeployments    = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "flinkdeployments"}
	FlinkSessionJobs    = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "flinksessionjobs"}
	FlinkStateSnapshots = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "flinkstatesnapshots"}
)

// Values as its objects spell them: the spec's enums in lower case, the status's as Flink's and
// the operator's enum names.
const (
	JobRunning       = "running"
	JobSuspended     = "suspended"
	UpgradeSavepoint = "savepoint"
	UpgradeStateless = "stateless"
	// TriggerLabel is the label the operator puts on the FlinkStateSnapshots it creates, naming
	// what made them; TriggerUpgrade marks a suspend's or an upgrade's savepoint.
	TriggerLabel   = "snapshot.trigger-type"
	TriggerUpgrade = "UPGRADE"
)

// LastReconciledSpec is status.reconciliationStatus.lastReconciledSpec as SpecUtils.writeSpecWithMeta
// writes it: the spec the operator acted on, with its resource metadata.
func LastReconciledSpec(spec map[string]interface{}) string {
	b, _ := json.Marshal(map[string]interface{}{"spec": spec,
		"resource_metadata": map[string]interface{}{"apiVersion": Group + "/" + Version, "firstDeployment": false}})
	return string(b)
}

// ReconciledSpec is the spec of status.reconciliationStatus.lastReconciledSpec: empty before the
// first deployment.
func ReconciledSpec(u *unstructured.Unstructured) (map[string]interface{}, error) {
	raw, _, _ := unstructured.NestedString(u.Object, "status", "reconciliationStatus", "lastReconciledSpec")
	if raw == "" {
		return map[string]interface{}{}, nil
	}
	var w struct {
		Spec map[string]interface{} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		return nil, fmt.Errorf("%s %s/%s: lastReconciledSpec: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return w.Spec, nil
}

// Running is a job the operator deployed and runs.
type Running struct {
	// JobID is Flink's id of the job, 32 hex digits.
	JobID string
	// StartedAt is when the job started (status.jobStatus.startTime), by the operator's clock, ms.
	StartedAt int64
}

// RunningStatus is the status 1.16 writes for a running job of a FlinkDeployment or FlinkSessionJob
// named name with spec: job RUNNING since r.StartedAt, the spec reconciled (DEPLOYED, lifecycle
// STABLE) ten seconds before it, observedGeneration 1, no savepoint or checkpoint recorded.
func RunningStatus(kind, name string, spec map[string]interface{}, r Running) map[string]interface{} {
	last := LastReconciledSpec(runtime.DeepCopyJSONValue(spec).(map[string]interface{}))
	status := map[string]interface{}{
		"jobStatus": map[string]interface{}{
			"jobName": name, "jobId": r.JobID, "state": "RUNNING",
			"startTime": strconv.FormatInt(r.StartedAt, 10), "updateTime": strconv.FormatInt(r.StartedAt+30_000, 10),
			"savepointInfo":  map[string]interface{}{"savepointHistory": []interface{}{}, "lastPeriodicSavepointTimestamp": int64(0)},
			"checkpointInfo": map[string]interface{}{"lastPeriodicCheckpointTimestamp": int64(0)},
		},
		"error": nil, "observedGeneration": int64(1), "lifecycleState": "STABLE",
		"reconciliationStatus": map[string]interface{}{
			"reconciliationTimestamp": r.StartedAt - 10_000, "lastReconciledSpec": last, "lastStableSpec": last, "state": "DEPLOYED"},
	}
	if kind == "FlinkDeployment" {
		status["jobManagerDeploymentStatus"] = "READY"
		status["clusterInfo"] = map[string]interface{}{"flink-version": flinkRelease(spec)}
	}
	return status
}

// flinkRelease is the release a FlinkDeployment's flinkVersion (v1_20) names, as the cluster
// reports it.
func flinkRelease(spec map[string]interface{}) string {
	v, _ := spec["flinkVersion"].(string)
	if v == "" {
		return "1.20.1"
	}
	return strings.ReplaceAll(strings.TrimPrefix(v, "v"), "_", ".") + ".0"
}

// SuspendAsked tells whether a pass of the operator stops the job: spec.job.state is suspended
// while the spec it last reconciled runs the job.
func SuspendAsked(u *unstructured.Unstructured) (bool, error) {
	desired, _, _ := unstructured.NestedString(u.Object, "spec", "job", "state")
	if strings.ToLower(desired) != JobSuspended {
		return false, nil
	}
	reconciled, err := ReconciledSpec(u)
	if err != nil {
		return false, err
	}
	job, ok := reconciled["job"].(map[string]interface{})
	if !ok {
		return false, nil
	}
	state, _ := job["state"].(string)
	return state == "" || strings.ToLower(state) == JobRunning, nil
}

// Stop is one stop of the job that a suspend makes.
type Stop struct {
	// Savepoint is the savepoint the stop took (upgradeMode savepoint); "" when it took none.
	Savepoint string
	// CancelAt is when the operator began stopping the job, by its clock (ms): the savepoint's
	// timeStamp in savepointInfo.
	CancelAt int64
	// ReconciledAt is when it recorded the stop (ms): reconciliationStatus.reconciliationTimestamp.
	ReconciledAt int64
	// SnapshotResources is kubernetes.operator.snapshot.resource.enabled: the savepoint is recorded
	// by a FlinkStateSnapshot (Snapshot) rather than in savepointInfo.
	SnapshotResources bool
	// Unrecorded writes upgradeSavepointPath without the record that goes with it, as no release
	// of the operator does: for tests of what a migration refuses.
	Unrecorded bool
}

// Record writes on the FlinkDeployment or FlinkSessionJob the status of the operator's one status
// write after the stop: the job FINISHED (a session job's id cleared), upgradeSavepointPath with
// its savepointInfo record (unless snapshot resources record it), the suspended spec as
// lastReconciledSpec and lastStableSpec (an empty upgradeMode read as stateless), lifecycle
// SUSPENDED, no error. A standalone FlinkDeployment's JobManager deployment is deleted with the
// stop (MISSING); a native one's stays, its job finished, until the operator's
// jm-deployment.shutdown-ttl passes (a day by default), so its status keeps READY.
func (s Stop) Record(u *unstructured.Unstructured) error {
	status := child(u.Object, "status")
	jobStatus := child(status, "jobStatus")
	jobStatus["state"] = "FINISHED"
	if u.GetKind() == "FlinkSessionJob" {
		jobStatus["jobId"] = nil
	} else if mode, _, _ := unstructured.NestedString(u.Object, "spec", "mode"); mode == "standalone" {
		status["jobManagerDeploymentStatus"] = "MISSING"
	}
	if s.Savepoint != "" {
		jobStatus["upgradeSavepointPath"] = s.Savepoint
		info := child(jobStatus, "savepointInfo")
		if !s.Unrecorded && !s.SnapshotResources {
			sp := map[string]interface{}{"timeStamp": s.CancelAt, "location": s.Savepoint, "triggerType": TriggerUpgrade,
				"formatType": "CANONICAL", "triggerNonce": nil}
			info["lastSavepoint"] = sp
			history, _ := info["savepointHistory"].([]interface{})
			info["savepointHistory"] = append(history, runtime.DeepCopyJSONValue(sp))
		}
	}
	spec, ok := runtime.DeepCopyJSONValue(u.Object["spec"]).(map[string]interface{})
	if !ok {
		return fmt.Errorf("%s %s/%s has no spec", u.GetKind(), u.GetNamespace(), u.GetName())
	}
	job := child(spec, "job")
	job["state"] = JobSuspended
	if mode, _ := job["upgradeMode"].(string); mode == "" {
		job["upgradeMode"] = UpgradeStateless
	}
	last := LastReconciledSpec(spec)
	status["reconciliationStatus"] = map[string]interface{}{
		"reconciliationTimestamp": s.ReconciledAt, "lastReconciledSpec": last, "lastStableSpec": last, "state": "DEPLOYED"}
	status["observedGeneration"] = u.GetGeneration()
	status["lifecycleState"] = "SUSPENDED"
	status["error"] = nil
	return nil
}

// Snapshot is the FlinkStateSnapshot the operator creates for the stop's savepoint with snapshot
// resources on (FlinkStateSnapshotUtils.createUpgradeSnapshotResource), at when it creates it (ms,
// its name's suffix): without a status, which the snapshot's own first reconcile writes
// (CompleteSnapshot). Its creationTimestamp is set too, which only a fake API server keeps.
func (s Stop) Snapshot(u *unstructured.Unstructured, at int64) *unstructured.Unstructured {
	snap := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": Group + "/" + Version, "kind": "FlinkStateSnapshot",
		"metadata": map[string]interface{}{"name": fmt.Sprintf("%s-savepoint-upgrade-%d", u.GetName(), at), "namespace": u.GetNamespace(),
			"labels": map[string]interface{}{TriggerLabel: TriggerUpgrade}},
		"spec": map[string]interface{}{
			"jobReference": map[string]interface{}{"kind": u.GetKind(), "name": u.GetName()},
			"savepoint":    map[string]interface{}{"path": s.Savepoint, "alreadyExists": true, "disposeOnDelete": false, "formatType": "CANONICAL"},
		},
	}}
	snap.SetCreationTimestamp(metav1.NewTime(time.UnixMilli(at).Truncate(time.Second)))
	return snap
}

// CompleteSnapshot is an upgrade snapshot's first reconcile by the operator's snapshot controller
// (StateSnapshotReconciler: a savepoint that alreadyExists is COMPLETED at its spec's path, by
// FlinkStateSnapshotUtils.snapshotSuccessful), with the labels the controller keeps on it
// (getSnapshotLabels); now is the operator's clock.
func CompleteSnapshot(snap *unstructured.Unstructured, now time.Time) {
	path, _, _ := unstructured.NestedString(snap.Object, "spec", "savepoint", "path")
	at := now.UTC().Format(time.RFC3339Nano) // DateTimeUtils.kubernetes: ISO_INSTANT
	snap.Object["status"] = map[string]interface{}{"state": "COMPLETED", "path": path, "error": nil, "failures": int64(0),
		"resultTimestamp": at, "triggerTimestamp": at}
	labels := snap.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	kind, _, _ := unstructured.NestedString(snap.Object, "spec", "jobReference", "kind")
	name, _, _ := unstructured.NestedString(snap.Object, "spec", "jobReference", "name")
	labels["snapshot.type"], labels["snapshot.state"] = "SAVEPOINT", "COMPLETED"
	labels["job-reference.kind"], labels["job-reference.name"] = kind, name
	snap.SetLabels(labels)
}

// SavepointError writes status.error as the operator does when Flink's stop-with-savepoint fails
// (UpgradeFailureException "Savepoint Error", by FlinkResourceExceptionUtils): the spec is not
// reconciled, the job runs on, and the next pass tries again.
func SavepointError(u *unstructured.Unstructured) {
	child(u.Object, "status")["error"] = `{"type":"org.apache.flink.kubernetes.operator.exception.UpgradeFailureException","message":"Savepoint Error",` +
		`"additionalMetadata":{},"throwableList":[{"type":"java.util.concurrent.ExecutionException","message":"org.apache.flink.runtime.checkpoint.CheckpointException: Task local checkpoint failure."}]}`
}

// SavepointDir is where a savepoint of the object's job is written: its flinkConfiguration's
// execution.checkpointing.savepoint-dir, or the older state.savepoints.dir; "" when it has neither.
func SavepointDir(u *unstructured.Unstructured) string {
	config, _, _ := unstructured.NestedMap(u.Object, "spec", "flinkConfiguration")
	for _, key := range []string{"execution.checkpointing.savepoint-dir", "state.savepoints.dir"} {
		if dir, ok := config[key].(string); ok && dir != "" {
			return dir
		}
	}
	return ""
}

// SavepointPath is a path Flink gives a savepoint of the job in dir
// (AbstractFsCheckpointStorageAccess.initializeLocationForSavepoint): savepoint-, the job id's first
// six hex digits, -, and twelve random ones.
func SavepointPath(dir, jobID string) string {
	random := make([]byte, 6)
	_, _ = rand.Read(random)
	prefix := jobID
	if len(prefix) > 6 {
		prefix = prefix[:6]
	}
	return strings.TrimRight(dir, "/") + "/savepoint-" + prefix + "-" + hex.EncodeToString(random)
}

// child is m[key] as a map, created when it is not one.
func child(m map[string]interface{}, key string) map[string]interface{} {
	c, ok := m[key].(map[string]interface{})
	if !ok {
		c = map[string]interface{}{}
		m[key] = c
	}
	return c
}
