package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// FlinkSessionCluster is a long-running Flink cluster that FlinkSessionJobs in its namespace share, so
// that many small jobs do not each pay for a JobManager of their own.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=flinksessioncluster;fsc,categories=flink
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, flinkfsm is not a Kubernetes project API"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Cluster Health",type=string,JSONPath=`.status.clusterStatus.health`
// +kubebuilder:printcolumn:name="TMs",type=integer,JSONPath=`.spec.taskManagerConfig.replicas`
// +kubebuilder:printcolumn:name="Total Slots",type=integer,JSONPath=`.status.clusterStatus.numberOfTaskSlots`
// +kubebuilder:printcolumn:name="Free Slots",type=integer,JSONPath=`.status.clusterStatus.availableTaskSlots`
// +kubebuilder:printcolumn:name="Healthy TMs",type=integer,JSONPath=`.status.clusterStatus.healthyTaskManagers`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 54",message="metadata.name must be at most 54 characters: the operator names the cluster's Service <name>-<8-character hash>, and a Service name has at most 63",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (lowercase letters, digits and '-', starting with a letter, no dots): it names the cluster's Services",reason=FieldValueInvalid
type FlinkSessionCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FlinkSessionClusterSpec   `json:"spec"`
	Status FlinkSessionClusterStatus `json:"status,omitempty"`
}

// FlinkSessionClusterList is a list of FlinkSessionClusters.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type FlinkSessionClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FlinkSessionCluster `json:"items"`
}

// FlinkSessionClusterSpec is the cluster-shaping part of a FlinkApplicationSpec, with the same names and
// meanings, so a FlinkApplication's cluster can be turned into a session cluster by copying fields.
type FlinkSessionClusterSpec struct {
	ClusterSpec `json:",inline"`
	// RestartNonce starts a new Flink cluster when changed, as any spec change does: it comes up
	// beside the running one, and every job moves to it per its own upgradeMode, with its state.
	RestartNonce Nonce `json:"restartNonce,omitempty"`

	TaskManagerConfig SessionTaskManagerConfig `json:"taskManagerConfig,omitempty"`
}

// SessionTaskManagerConfig is a TaskManagerConfig with an explicit TaskManager count. A session cluster
// has no single job whose parallelism could decide it, as a FlinkApplication's does. It is a type of
// its own so that FlinkApplication does not gain a replicas field it would ignore.
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas * (has(self.taskSlots) ? self.taskSlots : 16) <= 2147483647",message="replicas × taskSlots, the cluster's task slots, must be at most 2147483647",fieldPath=".replicas",reason=FieldValueInvalid
type SessionTaskManagerConfig struct {
	TaskManagerConfig `json:",inline"`
	// Replicas is how many TaskManagers run; the cluster offers replicas × taskSlots slots to its jobs.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +kubebuilder:default=1
	Replicas *int32 `json:"replicas,omitempty"`
}

// FlinkSessionClusterStatus is the operator's record of a session cluster and the jobs placed on it.
type FlinkSessionClusterStatus struct {
	Phase              FlinkSessionClusterPhase `json:"phase,omitempty"`
	MachineStatus      `json:",inline"`
	ClusterOwnerStatus `json:",inline"`
	// Jobs are the FlinkSessionJobs that name this cluster, with their jobs as Flink reports them.
	// +listType=map
	// +listMapKey=name
	Jobs []SessionJobReference `json:"jobs,omitempty"`

	// History holds the most recent phase transitions, newest last.
	// +kubebuilder:validation:MaxItems=20
	History []SessionClusterPhaseTransition `json:"history,omitempty"`

	// Clusters are the specs the Flink clusters the session cluster runs or keeps were rendered
	// from, by cluster hash: objects of a kept cluster that go missing (its JobManager, which Flink
	// HA needs to bring that cluster's jobs back) are created again as they were, whatever the
	// spec says now, and a session job tells from it whether its job's cluster runs with HA.
	// +listType=map
	// +listMapKey=hash
	// +kubebuilder:validation:MaxItems=8
	Clusters []SessionClusterSpecRecord `json:"clusters,omitempty"`

	// LeftJobs are jobs that run on with no FlinkSessionJob to own them (one deleted with
	// deleteMode None left its job running), with the state each started from: that state is kept
	// from disposal and retention until Flink says the job ended or completed a checkpoint of its
	// own, after which the job restarts from its own state.
	// +listType=map
	// +listMapKey=jobID
	// +kubebuilder:validation:MaxItems=100
	LeftJobs []LeftJob `json:"leftJobs,omitempty"`
}

