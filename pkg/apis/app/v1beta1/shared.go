package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The parts that several kinds share, each written once and embedded inline: the JSON of every kind
// is as flat as before, and the operator reads each part of any kind through one type instead of
// copying one kind into the shape of another.

// SupportedFlinkVersions are the Flink releases the operator supports and tests, oldest first:
// ClusterSpec.FlinkVersion is refused at apply outside them (except earlier 1.x, for Lyft manifests).
var SupportedFlinkVersions = []string{"1.18", "1.19", "1.20", "2.0", "2.1", "2.2", "2.3"}

// ClusterSpec shapes a Flink cluster: the images, pods, ports and Flink configuration of its
// JobManager and TaskManagers. FlinkApplication and FlinkSessionCluster embed it; how many
// TaskManagers run and what makes the cluster restart are each kind's own.
type ClusterSpec struct {
	// Image is the container image of the JobManager and TaskManagers. A FlinkApplication's job runs
	// from a jar in the image's web upload directory; session jobs bring their own jars.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule=`self.matches('^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:[.](?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$')`,message="image must be a container image reference, [registry[:port]/]repository[:tag][@digest], with a lowercase repository and no spaces",reason=FieldValueInvalid
	Image string `json:"image"`
	// +kubebuilder:validation:Enum=Always;Never;IfNotPresent
	ImagePullPolicy    corev1.PullPolicy             `json:"imagePullPolicy,omitempty"`
	ImagePullSecrets   []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	ServiceAccountName string                        `json:"serviceAccountName,omitempty"`
	SecurityContext    *corev1.PodSecurityContext    `json:"securityContext,omitempty"`

	// FlinkConfig is added to the cluster's Flink configuration. Values must be strings, numbers or
	// booleans; nested objects are read as Flink reads nested YAML (dotted keys), a list as its items
	// joined with ";". The operator sets the keys it needs itself (ports, slots, memory).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	FlinkConfig FlinkConfig `json:"flinkConfig,omitempty"`
	// FlinkVersion is the Flink release the image runs. It decides which memory keys are rendered
	// (process size from 1.11 on, heap before) and what the operator's REST calls carry. Supported
	// and tested are 1.18, 1.19, 1.20, 2.0, 2.1, 2.2 and 2.3 (SupportedFlinkVersions), with or without a
	// patch version ("1.20.1"); earlier 1.x versions, which Lyft manifests name, are accepted as
	// before but untested. Empty means a current release.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[vV]?1[.][0-9]') || self.matches('^[vV]?2[.][0-3]([.][0-9]+)?([-+_].*)?$')`,message="flinkVersion must be a supported Flink version: 1.18, 1.19, 1.20, 2.0, 2.1, 2.2 or 2.3, with or without a patch version such as 1.20.1 (earlier 1.x versions are accepted, untested, as the Lyft operator accepted them)",reason=FieldValueInvalid
	FlinkVersion string `json:"flinkVersion,omitempty"`

	JobManagerConfig JobManagerConfig `json:"jobManagerConfig,omitempty"`

	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	RPCPort *int32 `json:"rpcPort,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	BlobPort *int32 `json:"blobPort,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	QueryPort *int32 `json:"queryPort,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	UIPort *int32 `json:"uiPort,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	MetricsQueryPort *int32 `json:"metricsQueryPort,omitempty"`

	Volumes      []corev1.Volume      `json:"volumes,omitempty"`
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`

	// PodTemplate is a pod template for the JobManager and TaskManager pods, as the Apache Flink
	// operator's: sidecars, initContainers, probes, priorityClassName, topologySpreadConstraints,
	// labels, annotations, any pod field. Its main container is named flink-main-container. The
	// component's own podTemplate is laid over it, then the pod the operator renders: the spec's
	// fields above win where both set the same thing, and the operator keeps what it owns (the main
	// container's name, image, args, ports, cpu, memory and environment, the selector labels).
	// Containers, initContainers, volumes and env merge by name. docs/pod-templates.md has the order.
	// It has no schema (a pod's would make the CRD too large to store): the pod policy judges it, and
	// the operator leaves an object whose template does not read as one aside with an Undecodable Event.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	PodTemplate *corev1.PodTemplateSpec `json:"podTemplate,omitempty"`
	// LogConfiguration replaces the image's logging configuration: the content of
	// log4j-console.properties (Flink's default log4j 2 setup) and/or logback-console.xml, by file
	// name. The operator keeps them in a ConfigMap of each cluster and mounts them over the files of
	// the image's conf directory. Unset, the image's own files are used, as the Lyft operator did.
	// +kubebuilder:validation:MaxProperties=2
	// +kubebuilder:validation:XValidation:rule="self.all(k, k == 'log4j-console.properties' || k == 'logback-console.xml')",message="logConfiguration takes log4j-console.properties and logback-console.xml only"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 262144)",message="a logging configuration file must be at most 256 KiB"
	LogConfiguration map[string]string `json:"logConfiguration,omitempty"`
}

