package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// What the Apache operator 1.16 writes, as its objects spell it. The spec's enums are lower case
// (JobState, UpgradeMode); the status's are Flink's and the operator's enum names.
const (
	jobRunning        = "running"
	jobSuspended      = "suspended"
	upgradeSavepoint  = "savepoint"
	upgradeLastState  = "last-state"
	upgradeStateless  = "stateless"
	flinkRunning      = "RUNNING"
	lifecycleSuspend  = "SUSPENDED"
	reconcileDeployed = "DEPLOYED"
	triggerUpgrade    = "UPGRADE"
	// lastStatePlaceholder is what the Apache operator writes to upgradeSavepointPath for a
	// last-state deployment: a marker, not a savepoint.
	lastStatePlaceholder = "KUBERNETES_OPERATOR_LAST_STATE"
	// snapshotTriggerLabel is the label the Apache operator puts on the FlinkStateSnapshots it
	// creates, naming what made them (UPGRADE for a suspend's or upgrade's savepoint).
	snapshotTriggerLabel = "snapshot.trigger-type"
)

// terminalJobStates are the states of Flink's JobStatus that are globally terminal: the job no
// longer runs anywhere and cannot resume by itself.
var terminalJobStates = map[string]bool{"FINISHED": true, "CANCELED": true, "FAILED": true}

// apacheObject is a FlinkDeployment or FlinkSessionJob as the API server returned it, with readers
// for the fields a migration decides by. Each reader names the field it reads in the messages that
// quote it, so a refusal says where to look.
type apacheObject struct {
	kind Kind
	u    *unstructured.Unstructured
}

func (a apacheObject) String() string {
	return fmt.Sprintf("%s %s %s/%s", ApacheGroup, a.kind.Name, a.u.GetNamespace(), a.u.GetName())
}

// short is Kind/name, as the step messages say it.
func (a apacheObject) short() string { return a.kind.Name + "/" + a.u.GetName() }

func (a apacheObject) text(path ...string) string {
	v, found, _ := unstructured.NestedFieldNoCopy(a.u.Object, path...)
	if !found || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func (a apacheObject) number(path ...string) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(a.u.Object, path...)
	return toNumber(v)
}

// toNumber reads a JSON number the way each decoder hands it over (and the strings the Apache
// operator writes some timestamps as); 0 when it is none.
func toNumber(v interface{}) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}

// hasJob tells an application-mode FlinkDeployment (or any FlinkSessionJob) from a session cluster.
func (a apacheObject) hasJob() bool {
	_, found, _ := unstructured.NestedFieldNoCopy(a.u.Object, "spec", "job")
	return found
}

// desiredState is spec.job.state; the Apache operator reads an empty one as running.
func (a apacheObject) desiredState() string {
	if s := strings.ToLower(a.text("spec", "job", "state")); s != "" {
		return s
	}
	return jobRunning
}

// upgradeMode is spec.job.upgradeMode; the Apache operator reads an empty one as stateless.
func (a apacheObject) upgradeMode() string {
	if s := strings.ToLower(a.text("spec", "job", "upgradeMode")); s != "" {
		return s
	}
	return upgradeStateless
}

func (a apacheObject) jobState() string    { return a.text("status", "jobStatus", "state") }
func (a apacheObject) lifecycle() string   { return a.text("status", "lifecycleState") }
func (a apacheObject) statusError() string { return a.text("status", "error") }
func (a apacheObject) reconcileState() string {
	return a.text("status", "reconciliationStatus", "state")
}
func (a apacheObject) reconciledAt() int64 {
	return a.number("status", "reconciliationStatus", "reconciliationTimestamp")
}
func (a apacheObject) observedGeneration() int64 { return a.number("status", "observedGeneration") }
func (a apacheObject) upgradeSavepointPath() string {
	return a.text("status", "jobStatus", "upgradeSavepointPath")
}
func (a apacheObject) savepointTriggerID() string {
	return a.text("status", "jobStatus", "savepointInfo", "triggerId")
}
func (a apacheObject) checkpointTriggerID() string {
	return a.text("status", "jobStatus", "checkpointInfo", "triggerId")
}
func (a apacheObject) lastCheckpointAt() int64 {
	return a.number("status", "jobStatus", "checkpointInfo", "lastCheckpoint", "timeStamp")
}

