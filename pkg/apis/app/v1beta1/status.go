package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FlinkApplicationStatus is the operator's record of the application. It doubles as a write-ahead log:
// the target hash, the savepoint trigger id and the job id are written here before the action that
// depends on them, so an operator restarted at any point resumes instead of repeating the action.
type FlinkApplicationStatus struct {
	Phase         FlinkApplicationPhase `json:"phase,omitempty"`
	MachineStatus `json:",inline"`
	StartedAt     *metav1.Time `json:"startedAt,omitempty"`

	DeployVersion      FlinkApplicationVersion `json:"deployVersion,omitempty"`
	UpdatingVersion    FlinkApplicationVersion `json:"updatingVersion,omitempty"`
	ClusterOwnerStatus `json:",inline"`
	JobOwnerStatus     `json:",inline"`
	VersionStatuses    []FlinkApplicationVersionStatus `json:"versionStatuses,omitempty"`

	// RollbackHash is the hash the application rolled back to after a failed deploy.
	RollbackHash string `json:"rollbackHash,omitempty"`
	// TeardownHash is the spec hash of the BlueGreen version torn down last.
	TeardownHash string `json:"teardownHash,omitempty"`
	// LastTeardown is the BlueGreen version torn down last, with the state its job stopped with.
	LastTeardown *TeardownRecord `json:"lastTeardown,omitempty"`
	// InPlaceUpdatedFromHash and UpdatingSpec were written by operator versions before deployments;
	// they are read once, to migrate, and then left empty.
	InPlaceUpdatedFromHash string `json:"inPlaceUpdatedFromHash,omitempty"`
	UpdatingSpec           string `json:"updatingSpec,omitempty"`

	// SavepointTriggerID is the savepoint in progress of the stable deployment's job
	// (deployments.stable.savepoint.triggerID).
	SavepointTriggerID string `json:"savepointTriggerId,omitempty"`
	// LastStableSpec was written by operator versions before deployments (now deployments.stable); it
	// is read once, to migrate, and then left empty.
	LastStableSpec *StableSpec `json:"lastStableSpec,omitempty"`

	// Autoscaler is what the autoscaler last decided for the job, while spec.autoscaler is on.
	Autoscaler *AutoscalerStatus `json:"autoscaler,omitempty"`

	// DeploymentMode is the mode the application was created with.
	DeploymentMode DeploymentMode `json:"deploymentMode,omitempty"`

	// History holds the most recent phase transitions, newest last.
	// +kubebuilder:validation:MaxItems=20
	History []PhaseTransition `json:"history,omitempty"`
}

// Deployments are the stable deployment and the one in progress.
type Deployments struct {
	// Stable is the deployment whose job last ran stable: what runs, and what a failed update
	// returns to. Nil before a job first ran stable.
	Stable *DeploymentRecord `json:"stable,omitempty"`
	// Candidate is the deployment in progress: an update to a new spec, a restart of the stable
	// spec, or a rollback to it. It is recorded before anything is created for it. Nil when none.
	Candidate *DeploymentRecord `json:"candidate,omitempty"`
	// NextRestorePath is the state the next job starts from, chosen when its predecessor stopped:
	// a savepoint, or a retained checkpoint (upgradeMode LastState, a recovery); empty when it starts
	// without state. status.savepointPath shows it while it is a savepoint.
	NextRestorePath string `json:"nextRestorePath,omitempty"`
}

// DeploymentKind says why a candidate deployment exists.
type DeploymentKind string

// The kinds of candidate deployments.
const (
	// DeploymentUpdate deploys a new spec; if it fails, the application rolls back to the stable one.
	DeploymentUpdate DeploymentKind = "Update"
	// DeploymentRestart runs the stable spec again on its cluster: a lost, failed or recovered job.
	DeploymentRestart DeploymentKind = "Restart"
	// DeploymentRollback runs the stable spec again after an update failed.
	DeploymentRollback DeploymentKind = "Rollback"
)

