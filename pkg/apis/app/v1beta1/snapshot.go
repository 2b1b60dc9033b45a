package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FlinkSnapshot is one savepoint or checkpoint of the job of a FlinkApplication or FlinkSessionJob,
// as an object of its own: listed and selected by label across applications, kept on purpose,
// restored from by name, and disposed of when no longer wanted.
//
// The owner's status.ledger stays the write-ahead record the state machine trusts; a FlinkSnapshot
// is that record made visible, and follows it. The operator creates one for every savepoint it
// completes itself (upgrade, suspend, delete, teardown, periodic, manual), labelled with the owner,
// the purpose and the state. Deleting a FlinkSnapshot never removes a ledger entry a restore needs.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=flinksnapshot;fsnap,categories=flink
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, flinkfsm is not a Kubernetes project API"
// +kubebuilder:printcolumn:name="Owner Kind",type=string,JSONPath=`.spec.owner.kind`
// +kubebuilder:printcolumn:name="Owner",type=string,JSONPath=`.spec.owner.name`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Purpose",type=string,JSONPath=`.status.purpose`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Path",type=string,JSONPath=`.status.path`
// +kubebuilder:printcolumn:name="Job ID",type=string,JSONPath=`.status.jobID`,priority=1
// +kubebuilder:printcolumn:name="Trigger ID",type=string,JSONPath=`.status.triggerID`,priority=1
// +kubebuilder:printcolumn:name="Attempts",type=integer,JSONPath=`.status.attempts`,priority=1
// +kubebuilder:printcolumn:name="Error",type=string,JSONPath=`.status.error`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FlinkSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FlinkSnapshotSpec   `json:"spec"`
	Status FlinkSnapshotStatus `json:"status,omitempty"`
}

// FlinkSnapshotList is a list of FlinkSnapshots.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type FlinkSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FlinkSnapshot `json:"items"`
}

// FlinkSnapshotSpec says whose state the snapshot is and what is wanted of it.
// +kubebuilder:validation:XValidation:rule="!has(self.formatType) || self.type == 'Savepoint'",message="formatType is a savepoint's; a checkpoint's format is the job's own",fieldPath=".formatType"
type FlinkSnapshotSpec struct {
	// Owner is the FlinkApplication or FlinkSessionJob, in the snapshot's namespace, whose job the
	// snapshot is of. It cannot change: the snapshot was taken of that job.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="owner cannot change: the snapshot is of that owner's job"
	Owner SnapshotOwner `json:"owner"`
	// Type is Savepoint or Checkpoint.
	// +kubebuilder:validation:Enum=Savepoint;Checkpoint
	// +kubebuilder:default=Savepoint
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="type cannot change"
	Type SnapshotType `json:"type,omitempty"`
	// Path registers a snapshot that already exists there, which the operator then follows as its
	// own: nothing is triggered. Empty asks the operator to take one of the owner's running job.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="path cannot change; create another FlinkSnapshot for another path"
	Path string `json:"path,omitempty"`
	// FormatType is the savepoint's format: Canonical (Flink's default, portable between state
	// backends) or Native (the state backend's own, faster to take and restore).
	// +kubebuilder:validation:Enum=Canonical;Native
	FormatType SavepointFormatType `json:"formatType,omitempty"`
	// DisposeOnDelete removes the snapshot's storage, through Flink, when the FlinkSnapshot is
	// deleted. Never set on the snapshot a restore still needs: the operator refuses to dispose of it.
	DisposeOnDelete bool `json:"disposeOnDelete,omitempty"`
	// Keep exempts the snapshot from retention: it stays until deleted by hand.
	Keep bool `json:"keep,omitempty"`
	// BackoffLimit is how many times a snapshot asked for here is tried again after it failed, each
	// time after twice the wait of the one before (10 s, 20 s, 40 s, ... at most 10 minutes).
	// Unset tries again 3 times; 0 never.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
}

// SnapshotOwner names the object whose job a snapshot is of.
type SnapshotOwner struct {
	// +kubebuilder:validation:Enum=FlinkApplication;FlinkSessionJob
	Kind string `json:"kind"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// SnapshotType is a savepoint or a checkpoint.
type SnapshotType string

// The snapshot types.
const (
	SnapshotSavepoint  SnapshotType = "Savepoint"
	SnapshotCheckpoint SnapshotType = "Checkpoint"
)

// SavepointFormatType is the format Flink writes a savepoint in.
type SavepointFormatType string

// The savepoint formats.
const (
	SavepointFormatCanonical SavepointFormatType = "Canonical"
	SavepointFormatNative    SavepointFormatType = "Native"
)

// FlinkSnapshotStatus is where the snapshot stands, as the owner's ledger records it.
type FlinkSnapshotStatus struct {
	// State is Pending until Flink says how the snapshot ended: Completed or Failed.
	State StateResult `json:"state,omitempty"`
	// Purpose says why the snapshot was taken: Upgrade, Suspend, Delete, Teardown, Periodic, Manual,
	// ManualCheckpoint, or Registered for a path a user gave.
	Purpose SavepointPurpose `json:"purpose,omitempty"`
	// JobID is the job the snapshot is of.
	JobID string `json:"jobID,omitempty"`
	// TriggerID and TriggerTime are the snapshot's trigger, recorded before it was sent to Flink.
	TriggerID   string       `json:"triggerID,omitempty"`
	TriggerTime *metav1.Time `json:"triggerTime,omitempty"`
	// Path is where the completed snapshot is.
	Path string `json:"path,omitempty"`
	// ResultTime is when the operator learned how the snapshot ended.
	ResultTime *metav1.Time `json:"resultTime,omitempty"`
	// Error says why the snapshot failed, or why the operator cannot act on the object.
	Error string `json:"error,omitempty"`
	// Attempts counts the triggers sent for a snapshot asked for here; NextAttemptTime is when a
	// failed one is tried again.
	Attempts        int32        `json:"attempts,omitempty"`
	NextAttemptTime *metav1.Time `json:"nextAttemptTime,omitempty"`
	// ObservedGeneration is the generation of the spec this status answers.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Labels of FlinkSnapshots, so that `kubectl get fsnap -l` selects them.
const (
	SnapshotOwnerKindLabel = "flink.k8s.io/owner-kind"
	SnapshotOwnerLabel     = "flink.k8s.io/owner"
	SnapshotPurposeLabel   = "flink.k8s.io/purpose"
	SnapshotStateLabel     = "flink.k8s.io/state"
)

// SnapshotRegistered is the purpose of a snapshot a user registered by its path.
const SnapshotRegistered SavepointPurpose = "Registered"
