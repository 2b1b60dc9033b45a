package v1beta1

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FlinkApplication runs one Flink job on a Flink cluster that the operator creates and carries through
// updates, failures and deletion without losing the job's state.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=flinkapp;flinkapps,categories=flink
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, flinkfsm is not a Kubernetes project API"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Cluster Health",type=string,JSONPath=`.status.clusterStatus.health`
// +kubebuilder:printcolumn:name="Job Health",type=string,JSONPath=`.status.jobStatus.health`
// +kubebuilder:printcolumn:name="Upgrade Mode",type=string,JSONPath=`.status.upgradeMode`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.spec.state`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.jobStatus.jobRestartCount`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.deployVersion`
// +kubebuilder:printcolumn:name="Updating Version",type=string,JSONPath=`.status.updatingVersion`
// +kubebuilder:printcolumn:name="Healthy TMs",type=integer,JSONPath=`.status.clusterStatus.healthyTaskManagers`,priority=1
// +kubebuilder:printcolumn:name="Total TMs",type=integer,JSONPath=`.status.clusterStatus.numberOfTaskManagers`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 54",message="metadata.name must be at most 54 characters: the operator names the cluster's Service <name>-<8-character hash>, and a Service name has at most 63",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (lowercase letters, digits and '-', starting with a letter, no dots): it names the cluster's Services",reason=FieldValueInvalid
type FlinkApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FlinkApplicationSpec   `json:"spec"`
	Status FlinkApplicationStatus `json:"status,omitempty"`
}

// FlinkApplicationList is a list of FlinkApplications.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type FlinkApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FlinkApplication `json:"items"`
}