// DeploymentRecord is one spec deployed on one cluster, with its job.
type DeploymentRecord struct {
	// Kind is why a candidate exists; empty for the stable deployment.
	Kind DeploymentKind `json:"kind,omitempty"`
	// Version is the deployment's colour under deploymentMode BlueGreen; empty otherwise.
	Version FlinkApplicationVersion `json:"version,omitempty"`
	// SpecHash identifies the spec: the hash of the fields that shape its cluster and job.
	SpecHash string `json:"specHash"`
	// Spec is the owning object's spec as JSON, in its own kind's schema (a FlinkApplication's
	// spec, a FlinkSessionJob's), so that its cluster is rendered and its job submitted as it was,
	// even after the spec changes again or its cluster was replaced.
	Spec string `json:"spec,omitempty"`
	// ClusterHash is the cluster the job runs on: the spec's own, or the existing cluster a change
	// was applied to in place (a parallelism change, a restart).
	ClusterHash string `json:"clusterHash"`
	// JobID is the deployment's job. It is chosen and recorded before the job is submitted, and
	// cleared once the job was stopped on purpose or found gone.
	JobID string `json:"jobID,omitempty"`
	// ApplicationID is the Flink application (Flink 2.3 and later) the job runs in, when it is not
	// the job's own id: Flink ran the application again under another job id after a JobManager
	// failover, and the operator followed that job. A JobManager that does not know the job is
	// asked about this application before the job is taken for gone.
	ApplicationID string `json:"applicationID,omitempty"`
	// SubmittedAt is when the job was last sent to Flink without a plain answer (none, or "already
	// submitted"). A job the JobManager does not list within the operator's submitGracePeriod of it
	// is sent again, under the same id. An answered submission leaves it unset: Flink holds the job.
	SubmittedAt *metav1.Time `json:"submittedAt,omitempty"`
	// RestorePath is the state the job started (or starts) from.
	RestorePath string `json:"restorePath,omitempty"`
	// Savepoint was the savepoint asked of the job, written by operator versions before the ledger
	// (status.ledger holds every savepoint asked for now); it is read once, to migrate.
	Savepoint *SavepointTrigger `json:"savepoint,omitempty"`
	// StableTime is when the job was seen running stable.
	StableTime *metav1.Time `json:"stableTime,omitempty"`
	// PromotedAt is when a BlueGreen version was promoted automatically: the application's Service
	// moved to it while the previous version runs on for blueGreen.teardownDelaySeconds.
	PromotedAt *metav1.Time `json:"promotedAt,omitempty"`
	// JarID is the jar a session job's submission runs, as the session cluster's JobManager named it
	// on upload; it is recorded before the run and deleted from the cluster once the job runs.
	JarID string `json:"jarID,omitempty"`
	// SlotsGrantedAt is when a session job whose tasks had to wait for task slots got them, as Flink
	// dates its tasks' start. Its Submitting deadline counts from then: the wait on a full shared
	// cluster is no failure of the job. Unset for a job that did not wait.
	SlotsGrantedAt *metav1.Time `json:"slotsGrantedAt,omitempty"`
}

// SavepointTrigger is a savepoint asked of a job.
type SavepointTrigger struct {
	// TriggerID is chosen and recorded before the savepoint is triggered, and sent to Flink as the
	// trigger id, so a restarted operator polls the same savepoint instead of taking another. Flink
	// before 1.15 chooses its own, which then replaces it.
	TriggerID string `json:"triggerID"`
	// Time is when it was asked for. A savepoint Flink lists as triggered since then is this one,
	// found even after Flink forgot the trigger id or the operator stopped waiting for it.
	Time metav1.Time `json:"time"`
	// Purpose says why the savepoint is taken: Manual or Periodic for one taken of a job that keeps
	// running; empty for the savepoint of a stop.
	Purpose SavepointPurpose `json:"purpose,omitempty"`
}

// SavepointPurpose is why a savepoint was taken, or Checkpoint for a checkpoint the operator
// recorded.
// +kubebuilder:validation:Enum=Manual;Periodic;Upgrade;Suspend;Delete;Teardown;Checkpoint;Redeploy;ManualCheckpoint;PeriodicCheckpoint
type SavepointPurpose string