// MachineStatus is where an object stands in the operator's state machine, beside its phase (whose
// type is each kind's own): the reason, the retry state and the conditions. Every kind embeds it.
type MachineStatus struct {
	Reason string `json:"reason,omitempty"`
	// ObservedGeneration is the spec generation the phase and hashes were decided from.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// PhaseStartedAt is when the object entered its current phase; phase deadlines count from it.
	PhaseStartedAt *metav1.Time `json:"phaseStartedAt,omitempty"`
	LastUpdatedAt  *metav1.Time `json:"lastUpdatedAt,omitempty"`
	// FailedDeployHash is the hash of a spec that failed to deploy: the object rests in DeployFailed,
	// with what ran before kept, and the spec is not retried until it changes.
	FailedDeployHash string `json:"failedDeployHash,omitempty"`

	// RetryCount counts consecutive failed attempts in the current phase; with LastSeenError it is
	// the retry and backoff state, kept here so that it survives operator restarts.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	RetryCount    int32                  `json:"retryCount,omitempty"`
	LastSeenError *FlinkApplicationError `json:"lastSeenError,omitempty"`

	// Conditions are Ready (the job runs healthy, or the cluster serves jobs, on the intended spec)
	// and Progressing (an update is under way).
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterOwnerStatus is the operator's record of the Flink clusters an object owns. FlinkApplication
// and FlinkSessionCluster embed it.
type ClusterOwnerStatus struct {
	ClusterStatus FlinkClusterStatus `json:"clusterStatus,omitempty"`
	// DeployHash is the running cluster (its objects carry it as flink-app-hash). A FlinkApplication
	// derives it from deployments.stable.clusterHash; a FlinkSessionCluster moves it to a new cluster
	// once that one is ready, and its jobs then move themselves across per their upgradeMode.
	DeployHash string `json:"deployHash,omitempty"`
	// UpdatingHash is the spec being deployed, recorded before its cluster is created.
	UpdatingHash string `json:"updatingHash,omitempty"`
}

// JobOwnerStatus is the operator's record of the job an object owns. It doubles as a write-ahead
// log: the target, the savepoint trigger and the job id are written here before the action that
// depends on them, so an operator restarted at any point resumes instead of repeating it.
// FlinkApplication and FlinkSessionJob embed it.
type JobOwnerStatus struct {
	JobStatus FlinkJobStatus `json:"jobStatus,omitempty"`
	// Deployments are the operator's records of what runs and what is being deployed; every decision
	// reads them. jobStatus.jobID and jobStatus.clusterHash (and a FlinkApplication's deployHash,
	// updatingHash and savepointTriggerId) are derived from them.
	Deployments Deployments `json:"deployments,omitempty"`

	// SavepointPath is the savepoint a stop left for the next job to start from, as in the Lyft
	// operator: cleared once that job runs (jobStatus.restorePath keeps it), and the final savepoint
	// once the object is deleted. It only ever names a savepoint: a job that restores a checkpoint
	// shows it in deployments.nextRestorePath alone.
	SavepointPath string `json:"savepointPath,omitempty"`
	// FinalSavepointPath is the savepoint taken when the object was deleted.
	FinalSavepointPath string `json:"finalSavepointPath,omitempty"`
	// UpgradeMode is the upgrade mode in effect (for a FlinkApplication, Stateless when it sets the
	// Lyft operator's savepointDisabled).
	UpgradeMode UpgradeMode `json:"upgradeMode,omitempty"`
	// SavepointTriggerNonce is the savepointTriggerNonce of the spec whose savepoint was taken (or is
	// being taken): one savepoint per nonce, however often the operator restarts.
	SavepointTriggerNonce Nonce `json:"savepointTriggerNonce,omitempty"`
	// CheckpointTriggerNonce is the checkpointTriggerNonce of the spec whose checkpoint was taken (or
	// is being taken): one checkpoint per nonce.
	CheckpointTriggerNonce Nonce `json:"checkpointTriggerNonce,omitempty"`
	// SavepointRedeployNonce is the savepointRedeployNonce of the spec whose redeploy was made: the
	// new job's restore was recorded to start from the named savepoint. One redeploy per nonce.
	SavepointRedeployNonce Nonce `json:"savepointRedeployNonce,omitempty"`
	// Savepoints are the last savepoints taken of the job, newest last, as the ledger records them.
	// +kubebuilder:validation:MaxItems=10
	Savepoints []SavepointRecord `json:"savepoints,omitempty"`
	// Ledger is every state of the object's jobs the operator knows of: each savepoint it asked for,
	// of any purpose, recorded before it was triggered, and the checkpoints it recorded. The restore
	// policy reads it; savepointPath, finalSavepointPath, savepoints, jobStatus.lastCheckpoint (and a
	// FlinkApplication's lastTeardown.savepointPath and savepointTriggerId) are derived from it.
	// +kubebuilder:validation:MaxItems=32
	Ledger []StateEntry `json:"ledger,omitempty"`
}