// startedAt is status.jobStatus.startTime, milliseconds as a string: when the job last started.
func (a apacheObject) startedAt() int64 { return a.number("status", "jobStatus", "startTime") }

// reconciledJob is the job the Apache operator last acted on: spec.job of
// status.reconciliationStatus.lastReconciledSpec, a JSON string of {"spec": ..., "resource_metadata":
// ...} (or, written by operators before 1.3, the bare spec). Found is false before its first deployment.
func (a apacheObject) reconciledJob() (state, upgradeMode string, found bool, err error) {
	raw := a.text("status", "reconciliationStatus", "lastReconciledSpec")
	if raw == "" {
		return "", "", false, nil
	}
	var wrapped struct {
		Spec *struct {
			Job *jobFields `json:"job"`
		} `json:"spec"`
		Job *jobFields `json:"job"`
	}
	if err := json.Unmarshal([]byte(raw), &wrapped); err != nil {
		return "", "", false, fmt.Errorf("status.reconciliationStatus.lastReconciledSpec of %s is not the JSON the Apache operator writes: %v", a, err)
	}
	job := wrapped.Job
	if wrapped.Spec != nil {
		job = wrapped.Spec.Job
	}
	if job == nil {
		return "", "", true, nil
	}
	state, upgradeMode = strings.ToLower(job.State), strings.ToLower(job.UpgradeMode)
	if state == "" {
		state = jobRunning
	}
	if upgradeMode == "" {
		upgradeMode = upgradeStateless
	}
	return state, upgradeMode, true, nil
}

type jobFields struct {
	State       string `json:"state"`
	UpgradeMode string `json:"upgradeMode"`
}

// savepoint is one entry of status.jobStatus.savepointInfo (lastSavepoint, savepointHistory).
type savepoint struct {
	Location string
	// At is timeStamp: for an upgrade savepoint the time the operator asked Flink to stop the job,
	// by the operator's clock, in milliseconds.
	At          int64
	TriggerType string
}

func (a apacheObject) lastSavepoint() *savepoint {
	m, found, _ := unstructured.NestedMap(a.u.Object, "status", "jobStatus", "savepointInfo", "lastSavepoint")
	if !found || m == nil {
		return nil
	}
	s := savepointOf(m)
	return &s
}

func (a apacheObject) savepointHistory() []savepoint {
	items, _, _ := unstructured.NestedSlice(a.u.Object, "status", "jobStatus", "savepointInfo", "savepointHistory")
	var out []savepoint
	for _, item := range items {
		if m, ok := item.(map[string]interface{}); ok {
			out = append(out, savepointOf(m))
		}
	}
	return out
}

func savepointOf(m map[string]interface{}) savepoint {
	location, _ := m["location"].(string)
	trigger, _ := m["triggerType"].(string)
	return savepoint{Location: location, At: toNumber(m["timeStamp"]), TriggerType: trigger}
}

// recordedSavepoints are every savepoint status.jobStatus.savepointInfo names, the last one first.
func (a apacheObject) recordedSavepoints() []savepoint {
	var out []savepoint
	if s := a.lastSavepoint(); s != nil {
		out = append(out, *s)
	}
	return append(out, a.savepointHistory()...)
}

// ownedByBlueGreen tells whether a FlinkBlueGreenDeployment controls the object: it would bring the
// job back, so the object is not the migration's to suspend.
func (a apacheObject) ownedByBlueGreen() string {
	for _, o := range a.u.GetOwnerReferences() {
		if o.Kind == "FlinkBlueGreenDeployment" {
			return o.Name
		}
	}
	return ""
}