// FlinkApplicationSpec is what the user wants running. Every field of the Lyft operator's spec keeps its
// name and meaning.
//
// +kubebuilder:validation:XValidation:rule="!has(self.savepointPath) || !has(self.savepointInfo) || !has(self.savepointInfo.savepointLocation) || self.savepointPath == self.savepointInfo.savepointLocation",message="savepointPath and the deprecated savepointInfo.savepointLocation name different savepoints; set only savepointPath"
// +kubebuilder:validation:XValidation:rule="!has(self.upgradeMode) || !has(self.savepointDisabled) || !self.savepointDisabled || self.upgradeMode != 'Savepoint'",message="savepointDisabled contradicts upgradeMode Savepoint; set upgradeMode to LastState or Stateless, or drop savepointDisabled"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.deploymentMode) || !has(self.deploymentMode) || (self.deploymentMode == 'BlueGreen') == (oldSelf.deploymentMode == 'BlueGreen')",message="deploymentMode cannot be switched to or from BlueGreen on an existing application; create a new FlinkApplication instead"
// +kubebuilder:validation:XValidation:rule="!has(self.deploymentMode) || self.deploymentMode != 'BlueGreen' || !has(self.scaleMode) || self.scaleMode != 'InPlace'",message="scaleMode InPlace cannot apply to deploymentMode BlueGreen, where every change starts a new version beside the deployed one; drop scaleMode"
// +kubebuilder:validation:XValidation:rule="!has(self.programArgs) || size(self.programArgs) == 0 || !has(self.programArgsList) || size(self.programArgsList) == 0",message="programArgs and programArgsList both give the program's arguments; set only programArgsList"
// +kubebuilder:validation:XValidation:rule="!has(self.savepointRedeployNonce) || size(string(self.savepointRedeployNonce)) == 0 || (has(self.savepointPath) && size(self.savepointPath) > 0) || (has(self.restoreSnapshot) && size(self.restoreSnapshot) > 0)",message="savepointRedeployNonce redeploys from spec.savepointPath or spec.restoreSnapshot: set one of them to the savepoint to start from",fieldPath=".savepointPath"
// +kubebuilder:validation:XValidation:rule="!has(self.restoreSnapshot) || size(self.restoreSnapshot) == 0 || !has(self.savepointPath) || size(self.savepointPath) == 0",message="savepointPath and restoreSnapshot both name the state to start from; set only one",fieldPath=".restoreSnapshot"
// +kubebuilder:validation:XValidation:rule="has(self.jarName) != has(self.jarURI)",message="the job's jar is named by jarName (a jar in the image's upload directory) or by jarURI (local:///path/in/the/image.jar): set one of them",fieldPath=".jarName"
type FlinkApplicationSpec struct {
	ClusterSpec `json:",inline"`

	TaskManagerConfig TaskManagerConfig `json:"taskManagerConfig,omitempty"`

	// JarName is the jar id in the JobManager's upload directory, as Flink's /jars/:jarid/run takes it.
	// Set jarName or jarURI.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	JarName string `json:"jarName,omitempty"`
	// JarURI is the job's jar as the Apache operator names it, a path inside the image:
	// local:///opt/flink/usrlib/job.jar. The JobManager copies it into its upload directory each time
	// it starts, and the job runs from it as from jarName. Set jarName or jarURI.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches('^local:///[A-Za-z0-9._+-]+(/[A-Za-z0-9._+-]+)*[.]jar$') && !self.contains('/../') && !self.contains('/./')",message="jarURI is local:// and the absolute path of a .jar file inside the image, in letters, digits and . _ + -, as local:///opt/flink/usrlib/job.jar"
	JarURI     string `json:"jarURI,omitempty"`
	EntryClass string `json:"entryClass,omitempty"`
	// ProgramArgs are the program's arguments in one string, split as Flink 1.x splits it (quoted
	// strings kept whole). ProgramArgsList gives them one per item, none ever split; set one of them.
	ProgramArgs string `json:"programArgs,omitempty"`
	// +kubebuilder:validation:MaxItems=1024
	ProgramArgsList []string `json:"programArgsList,omitempty"`
	// Parallelism of the job; TaskManagers = ceil(parallelism / taskSlots). Flink runs no operator
	// above its maximum parallelism, which is at most 32768.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32768
	Parallelism int32 `json:"parallelism"`
	// AllowNonRestoredState lets a new job start from a savepoint that has state for operators it no longer has.
	AllowNonRestoredState bool `json:"allowNonRestoredState,omitempty"`

	// SavepointPath is restored by the first deployment only; later ones restore what the operator took.
	SavepointPath string `json:"savepointPath,omitempty"`
	// RestoreSnapshot names a FlinkSnapshot of the namespace whose state the first deployment, and
	// each savepointRedeployNonce, starts from, as savepointPath would: it may be another
	// application's. The deployment waits until the snapshot is Completed.
	// +kubebuilder:validation:MaxLength=253
	RestoreSnapshot string `json:"restoreSnapshot,omitempty"`
	// SavepointInfo is the deprecated form of SavepointPath.
	SavepointInfo SavepointInfo `json:"savepointInfo,omitempty"`
	// SavepointDisabled is the Lyft operator's way to update without a savepoint; without an
	// upgradeMode it means what it meant there: Stateless (cancel, start the new job without state).
	// Set upgradeMode LastState to restore the newest retained checkpoint instead.
	SavepointDisabled bool `json:"savepointDisabled,omitempty"`
	// UpgradeMode is how the job's state crosses an update or a suspend: Savepoint (the default; a
	// savepoint, then the new job starts from it), LastState (cancel, then start from the newest
	// retained checkpoint) or Stateless (cancel, start empty).
	// +kubebuilder:validation:Enum=Stateless;Savepoint;LastState
	UpgradeMode UpgradeMode `json:"upgradeMode,omitempty"`
	// State is the job's desired state: Running, or Suspended (stopped per upgradeMode, its state
	// recorded in status.savepointPath and its cluster deleted until it is Running again).
	// +kubebuilder:validation:Enum=Running;Suspended
	// +kubebuilder:default=Running
	State JobDesiredState `json:"state,omitempty"`
	// RestartFailedJob restarts a job that ends FAILED while Running from its newest checkpoint
	// instead of only reporting it.
	RestartFailedJob bool `json:"restartFailedJob,omitempty"`
	// ReadinessTimeoutSeconds bounds how long a newly submitted job may take to run stable before the
	// update is rolled back; it overrides the operator's readinessTimeout.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	ReadinessTimeoutSeconds *int32 `json:"readinessTimeoutSeconds,omitempty"`
	// MaxCheckpointRestoreAgeSeconds bounds how old an externalized checkpoint may be when a savepoint
	// fails and the operator recovers from the newest checkpoint instead.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	MaxCheckpointRestoreAgeSeconds *int32 `json:"maxCheckpointRestoreAgeSeconds,omitempty"`
	// FallbackWithoutState starts the new job without state when neither a savepoint nor a recent enough
	// checkpoint exists. The operator never does that unless this is set.
	FallbackWithoutState bool `json:"fallbackWithoutState,omitempty"`

	// DeploymentMode is how an update replaces the running job: Dual (a new cluster beside the old one),
	// Single (one cluster, replaced) or BlueGreen (both jobs run until one is torn down).
	// +kubebuilder:validation:Enum=Single;Dual;BlueGreen
	// +kubebuilder:default=Dual
	DeploymentMode DeploymentMode `json:"deploymentMode,omitempty"`

	// RestartNonce redeploys the application (new cluster, job restored from a savepoint) when changed.
	RestartNonce Nonce `json:"restartNonce,omitempty"`
	// SavepointTriggerNonce takes a savepoint of the running job, which keeps running, each time it
	// changes; status.savepoints records it.
	SavepointTriggerNonce Nonce `json:"savepointTriggerNonce,omitempty"`
	// CheckpointTriggerNonce takes a checkpoint of the running job (Flink 1.17+) each time it
	// changes; the ledger records it, and it is a state a later restart may restore.
	CheckpointTriggerNonce Nonce `json:"checkpointTriggerNonce,omitempty"`
	// SavepointRedeployNonce redeploys the application from spec.savepointPath each time it changes,
	// on a running, failed or suspended application alike: a running job is first stopped per its
	// upgradeMode (its state stays recorded), then the new job starts from the named savepoint.
	SavepointRedeployNonce Nonce `json:"savepointRedeployNonce,omitempty"`
	// PeriodicSavepoint takes savepoints of the running job on a schedule, never while an update,
	// a suspend or a delete is under way.
	PeriodicSavepoint *PeriodicSchedule `json:"periodicSavepoint,omitempty"`
	// PeriodicCheckpoint takes checkpoints of the running job (Flink 1.17+) on a schedule, beside
	// those Flink takes by itself, never while an update, a suspend or a delete is under way.
	PeriodicCheckpoint *PeriodicSchedule `json:"periodicCheckpoint,omitempty"`
	// SavepointFormatType is the format of every savepoint the operator takes of the job: Canonical
	// (Flink's default, portable between state backends) or Native (the state backend's own, faster
	// to take and to restore; Flink 1.15+).
	// +kubebuilder:validation:Enum=Canonical;Native
	SavepointFormatType SavepointFormatType `json:"savepointFormatType,omitempty"`
	// SavepointRetention bounds the savepoints kept, in status.savepoints and as FlinkSnapshots, by
	// count and age, and may dispose of older ones.
	SavepointRetention *SavepointRetention `json:"savepointRetention,omitempty"`
	// DeleteMode is what happens to the job when the FlinkApplication is deleted.
	// +kubebuilder:validation:Enum=Savepoint;ForceCancel;None
	// +kubebuilder:default=Savepoint
	DeleteMode DeleteMode `json:"deleteMode,omitempty"`
	// +kubebuilder:validation:Enum=NewCluster;InPlace
	ScaleMode ScaleMode `json:"scaleMode,omitempty"`
	// Autoscaler sizes each job vertex from Flink's own metrics: Recommend reports, Apply acts
	// (docs/autoscaler.md).
	// +optional
	Autoscaler *AutoscalerSpec `json:"autoscaler,omitempty"`
	// ForceRollback abandons an update in progress and returns to the previous cluster and job.
	ForceRollback bool `json:"forceRollback,omitempty"`
	// TearDownVersionHash ends BlueGreen's DualRunning by tearing down the version with this hash.
	TearDownVersionHash string `json:"tearDownVersionHash,omitempty"`
	// BlueGreen tunes deploymentMode BlueGreen.
	BlueGreen *BlueGreenSpec `json:"blueGreen,omitempty"`

	// Ingress exposes the Flink UI of the live cluster (for BlueGreen, the deployed version) at a URL
	// made from its template. Without it, an operator configured with ingressUrlFormat (the Lyft
	// operator's setting) makes one from that format.
	Ingress *IngressSpec `json:"ingress,omitempty"`
	// IngressAnnotations are added to the UI's Ingress (spec.ingress.annotations win where both set a
	// key); the operator's ingress.allowedAnnotations says which keys a spec may set.
	// +kubebuilder:validation:MaxProperties=64
	IngressAnnotations map[string]string `json:"ingressAnnotations,omitempty"`
	// IngressTLSSecretName serves the UI's Ingress over TLS with this Secret's certificate, for its host.
	// +kubebuilder:validation:MaxLength=253
	IngressTLSSecretName string `json:"ingressTLSSecretName,omitempty"`
}

