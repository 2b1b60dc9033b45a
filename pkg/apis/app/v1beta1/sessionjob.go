package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FlinkSessionJob is one Flink job on a FlinkSessionCluster, carried through updates, failures and
// deletion without losing its state, as a FlinkApplication's job is.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=flinksessionjob;fsj,categories=flink
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, flinkfsm is not a Kubernetes project API"
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterName`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Job State",type=string,JSONPath=`.status.jobStatus.state`
// +kubebuilder:printcolumn:name="Job Health",type=string,JSONPath=`.status.jobStatus.health`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.spec.job.state`
// +kubebuilder:printcolumn:name="Upgrade Mode",type=string,JSONPath=`.spec.job.upgradeMode`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.jobStatus.jobRestartCount`
// +kubebuilder:printcolumn:name="Job ID",type=string,JSONPath=`.status.jobStatus.jobID`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FlinkSessionJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FlinkSessionJobSpec   `json:"spec"`
	Status FlinkSessionJobStatus `json:"status,omitempty"`
}

// FlinkSessionJobList is a list of FlinkSessionJobs.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type FlinkSessionJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FlinkSessionJob `json:"items"`
}

// FlinkSessionJobSpec is the job a user wants running on a session cluster.
type FlinkSessionJobSpec struct {
	// ClusterName is the FlinkSessionCluster, in the job's namespace, that runs the job. It cannot
	// change: the job would be left running on the cluster it names now, beside its copy on the new one.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName cannot change; delete the FlinkSessionJob (its final savepoint is recorded) and create it on the other cluster from that savepoint"
	ClusterName string `json:"clusterName"`
	// Job is what runs and how its state crosses updates.
	Job JobSpec `json:"job"`
	// DeleteMode is what happens to the job when the FlinkSessionJob is deleted.
	// +kubebuilder:validation:Enum=Savepoint;ForceCancel;None
	// +kubebuilder:default=Savepoint
	DeleteMode DeleteMode `json:"deleteMode,omitempty"`
	// FlinkConfig is the job's own configuration, sent as flinkConfiguration with the submission; it
	// cannot change what the shared cluster was started with (memory, slots, ports). Nested objects
	// are read as Flink reads nested YAML (dotted keys), a list as its items joined with ";".
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	FlinkConfig FlinkConfig `json:"flinkConfig,omitempty"`
}

// JobSpec is a job's jar, its arguments and how its state is carried across updates.
// +kubebuilder:validation:XValidation:rule="!has(self.savepointRedeployNonce) || size(string(self.savepointRedeployNonce)) == 0 || (has(self.initialSavepointPath) && size(self.initialSavepointPath) > 0) || (has(self.restoreSnapshot) && size(self.restoreSnapshot) > 0)",message="savepointRedeployNonce resubmits from spec.job.initialSavepointPath or spec.job.restoreSnapshot: set one of them to the savepoint to start from",fieldPath=".initialSavepointPath"
// +kubebuilder:validation:XValidation:rule="!has(self.restoreSnapshot) || size(self.restoreSnapshot) == 0 || !has(self.initialSavepointPath) || size(self.initialSavepointPath) == 0",message="initialSavepointPath and restoreSnapshot both name the state to start from; set only one",fieldPath=".restoreSnapshot"
type JobSpec struct {
	// JarURI is where the operator fetches the jar to upload to the cluster: an https:// or http://
	// URL, or local:// for a path inside the cluster's image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://') || self.startsWith('local://')",message="jarURI must start with https://, http:// or local://"
	// +kubebuilder:validation:XValidation:rule=`!self.matches('[\\p{Cc}\\p{Cf}]')`,message="jarURI must hold no control or format character (line break, tab, terminal escape, bidirectional override)"
	JarURI string `json:"jarURI"`
	// JarSHA256 is the jar's SHA-256 as 64 hex digits; a fetched jar that does not match is not uploaded.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{64}$`
	JarSHA256  string `json:"jarSHA256,omitempty"`
	EntryClass string `json:"entryClass,omitempty"`
	// Args are the program arguments, one per item, sent as programArgsList so that none is re-split.
	Args []string `json:"args,omitempty"`
	// Parallelism of the job; unset, the cluster's parallelism.default applies. Flink runs no
	// operator above its maximum parallelism, which is at most 32768.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32768
	Parallelism *int32 `json:"parallelism,omitempty"`
	// UpgradeMode is how the job's state crosses an update or a suspend: Savepoint, LastState (the
	// newest retained checkpoint) or Stateless.
	// +kubebuilder:validation:Enum=Stateless;Savepoint;LastState
	// +kubebuilder:default=Savepoint
	UpgradeMode UpgradeMode `json:"upgradeMode,omitempty"`
	// State is the job's desired state: Running, or Suspended (stopped per upgradeMode, its state
	// recorded in status.savepointPath until it is Running again).
	// +kubebuilder:validation:Enum=Running;Suspended
	// +kubebuilder:default=Running
	State JobDesiredState `json:"state,omitempty"`
	// InitialSavepointPath is restored by the first submission only; later ones restore what the
	// operator took.
	InitialSavepointPath string `json:"initialSavepointPath,omitempty"`
	// RestoreSnapshot names a FlinkSnapshot of the namespace whose state the first submission, and
	// each savepointRedeployNonce, starts from, as initialSavepointPath would: it may be another
	// job's. The submission waits until the snapshot is Completed.
	// +kubebuilder:validation:MaxLength=253
	RestoreSnapshot string `json:"restoreSnapshot,omitempty"`
	// AllowNonRestoredState lets a new job start from a savepoint that has state for operators it no longer has.
	AllowNonRestoredState bool `json:"allowNonRestoredState,omitempty"`
	// RestartNonce resubmits the job, its state carried per upgradeMode, when changed.
	RestartNonce Nonce `json:"restartNonce,omitempty"`
	// RestartFailedJob starts a job that FAILED again, from its newest state (without state for
	// upgradeMode Stateless). Without it a FAILED job leaves the FlinkSessionJob in DeployFailed
	// until the spec changes or this is set.
	RestartFailedJob bool `json:"restartFailedJob,omitempty"`
	// SavepointTriggerNonce takes a savepoint of the running job, which keeps running, each time it
	// changes; status.savepoints records it.
	SavepointTriggerNonce Nonce `json:"savepointTriggerNonce,omitempty"`
	// CheckpointTriggerNonce takes a checkpoint of the running job (Flink 1.17+) each time it
	// changes; the ledger records it, and it is a state a later restart may restore.
	CheckpointTriggerNonce Nonce `json:"checkpointTriggerNonce,omitempty"`
	// SavepointRedeployNonce resubmits the job from initialSavepointPath each time it changes, on a
	// running, failed or suspended job alike: a running job is first stopped per its upgradeMode (its
	// state stays recorded), then the new job starts from the named savepoint.
	SavepointRedeployNonce Nonce `json:"savepointRedeployNonce,omitempty"`
	// PeriodicSavepoint takes savepoints of the running job on a schedule, never while an update,
	// a suspend or a delete is under way.
	PeriodicSavepoint *PeriodicSchedule `json:"periodicSavepoint,omitempty"`
	// PeriodicCheckpoint takes checkpoints of the running job (Flink 1.17+) on a schedule, beside
	// those Flink takes by itself, never while an update, a suspend or a delete is under way.
	PeriodicCheckpoint *PeriodicSchedule `json:"periodicCheckpoint,omitempty"`
	// SavepointFormatType is the format of every savepoint the operator takes of the job: Canonical
	// (Flink's default) or Native (the state backend's own; Flink 1.15+).
	// +kubebuilder:validation:Enum=Canonical;Native
	SavepointFormatType SavepointFormatType `json:"savepointFormatType,omitempty"`
	// SavepointRetention bounds the savepoints kept, in status.savepoints and as FlinkSnapshots, by
	// count and age, and may dispose of older ones.
	SavepointRetention *SavepointRetention `json:"savepointRetention,omitempty"`
	// FallbackWithoutState lets the job start without state when no savepoint or retained checkpoint
	// young enough exists; without it such a job is not started and the reason says so.
	FallbackWithoutState bool `json:"fallbackWithoutState,omitempty"`
}