// The savepoint purposes.
const (
	SavepointManual   SavepointPurpose = "Manual"
	SavepointPeriodic SavepointPurpose = "Periodic"
	SavepointUpgrade  SavepointPurpose = "Upgrade"
	SavepointSuspend  SavepointPurpose = "Suspend"
	SavepointDelete   SavepointPurpose = "Delete"
	SavepointTeardown SavepointPurpose = "Teardown"
	// SavepointRedeploy is a savepoint the user named for a redeploy (savepointRedeployNonce): not
	// taken by the operator, so never disposed of by it.
	SavepointRedeploy SavepointPurpose = "Redeploy"
	// ManualCheckpoint is a checkpoint the user asked for (checkpointTriggerNonce): asked for,
	// triggered and followed as a savepoint is, but a checkpoint, which Flink manages and the
	// operator never disposes of.
	ManualCheckpoint SavepointPurpose = "ManualCheckpoint"
	// PeriodicCheckpoint is a checkpoint taken on spec.periodicCheckpoint's schedule: asked for,
	// triggered and followed as a manual checkpoint is, and never disposed of by the operator either.
	PeriodicCheckpoint SavepointPurpose = "PeriodicCheckpoint"
	// StateCheckpoint marks a ledger entry that is a retained checkpoint the operator recorded.
	StateCheckpoint SavepointPurpose = "Checkpoint"
)

// StateResult is where a ledger entry stands.
// +kubebuilder:validation:Enum=Pending;Completed;Failed
type StateResult string

// The ledger entry results.
const (
	StatePending   StateResult = "Pending"
	StateCompleted StateResult = "Completed"
	StateFailed    StateResult = "Failed"
)

// MaxLedger is how many entries status.ledger keeps.
const MaxLedger = 32

// StateEntry is one state of a job that the operator knows of. A savepoint's entry is written with
// its trigger id and time before the trigger is sent, so a restarted operator polls the savepoint it
// asked for, and a savepoint that completes after the operator stopped waiting is still found by its
// trigger time; it is never dropped while Pending.
type StateEntry struct {
	// Purpose says why the state exists: a savepoint's purpose, or Checkpoint.
	Purpose SavepointPurpose `json:"purpose"`
	// JobID is the job the state is of.
	JobID string `json:"jobID,omitempty"`
	// ClusterHash is the cluster the job ran on, whose JobManager is asked about a savepoint.
	ClusterHash string `json:"clusterHash,omitempty"`
	// TriggerID is the savepoint's trigger id, sent to Flink as the trigger id.
	TriggerID string `json:"triggerID,omitempty"`
	// TriggerTime is when the savepoint was asked for.
	TriggerTime *metav1.Time `json:"triggerTime,omitempty"`
	// SentTime is when the operator sent the trigger to Flink, as far as status knows: unset until
	// the pass that sent it wrote status. Flink took the savepoint no earlier.
	SentTime *metav1.Time `json:"sentTime,omitempty"`
	// SentToJobStart is the job's start time as Flink gave it (epoch milliseconds) when the trigger
	// was sent: a JobMaster that takes the job over starts it again, and knows nothing of the
	// trigger. 0 when Flink gave none.
	SentToJobStart int64 `json:"sentToJobStart,omitempty"`
	// Cancel is set for a savepoint asked for with a cancel of its job: the savepoint of a stop.
	Cancel bool `json:"cancel,omitempty"`
	// Result is Pending until Flink says how the savepoint ended.
	Result StateResult `json:"result"`
	// Path is where the completed state is.
	Path string `json:"path,omitempty"`
	// Time is when the state was taken: Flink's trigger time of the checkpoint or savepoint.
	Time *metav1.Time `json:"time,omitempty"`
	// TimeMillis is the millisecond of Time within its second, which Kubernetes' time format
	// drops: two states taken within one second are ordered by it.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=999
	TimeMillis int32 `json:"timeMillis,omitempty"`
	// Undated is set on a completed savepoint Flink did not say the time of: Time is when its
	// completion was read, no earlier than Flink took it. The next statistics of its job that
	// Flink answers date it: its own time when they list it, else before what they list.
	Undated bool `json:"undated,omitempty"`
	// Reason says why a savepoint failed.
	Reason string `json:"reason,omitempty"`
	// Snapshot is the FlinkSnapshot that shows this entry: the one a user created to ask for it, or
	// the one the operator created once it ended. Set, it is never created again, so a FlinkSnapshot
	// a user deleted stays deleted.
	Snapshot string `json:"snapshot,omitempty"`
	// Gone is when the state's storage was found gone: a job started from it could not find its
	// file or directory, or Flink discarded the checkpoint as the job that took it ended. No job is
	// started from it again, and no older state is taken in its stead: the job may have completed
	// newer state, which the operator cannot list.
	Gone *metav1.Time `json:"gone,omitempty"`
	// Discarded is when Flink said it discarded the job's checkpoints as the job ended, by its
	// checkpoint retention policy. It is set on the job's checkpoint entry, which then names the
	// newest checkpoint Flink listed: no checkpoint of the job taken up to it is restored from.
	// The job's savepoints and the state it started from stand.
	Discarded *metav1.Time `json:"discarded,omitempty"`
	// Disputed is when Flink, after saying the job's checkpoints were discarded, reported the job
	// running with the checkpoint marked still there. Which word is true only storage can say: no
	// restore chooses older state over the job's checkpoints, nor them over it, until Flink says
	// again or a newer state of the job is recorded; the user may name the state to start from.
	Disputed *metav1.Time `json:"disputed,omitempty"`
}