// IngressSpec is the Ingress of an application's Flink UI.
type IngressSpec struct {
	// Template is the UI's URL without its scheme: a host (flink.example.com/{{namespace}}/{{name}}
	// takes a path too). {{name}} and {{namespace}} are replaced by the application's; Lyft's
	// {{$jobCluster}} is read as {{name}}. The host must be in a domain the operator grants the
	// namespace (its ingress.hostDomains); the path is plain segments, which route the same under
	// every ingress controller.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.contains('://')",message="spec.ingress.template is a host with an optional path, without a scheme"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9.-]|[{][{](name|namespace|[$]jobCluster)[}][}])+(/(([A-Za-z0-9_~-]|[{][{](name|namespace|[$]jobCluster)[}][}])+/?)*)?$')",message="spec.ingress.template is a host of lowercase letters, digits, '-' and '.', then an optional path of segments of letters, digits, '-', '_' and '~' between single slashes; {{name}} and {{namespace}} may stand anywhere in either"
	Template string `json:"template"`
	// ClassName is the IngressClass that serves it; unset, the cluster's default class.
	// +kubebuilder:validation:MaxLength=253
	ClassName *string `json:"className,omitempty"`
	// Annotations and Labels are set on the Ingress; the operator's ingress.allowedAnnotations says
	// which annotation keys a spec may set.
	// +kubebuilder:validation:MaxProperties=64
	Annotations map[string]string `json:"annotations,omitempty"`
	// +kubebuilder:validation:MaxProperties=64
	Labels map[string]string `json:"labels,omitempty"`
	// TLS serves the URL over TLS; hosts default to the template's host.
	// +kubebuilder:validation:MaxItems=16
	TLS []IngressTLS `json:"tls,omitempty"`
}