// FlinkSessionJobStatus is the operator's record of a session job, in a FlinkApplicationStatus's shape
// so that the same job operations (submit, savepoint, cancel, recover) can work on either.
type FlinkSessionJobStatus struct {
	Phase          FlinkSessionJobPhase `json:"phase,omitempty"`
	MachineStatus  `json:",inline"`
	JobOwnerStatus `json:",inline"`

	// History holds the most recent phase transitions, newest last.
	// +kubebuilder:validation:MaxItems=20
	History []SessionJobPhaseTransition `json:"history,omitempty"`
}

// SessionJobPhaseTransition is one entry of a session job's history. It has PhaseTransition's shape;
// its phases are the session job's own, as WaitingForCluster is no FlinkApplication phase.
type SessionJobPhaseTransition struct {
	From   FlinkSessionJobPhase `json:"from,omitempty"`
	To     FlinkSessionJobPhase `json:"to"`
	Time   metav1.Time          `json:"time"`
	Reason string               `json:"reason,omitempty"`
}

// FlinkSessionJobPhase is a state of a session job.
// +kubebuilder:validation:Enum="";New;WaitingForCluster;Submitting;Running;Updating;Savepointing;Cancelling;Recovering;Suspended;DeployFailed;Deleting
type FlinkSessionJobPhase string

// The session job phases. An empty phase is read as New.
const (
	SessionJobNew FlinkSessionJobPhase = "New"
	// SessionJobWaitingForCluster waits for the named FlinkSessionCluster to exist and run.
	SessionJobWaitingForCluster FlinkSessionJobPhase = "WaitingForCluster"
	SessionJobSubmitting        FlinkSessionJobPhase = "Submitting"
	SessionJobRunning           FlinkSessionJobPhase = "Running"
	SessionJobUpdating          FlinkSessionJobPhase = "Updating"
	SessionJobSavepointing      FlinkSessionJobPhase = "Savepointing"
	SessionJobCancelling        FlinkSessionJobPhase = "Cancelling"
	SessionJobRecovering        FlinkSessionJobPhase = "Recovering"
	SessionJobSuspended         FlinkSessionJobPhase = "Suspended"
	SessionJobDeployFailed      FlinkSessionJobPhase = "DeployFailed"
	SessionJobDeleting          FlinkSessionJobPhase = "Deleting"
)

// SessionJobPhases lists every session job phase.
var SessionJobPhases = []FlinkSessionJobPhase{
	SessionJobNew, SessionJobWaitingForCluster, SessionJobSubmitting, SessionJobRunning,
	SessionJobUpdating, SessionJobSavepointing, SessionJobCancelling, SessionJobRecovering,
	SessionJobSuspended, SessionJobDeployFailed, SessionJobDeleting,
}