// LeftJob is a job that runs on a session cluster with no FlinkSessionJob to own it.
type LeftJob struct {
	JobID string `json:"jobID"`
	// ClusterHash is the Flink cluster it runs on.
	ClusterHash string `json:"clusterHash,omitempty"`
	// SessionJob is the FlinkSessionJob that ran it, by name.
	SessionJob string `json:"sessionJob,omitempty"`
	// RestorePath is the state it started from.
	RestorePath string `json:"restorePath"`
	// Since is when the cluster found it left.
	Since metav1.Time `json:"since"`
}

// SessionClusterSpecRecord is the spec one Flink cluster of a session cluster was rendered from.
type SessionClusterSpecRecord struct {
	// Hash is the cluster's hash.
	Hash string `json:"hash"`
	// Spec is the FlinkSessionCluster's spec as JSON, as it was when the cluster was created.
	Spec string `json:"spec"`
}

// SessionJobReference is one FlinkSessionJob on a session cluster.
type SessionJobReference struct {
	// Name is the FlinkSessionJob's name, in the cluster's namespace.
	Name  string   `json:"name"`
	JobID string   `json:"jobID,omitempty"`
	State JobState `json:"state,omitempty"`
	// ClusterHash is the Flink cluster the job runs on.
	ClusterHash string `json:"clusterHash,omitempty"`
	// RestorePath is the state the job started from: a job its FlinkSessionJob's delete with
	// deleteMode None leaves running is listed in leftJobs with it.
	RestorePath string `json:"restorePath,omitempty"`
	// UID and DeleteMode are the FlinkSessionJob's: the job of one gone with deleteMode None runs
	// on, also under a namesake created since.
	UID        types.UID  `json:"uid,omitempty"`
	DeleteMode DeleteMode `json:"deleteMode,omitempty"`
}

// SessionClusterPhaseTransition is one entry of a session cluster's history. It has PhaseTransition's
// shape; its phases are the session cluster's own, so the CRD admits no phase the cluster never enters.
type SessionClusterPhaseTransition struct {
	From   FlinkSessionClusterPhase `json:"from,omitempty"`
	To     FlinkSessionClusterPhase `json:"to"`
	Time   metav1.Time              `json:"time"`
	Reason string                   `json:"reason,omitempty"`
}

// FlinkSessionClusterPhase is a state of a session cluster.
// +kubebuilder:validation:Enum="";New;ClusterStarting;Running;Updating;Deleting;DeployFailed
type FlinkSessionClusterPhase string

// The session cluster phases. An empty phase is read as New.
const (
	SessionClusterNew          FlinkSessionClusterPhase = "New"
	SessionClusterStarting     FlinkSessionClusterPhase = "ClusterStarting"
	SessionClusterRunning      FlinkSessionClusterPhase = "Running"
	SessionClusterUpdating     FlinkSessionClusterPhase = "Updating"
	SessionClusterDeleting     FlinkSessionClusterPhase = "Deleting"
	SessionClusterDeployFailed FlinkSessionClusterPhase = "DeployFailed"
)

// SessionClusterPhases lists every session cluster phase.
var SessionClusterPhases = []FlinkSessionClusterPhase{
	SessionClusterNew, SessionClusterStarting, SessionClusterRunning, SessionClusterUpdating,
	SessionClusterDeleting, SessionClusterDeployFailed,
}