// IngressTLS is a certificate for the UI's Ingress.
type IngressTLS struct {
	// Hosts the certificate covers; unset, the template's host. Each must be in a domain the operator
	// grants the namespace, as the template's host.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	Hosts []string `json:"hosts,omitempty"`
	// SecretName holds the certificate and its key.
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName,omitempty"`
}

// SavepointInfo is the deprecated place of the initial savepoint.
type SavepointInfo struct {
	SavepointLocation string `json:"savepointLocation,omitempty"`
}

// JobManagerConfig shapes the JobManager pods.
// +kubebuilder:validation:XValidation:rule="!has(self.resources) || ((has(self.resources.requests) && 'memory' in self.resources.requests && isQuantity(string(self.resources.requests['memory'])) && quantity(string(self.resources.requests['memory'])).isGreaterThan(quantity('0'))) ? quantity(string(self.resources.requests['memory'])).asApproximateFloat() * (1.0 - (has(self.systemMemoryFraction) ? self.systemMemoryFraction : (has(self.offHeapMemoryFraction) ? self.offHeapMemoryFraction : 0.5))) >= 1048576.0 : (!(has(self.resources.limits) && 'memory' in self.resources.limits && isQuantity(string(self.resources.limits['memory']))) || quantity(string(self.resources.limits['memory'])).asApproximateFloat() * (1.0 - (has(self.systemMemoryFraction) ? self.systemMemoryFraction : (has(self.offHeapMemoryFraction) ? self.offHeapMemoryFraction : 0.5))) >= 1048576.0))",message="jobManagerConfig.resources memory, less its memory fraction, leaves Flink less than 1Mi: give the container more memory (Flink needs hundreds of MiB) or set a smaller systemMemoryFraction/offHeapMemoryFraction",fieldPath=".resources",reason=FieldValueInvalid
type JobManagerConfig struct {
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	EnvConfig EnvironmentConfig            `json:"envConfig,omitempty"`
	// Replicas is the number of JobManager pods; more than one needs Flink high availability, or
	// each would run a cluster of its own.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	Replicas *int32 `json:"replicas,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMaximum=true
	// +kubebuilder:validation:Maximum=1
	OffHeapMemoryFraction *float64 `json:"offHeapMemoryFraction,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMaximum=true
	// +kubebuilder:validation:Maximum=1
	SystemMemoryFraction *float64            `json:"systemMemoryFraction,omitempty"`
	NodeSelector         map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations          []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity             *corev1.Affinity    `json:"affinity,omitempty"`
	// PodTemplate is the JobManager pods' template, laid over spec.podTemplate and under the pod the
	// operator renders; its main container is named jobmanager (or flink-main-container). See
	// spec.podTemplate and docs/pod-templates.md.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	PodTemplate *corev1.PodTemplateSpec `json:"podTemplate,omitempty"`
}

// TaskManagerConfig shapes the TaskManager pods.
// +kubebuilder:validation:XValidation:rule="!has(self.resources) || ((has(self.resources.requests) && 'memory' in self.resources.requests && isQuantity(string(self.resources.requests['memory'])) && quantity(string(self.resources.requests['memory'])).isGreaterThan(quantity('0'))) ? quantity(string(self.resources.requests['memory'])).asApproximateFloat() * (1.0 - (has(self.systemMemoryFraction) ? self.systemMemoryFraction : (has(self.offHeapMemoryFraction) ? self.offHeapMemoryFraction : 0.5))) >= 1048576.0 : (!(has(self.resources.limits) && 'memory' in self.resources.limits && isQuantity(string(self.resources.limits['memory']))) || quantity(string(self.resources.limits['memory'])).asApproximateFloat() * (1.0 - (has(self.systemMemoryFraction) ? self.systemMemoryFraction : (has(self.offHeapMemoryFraction) ? self.offHeapMemoryFraction : 0.5))) >= 1048576.0))",message="taskManagerConfig.resources memory, less its memory fraction, leaves Flink less than 1Mi: give the container more memory (Flink needs hundreds of MiB) or set a smaller systemMemoryFraction/offHeapMemoryFraction",fieldPath=".resources",reason=FieldValueInvalid
type TaskManagerConfig struct {
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	EnvConfig EnvironmentConfig            `json:"envConfig,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	TaskSlots *int32 `json:"taskSlots,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMaximum=true
	// +kubebuilder:validation:Maximum=1
	OffHeapMemoryFraction *float64 `json:"offHeapMemoryFraction,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMaximum=true
	// +kubebuilder:validation:Maximum=1
	SystemMemoryFraction *float64            `json:"systemMemoryFraction,omitempty"`
	NodeSelector         map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations          []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity             *corev1.Affinity    `json:"affinity,omitempty"`
	// PodTemplate is the TaskManager pods' template, laid over spec.podTemplate and under the pod the
	// operator renders; its main container is named taskmanager (or flink-main-container). See
	// spec.podTemplate and docs/pod-templates.md.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	PodTemplate *corev1.PodTemplateSpec `json:"podTemplate,omitempty"`
}

// EnvironmentConfig is extra environment for a Flink container, added after the operator's own.
type EnvironmentConfig struct {
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`
	Env     []corev1.EnvVar        `json:"env,omitempty"`
}