// syncedBy names the tool that applies the object from a source elsewhere, by the marks each puts
// on what it applies; empty when none is seen. Such a tool sets spec.job.state back to what its
// source says, and the Apache operator would then start the job beside flinkfsm's.
func (a apacheObject) syncedBy() string {
	annotations, labels := a.u.GetAnnotations(), a.u.GetLabels()
	switch {
	case annotations["argocd.argoproj.io/tracking-id"] != "" || labels["argocd.argoproj.io/instance"] != "":
		return "Argo CD"
	case labels["kustomize.toolkit.fluxcd.io/name"] != "" || labels["helm.toolkit.fluxcd.io/name"] != "":
		return "Flux"
	case labels["app.kubernetes.io/managed-by"] == "Helm":
		return "Helm"
	}
	return ""
}

// stateSnapshot is a FlinkStateSnapshot of the job: where the Apache operator records savepoints
// (an upgrade's among them) when kubernetes.operator.snapshot.resource.enabled is on.
type stateSnapshot struct {
	Name    string
	Created time.Time
	// Trigger is the snapshot.trigger-type label: UPGRADE for a suspend's savepoint.
	Trigger string
	// Checkpoint tells a checkpoint (spec.checkpoint) from a savepoint (spec.savepoint).
	Checkpoint bool
	// Path is status.path, or spec.savepoint.path before the operator copied it there.
	Path string
	// State is status.state: COMPLETED, FAILED, IN_PROGRESS, TRIGGER_PENDING or ABANDONED.
	State string
}

func (s stateSnapshot) completed() bool {
	return s.State == "COMPLETED" || (s.Trigger == triggerUpgrade && s.Path != "")
}
func (s stateSnapshot) pending() bool {
	return s.State == "TRIGGER_PENDING" || s.State == "IN_PROGRESS"
}

// snapshotsOf lists the FlinkStateSnapshots whose spec.jobReference names the object. A cluster
// without the FlinkStateSnapshot resource has none.
func snapshotsOf(ctx context.Context, client dynamic.Interface, a apacheObject) ([]stateSnapshot, error) {
	list, err := client.Resource(FlinkStateSnapshots).Namespace(a.u.GetNamespace()).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the FlinkStateSnapshots of %s: %w", a, err)
	}
	var out []stateSnapshot
	for i := range list.Items {
		s := apacheObject{u: &list.Items[i]}
		if s.text("spec", "jobReference", "kind") != a.kind.Name || s.text("spec", "jobReference", "name") != a.u.GetName() {
			continue
		}
		_, checkpoint, _ := unstructured.NestedFieldNoCopy(s.u.Object, "spec", "checkpoint")
		path := s.text("status", "path")
		if path == "" {
			path = s.text("spec", "savepoint", "path")
		}
		out = append(out, stateSnapshot{
			Name: s.u.GetName(), Created: s.u.GetCreationTimestamp().Time, Trigger: s.u.GetLabels()[snapshotTriggerLabel],
			Checkpoint: checkpoint, Path: path, State: s.text("status", "state"),
		})
	}
	return out, nil
}

// operatorError is status.error as the Apache operator writes it: the JSON of a
// FlinkResourceException ({"type": ..., "message": ...}), or plain text when it could not be.
type operatorError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func parseOperatorError(s string) operatorError {
	var e operatorError
	if json.Unmarshal([]byte(s), &e) != nil || (e.Type == "" && e.Message == "") {
		return operatorError{Message: s}
	}
	return e
}

func (e operatorError) String() string {
	t := e.Type[strings.LastIndex(e.Type, ".")+1:]
	if t == "" {
		return e.Message
	}
	return t + ": " + e.Message
}

// aboutSavepoint tells an error of the savepoint a suspend takes ("Savepoint Error", "Timed out
// stopping the job ... with savepoint", a savepoint directory the validator finds missing) from
// others.
func (e operatorError) aboutSavepoint() bool {
	return strings.Contains(strings.ToLower(e.Message), "savepoint")
}
