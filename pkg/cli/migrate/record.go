package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Annotations a migration writes.
const (
	// RecordAnnotation holds, on the Apache object, the migration's progress: written before each
	// step acts, so that a run after an interruption takes up where the last one stopped and never
	// asks for a second savepoint or creates a second object.
	RecordAnnotation = "flink.k8s.io/migration"
	// FromUIDAnnotation holds, on the flinkfsm object a migration created, the UID of the Apache
	// object it came from: an object of the target's name without it is not the migration's.
	FromUIDAnnotation = "flink.k8s.io/migrated-from-uid"
	// FromAnnotation names that Apache object for people.
	FromAnnotation = "flink.k8s.io/migrated-from"
)

// Steps, in order. Each is recorded before what it names is done.
const (
	// stepSuspendRequested: the record and the suspend were written in one patch; the Apache
	// operator is stopping the job.
	stepSuspendRequested = "suspend-requested"
	// stepCreating: the job is proven stopped and its savepoint the newest state; the flinkfsm
	// object is being created from it.
	stepCreating = "creating"
	// stepCreated: the flinkfsm object exists; the Apache object stays suspended.
	stepCreated = "created"
)

// record is the migration's progress, as RecordAnnotation holds it.
type record struct {
	Step string `json:"step"`
	// Target is the flinkfsm object, Kind/name, in the Apache object's namespace.
	Target string `json:"target"`
	// Original is spec.job as it was before the migration changed it: the converted object keeps
	// its upgrade mode, and a user who abandons the migration sets it back.
	Original jobSettings `json:"original"`
	// Stateless: the job moves without state (--allow-stateless), and no savepoint is taken.
	Stateless bool `json:"stateless,omitempty"`
	// AlreadySuspended: the Apache operator had suspended the job with a savepoint before the
	// migration; it asked for nothing.
	AlreadySuspended bool `json:"alreadySuspended,omitempty"`
	// RequestedAt is when the suspend was asked for, by this machine's clock: for people. The proof
	// compares the operator's own timestamps with Before, never with it.
	RequestedAt *time.Time `json:"requestedAt,omitempty"`
	// Before is what the Apache operator had recorded when the suspend was asked for.
	Before *baseline `json:"before,omitempty"`
	// Savepoint is the savepoint proven the job's newest state, and SavepointAt when the operator
	// says it was taken; ProvenBy names the fields that proved it.
	Savepoint   string     `json:"savepoint,omitempty"`
	SavepointAt *time.Time `json:"savepointAt,omitempty"`
	ProvenBy    string     `json:"provenBy,omitempty"`
}

type jobSettings struct {
	State       string `json:"state"`
	UpgradeMode string `json:"upgradeMode"`
}

// baseline is what the Apache operator had recorded before the suspend was asked for: anything it
// records later is compared with it, by its own clock, to prove it came after the request.
type baseline struct {
	// ReconciledAt is status.reconciliationStatus.reconciliationTimestamp (ms, the operator's clock).
	ReconciledAt int64 `json:"reconciledAt"`
	// UpgradeSavepointPath is status.jobStatus.upgradeSavepointPath.
	UpgradeSavepointPath string `json:"upgradeSavepointPath,omitempty"`
	// Savepoints are the locations status.jobStatus.savepointInfo named (lastSavepoint, savepointHistory).
	Savepoints []string `json:"savepoints,omitempty"`
	// Snapshots are the names of the job's FlinkStateSnapshots.
	Snapshots []string `json:"snapshots,omitempty"`
	// LastCheckpointAt is status.jobStatus.checkpointInfo.lastCheckpoint.timeStamp.
	LastCheckpointAt int64 `json:"lastCheckpointAt,omitempty"`
	// ErrorDigest identifies status.error, so that only an error written after the request counts.
	ErrorDigest string `json:"errorDigest,omitempty"`
}

func digest(s string) string {
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// baselineOf is what the object and its snapshots record now.
func baselineOf(a apacheObject, snapshots []stateSnapshot) *baseline {
	b := &baseline{
		ReconciledAt: a.reconciledAt(), UpgradeSavepointPath: a.upgradeSavepointPath(),
		LastCheckpointAt: a.lastCheckpointAt(), ErrorDigest: digest(a.statusError()),
	}
	for _, s := range a.recordedSavepoints() {
		b.Savepoints = append(b.Savepoints, s.Location)
	}
	for _, s := range snapshots {
		b.Snapshots = append(b.Snapshots, s.Name)
	}
	return b
}

// recordOf reads the object's record; nil when it has none.
func recordOf(a apacheObject) (*record, error) {
	raw, found := a.u.GetAnnotations()[RecordAnnotation]
	if !found {
		return nil, nil
	}
	var r record
	if err := json.Unmarshal([]byte(raw), &r); err != nil || r.Step == "" {
		return nil, fmt.Errorf("%s has annotation %s, which is not a migration record (%v); "+
			"remove it only if no migration of this object is under way", a, RecordAnnotation, err)
	}
	return &r, nil
}

// writeRecord writes the record, with the spec changes given (the suspend), in one merge patch.
// With resourceVersion set the patch applies only to that version of the object, so that the
// record's baseline is exactly what the object recorded when the request landed.
func (m *Migrator) writeRecord(ctx context.Context, a apacheObject, r *record, spec map[string]interface{}, resourceVersion string) (apacheObject, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return a, err
	}
	meta := map[string]interface{}{"annotations": map[string]interface{}{RecordAnnotation: string(raw)}}
	if resourceVersion != "" {
		meta["resourceVersion"] = resourceVersion
	}
	patch := map[string]interface{}{"metadata": meta}
	if spec != nil {
		patch["spec"] = spec
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return a, err
	}
	u, err := m.Apache.Resource(a.kind.resource()).Namespace(a.u.GetNamespace()).
		Patch(ctx, a.u.GetName(), types.MergePatchType, body, metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil {
		return a, err
	}
	return apacheObject{kind: a.kind, u: u}, nil
}

// fieldManager names the migration in the objects' managedFields.
const fieldManager = "kubectl-flink-migrate"