// BlueGreenSpec tunes deploymentMode BlueGreen. Left out, it is the Lyft operator's behaviour: both
// versions run until the user sets tearDownVersionHash.
type BlueGreenSpec struct {
	// TeardownMode is how the job of a version that is torn down stops: Savepoint (the default; the
	// savepoint is recorded in status.lastTeardown, so the version's state is never lost) or
	// ForceCancel (a cancel without a savepoint, as the Lyft operator does).
	// +kubebuilder:validation:Enum=Savepoint;ForceCancel
	TeardownMode TeardownMode `json:"teardownMode,omitempty"`
	// Promotion is Manual (the default: the user sets tearDownVersionHash) or Auto: the deployed
	// version is torn down once the new one has passed the health gate for promoteAfterSeconds.
	// +kubebuilder:validation:Enum=Manual;Auto
	Promotion Promotion `json:"promotion,omitempty"`
	// PromoteAfterSeconds is how long the new version's job must pass the health gate before Auto
	// promotion: RUNNING with every task running, without a restart, for this long (default 60).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	PromoteAfterSeconds *int32 `json:"promoteAfterSeconds,omitempty"`
	// MinCheckpoints is how many checkpoints the new version's job must have completed before the
	// gate passes (default 1).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	MinCheckpoints *int32 `json:"minCheckpoints,omitempty"`
	// AbortAfterSeconds tears a new version down when it has not passed the gate this long after
	// it started running beside the deployed one, or as soon as its job fails; the deployed version
	// was never touched and keeps running. Unset never aborts.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	AbortAfterSeconds *int32 `json:"abortAfterSeconds,omitempty"`
	// TeardownDelaySeconds keeps the previous version running this long after an Auto promotion
	// moved the application's Service to the new one, as a fast way back: forceRollback within it
	// tears the new version down instead.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=604800
	TeardownDelaySeconds *int32 `json:"teardownDelaySeconds,omitempty"`
	// LastStateFrom is what a new version of an upgradeMode LastState application starts from:
	// Savepoint (the default, as the Apache operator does) takes a savepoint of the deployed
	// version's job without stopping it, so the new version starts from its state as of now;
	// Checkpoint starts it from that job's newest retained checkpoint, without a savepoint's cost,
	// up to a checkpoint interval older. A savepoint that fails falls back to the newest checkpoint
	// younger than maxCheckpointRestoreAgeSeconds, as upgradeMode Savepoint does.
	// +kubebuilder:validation:Enum=Savepoint;Checkpoint
	LastStateFrom LastStateSource `json:"lastStateFrom,omitempty"`
}