// MaxSavepoints is how many savepoints status.savepoints keeps.
const MaxSavepoints = 10

// SavepointRecord is a savepoint taken of the application's job.
type SavepointRecord struct {
	Time    metav1.Time      `json:"time"`
	Trigger SavepointPurpose `json:"trigger"`
	// Result is Completed or Failed.
	// +kubebuilder:validation:Enum=Completed;Failed
	Result string `json:"result"`
	// Path is the completed savepoint's location.
	Path string `json:"path,omitempty"`
	// Reason says why it failed.
	Reason string `json:"reason,omitempty"`
}

// TeardownRecord is a BlueGreen version that was torn down.
type TeardownRecord struct {
	Version     FlinkApplicationVersion `json:"version,omitempty"`
	VersionHash string                  `json:"versionHash,omitempty"`
	JobID       string                  `json:"jobID,omitempty"`
	// SavepointPath is the savepoint its job stopped with; empty when it was cancelled without one.
	SavepointPath string      `json:"savepointPath,omitempty"`
	Time          metav1.Time `json:"time"`
}

// StableSpec is a spec that ran stable, with what a rollback needs to start it again.
type StableSpec struct {
	// SpecHash is the cluster hash of the spec. It differs from status.deployHash, the cluster the job
	// runs on, after a parallelism change made in place.
	SpecHash string `json:"specHash"`
	// Spec is the spec as JSON, so that its cluster can be rendered again after it was replaced.
	Spec string `json:"spec"`
	// JobID is the job that ran stable.
	JobID string `json:"jobID,omitempty"`
	// RestorePath is the state that job started from.
	RestorePath string `json:"restorePath,omitempty"`
	// StableTime is when the job was seen stable.
	StableTime metav1.Time `json:"stableTime"`
}

// PhaseTransition is one entry of the status history.
type PhaseTransition struct {
	From   FlinkApplicationPhase `json:"from,omitempty"`
	To     FlinkApplicationPhase `json:"to"`
	Time   metav1.Time           `json:"time"`
	Reason string                `json:"reason,omitempty"`
}

// MaxHistory is how many phase transitions the status keeps.
const MaxHistory = 20

// FlinkClusterStatus is the health of a Flink cluster as Flink reports it.
type FlinkClusterStatus struct {
	ClusterOverviewURL string       `json:"clusterOverviewURL,omitempty"`
	Health             HealthStatus `json:"health,omitempty"`
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	NumberOfTaskManagers int32 `json:"numberOfTaskManagers,omitempty"`
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	HealthyTaskManagers int32 `json:"healthyTaskManagers,omitempty"`
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	NumberOfTaskSlots int32 `json:"numberOfTaskSlots,omitempty"`
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	AvailableTaskSlots int32 `json:"availableTaskSlots,omitempty"`
}