// LastStateSource is what a new BlueGreen version of a LastState application starts from.
type LastStateSource string

// The sources of a new LastState BlueGreen version's state.
const (
	LastStateFromSavepoint  LastStateSource = "Savepoint"
	LastStateFromCheckpoint LastStateSource = "Checkpoint"
)

// Promotion is how a new BlueGreen version replaces the deployed one.
type Promotion string

// The promotion modes.
const (
	PromotionManual Promotion = "Manual"
	PromotionAuto   Promotion = "Auto"
)

// TeardownMode is how the job of a torn-down BlueGreen version stops.
type TeardownMode string

// The teardown modes.
const (
	TeardownModeSavepoint   TeardownMode = "Savepoint"
	TeardownModeForceCancel TeardownMode = "ForceCancel"
)

// DeploymentMode is how an update replaces the running job.
type DeploymentMode string

// The deployment modes.
const (
	DeploymentModeSingle    DeploymentMode = "Single"
	DeploymentModeDual      DeploymentMode = "Dual"
	DeploymentModeBlueGreen DeploymentMode = "BlueGreen"
)

// UpgradeMode is how a job's state is carried from the old job to the new one.
type UpgradeMode string

// The upgrade modes.
const (
	// UpgradeModeStateless cancels the job and starts the new one without state.
	UpgradeModeStateless UpgradeMode = "Stateless"
	// UpgradeModeSavepoint takes a savepoint with cancel and starts the new job from it.
	UpgradeModeSavepoint UpgradeMode = "Savepoint"
	// UpgradeModeLastState cancels the job and starts the new one from its newest retained checkpoint.
	UpgradeModeLastState UpgradeMode = "LastState"
)

// JobDesiredState is whether the user wants the job running or suspended.
type JobDesiredState string

// The desired job states.
const (
	JobStateRunning   JobDesiredState = "Running"
	JobStateSuspended JobDesiredState = "Suspended"
)

// DeleteMode is what deleting the FlinkApplication does to its job.
type DeleteMode string

// The delete modes.
const (
	// DeleteModeSavepoint takes a final savepoint, cancelling the job, before the cluster goes.
	DeleteModeSavepoint DeleteMode = "Savepoint"
	// DeleteModeForceCancel cancels the job without a savepoint.
	DeleteModeForceCancel DeleteMode = "ForceCancel"
	// DeleteModeNone leaves Flink alone and lets the cluster be garbage collected.
	DeleteModeNone DeleteMode = "None"
)

// ScaleMode is how a parallelism change is carried out.
type ScaleMode string

// The scale modes.
const (
	ScaleModeNewCluster ScaleMode = "NewCluster"
	ScaleModeInPlace    ScaleMode = "InPlace"
)

// MinPeriodicIntervalSeconds is the least time between two periodic snapshots of a job, however
// their schedule is written: intervalSeconds' minimum, and the least step of a schedule's times.
const MinPeriodicIntervalSeconds = 60

// PeriodicSchedule is when periodic savepoints or checkpoints are taken of a running job: every
// intervalSeconds, or at the times a cron expression names. Set one of the two.
// +kubebuilder:validation:XValidation:rule="has(self.intervalSeconds) != has(self.schedule)",message="set one of intervalSeconds and schedule"
type PeriodicSchedule struct {
	// IntervalSeconds is the time between two snapshots of a running job.
	// +kubebuilder:validation:Minimum=60
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	IntervalSeconds int32 `json:"intervalSeconds,omitempty"`
	// Schedule is a cron expression in the operator's time zone (UTC unless its TZ is set): five
	// fields (minute hour day-of-month month day-of-week), or a descriptor such as @hourly or @daily.
	// A snapshot is taken at each time it names while the job runs; a time missed while the job did
	// not run is not made up. Its times are at least 60 s apart, as intervalSeconds' are: five
	// fields name whole minutes, and an @every shorter than 60s is refused.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^((CRON_)?TZ=[^ ]* +)?@every ') || self.matches('^((CRON_)?TZ=[^ ]* +)?@every ([0-9.]+(ns|us|µs|μs|ms|s|m|h))+$') && duration(self.substring(self.indexOf('@every ') + 7)) >= duration('60s')`,message="an @every schedule must be at least 60s, the least interval between periodic snapshots (as intervalSeconds)",reason=FieldValueInvalid
	// +optional
	Schedule string `json:"schedule,omitempty"`
}

// SavepointRetention is how many savepoints are kept, for how long, and whether older ones are
// deleted. Never the newest restorable state, nor one a job was restored from within maxAge.
type SavepointRetention struct {
	// Keep is how many of the owner's savepoint FlinkSnapshots are kept, newest first;
	// status.savepoints shows the newest 10 of them at most. Zero takes the operator's default.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Keep int32 `json:"keep,omitempty"`
	// MaxAge removes the owner's savepoint FlinkSnapshots older than this (a duration such as 72h);
	// unset takes the operator's default, which keeps them regardless of age unless it sets one.
	// +optional
	MaxAge *metav1.Duration `json:"maxAge,omitempty"`
	// DisposeOlder deletes, through Flink's savepoint disposal, the completed savepoints that fall out
	// of status.savepoints; never the one the running job was restored from.
	DisposeOlder bool `json:"disposeOlder,omitempty"`
}

// JobJar is the jar id the job runs from: jarName, or the file name of jarURI, which the JobManager
// copies into its upload directory.
func (s *FlinkApplicationSpec) JobJar() string {
	if s.JarURI != "" {
		return path.Base(s.JarURI)
	}
	return s.JarName
}

// JarInImage is the path inside the image jarURI names; "" without one.
func (s *FlinkApplicationSpec) JarInImage() string {
	return strings.TrimPrefix(s.JarURI, "local://")
}