// FlinkJobStatus is the state of the application's job and the parameters it was started with.
type FlinkJobStatus struct {
	JobOverviewURL string `json:"jobOverviewURL,omitempty"`
	JobID          string `json:"jobID,omitempty"`
	// ClusterHash is the cluster the job was submitted to; with JobID it is recorded before submission.
	ClusterHash string       `json:"clusterHash,omitempty"`
	Health      HealthStatus `json:"health,omitempty"`
	State       JobState     `json:"state,omitempty"`

	JarName string `json:"jarName,omitempty"`
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Parallelism           int32  `json:"parallelism,omitempty"`
	EntryClass            string `json:"entryClass,omitempty"`
	ProgramArgs           string `json:"programArgs,omitempty"`
	AllowNonRestoredState bool   `json:"allowNonRestoredState,omitempty"`

	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	JobRestartCount int32 `json:"jobRestartCount,omitempty"`
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	CompletedCheckpointCount int32 `json:"completedCheckpointCount,omitempty"`
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	FailedCheckpointCount int32 `json:"failedCheckpointCount,omitempty"`
	// RestorePath is where the running job's state came from, as Flink reports it.
	RestorePath string `json:"restorePath,omitempty"`
	// RestoreTime is when the job started from restorePath: its start when the operator submitted
	// it, Flink's restore time after a failover. The state is at least that old, so a recovery
	// prefers a checkpoint recorded later.
	RestoreTime *metav1.Time `json:"restoreTime,omitempty"`
	// LastFailingTime is when the job was last seen FAILING or RESTARTING.
	LastFailingTime *metav1.Time `json:"lastFailingTime,omitempty"`

	LastCheckpointPath string       `json:"lastCheckpoint,omitempty"`
	LastCheckpointTime *metav1.Time `json:"lastCheckpointTime,omitempty"`

	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	RunningTasks int32 `json:"runningTasks,omitempty"`
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	TotalTasks int32 `json:"totalTasks,omitempty"`
}

// FlinkApplicationVersion is a BlueGreen colour.
type FlinkApplicationVersion string

// The BlueGreen colours.
const (
	BlueFlinkApplication  FlinkApplicationVersion = "blue"
	GreenFlinkApplication FlinkApplicationVersion = "green"
)

// FlinkApplicationVersionStatus is the status of one BlueGreen colour.
type FlinkApplicationVersionStatus struct {
	Version       FlinkApplicationVersion `json:"appVersion,omitempty"`
	VersionHash   string                  `json:"versionHash,omitempty"`
	ClusterStatus FlinkClusterStatus      `json:"clusterStatus,omitempty"`
	JobStatus     FlinkJobStatus          `json:"jobStatus,omitempty"`
}

// HealthStatus summarises a cluster or a job.
type HealthStatus string

// The health values.
const (
	Green  HealthStatus = "Green"
	Yellow HealthStatus = "Yellow"
	Red    HealthStatus = "Red"
)

// JobState is a Flink job status as Flink spells it.
type JobState string

// The Flink job states the operator reads.
const (
	JobInitializing JobState = "INITIALIZING"
	JobCreated      JobState = "CREATED"
	JobRunning      JobState = "RUNNING"
	JobFailing      JobState = "FAILING"
	JobFailed       JobState = "FAILED"
	JobCancelling   JobState = "CANCELLING"
	JobCanceled     JobState = "CANCELED"
	JobFinished     JobState = "FINISHED"
	JobRestarting   JobState = "RESTARTING"
	JobSuspended    JobState = "SUSPENDED"
	JobReconciling  JobState = "RECONCILING"
)

// FlinkApplicationError is the last error an attempt ran into, persisted so that retries and backoff
// continue across operator restarts.
type FlinkApplicationError struct {
	AppError    string `json:"appError,omitempty"`
	Method      string `json:"method,omitempty"`
	ErrorCode   string `json:"errorCode,omitempty"`
	IsRetryable bool   `json:"isRetryable,omitempty"`
	IsFailFast  bool   `json:"isFailFast,omitempty"`
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	MaxRetries          int32        `json:"maxRetries,omitempty"`
	LastErrorUpdateTime *metav1.Time `json:"lastErrorUpdateTime,omitempty"`
}

// Error makes a persisted error usable as an error again.
func (e *FlinkApplicationError) Error() string { return e.AppError }

// The condition types in status.conditions.
const (
	ConditionReady       = "Ready"
	ConditionProgressing = "Progressing"
	// ConditionJobHealthy is True while the running job's health is Green; its reason says what made
	// it Yellow or Red (failing, restarting, tasks not running, checkpoints not completing).
	ConditionJobHealthy = "JobHealthy"
)
