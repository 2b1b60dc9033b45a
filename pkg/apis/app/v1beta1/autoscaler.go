package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AutoscalerSpec asks the operator to size each job vertex from Flink's own metrics
// (docs/autoscaler.md). Unset fields take the operator's defaults.
type AutoscalerSpec struct {
	// Mode is Off, Recommend (evaluate and report in status and Events, change nothing) or Apply.
	// +kubebuilder:validation:Enum=Off;Recommend;Apply
	// +kubebuilder:default=Off
	Mode AutoscalerMode `json:"mode,omitempty"`
	// TargetUtilizationPercent is the share of each subtask's processing capacity the autoscaler
	// sizes a vertex to use at its target rate.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=100
	// +optional
	TargetUtilizationPercent int32 `json:"targetUtilizationPercent,omitempty"`
	// UtilizationTolerancePercent is how far a vertex's utilisation may stray from the target before
	// it is rescaled, in percentage points.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=50
	// +optional
	UtilizationTolerancePercent *int32 `json:"utilizationTolerancePercent,omitempty"`
	// CatchUpDuration is how soon a source's backlog should be worked off.
	// +optional
	CatchUpDuration *metav1.Duration `json:"catchUpDuration,omitempty"`
	// MetricsWindow is how long metrics are collected before a decision.
	// +optional
	MetricsWindow *metav1.Duration `json:"metricsWindow,omitempty"`
	// StabilizationInterval is how long after a change, or a start, metrics are not collected.
	// +optional
	StabilizationInterval *metav1.Duration `json:"stabilizationInterval,omitempty"`
	// ScaleDownDelay is how long every evaluation must have recommended a lower parallelism before
	// a vertex is scaled down.
	// +optional
	ScaleDownDelay *metav1.Duration `json:"scaleDownDelay,omitempty"`
	// CoolDown is how long the autoscaler decides nothing after it took a job back to the last
	// parallelism that ran stable.
	// +optional
	CoolDown *metav1.Duration `json:"coolDown,omitempty"`
	// MinParallelism and MaxParallelism bound every vertex.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinParallelism int32 `json:"minParallelism,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxParallelism int32 `json:"maxParallelism,omitempty"`
	// Vertices bound single vertices, named by their id or their name as Flink reports them.
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=vertex
	// +optional
	Vertices []VertexLimits `json:"vertices,omitempty"`
}

// VertexLimits bounds the parallelism of one vertex.
// +kubebuilder:validation:XValidation:rule="!has(self.min) || !has(self.max) || self.min <= self.max",message="min must not exceed max"
type VertexLimits struct {
	// Vertex is the vertex's id or name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Vertex string `json:"vertex"`
	// +kubebuilder:validation:Minimum=1
	// +optional
	Min int32 `json:"min,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +optional
	Max int32 `json:"max,omitempty"`
}

// AutoscalerMode is whether the autoscaler runs, and whether it acts.
type AutoscalerMode string

// The autoscaler modes.
const (
	AutoscalerOff       AutoscalerMode = "Off"
	AutoscalerRecommend AutoscalerMode = "Recommend"
	AutoscalerApply     AutoscalerMode = "Apply"
)

// AutoscalerStatus is what the autoscaler last decided for the job. It changes when a decision or a
// recommendation does, not with every metric: the rates behind a decision are in its
// ScalingReport Event and in the operator's metrics.
type AutoscalerStatus struct {
	// Vertices are each vertex's current and recommended parallelism, and why.
	// +kubebuilder:validation:MaxItems=200
	Vertices []VertexScaling `json:"vertices,omitempty"`
	// Reason says why the last evaluation decided what it did, or decided nothing.
	Reason string `json:"reason,omitempty"`
	// Changes are the last scaling changes, newest last (at most 10).
	// +kubebuilder:validation:MaxItems=10
	Changes []ScalingChange `json:"changes,omitempty"`
	// Stable is the parallelism per vertex that last ran stable, and when: where a scaled job that
	// fails goes back to.
	Stable *StableParallelism `json:"stable,omitempty"`
	// HoldUntil is the end of a cool-down after a way back: no decision before it.
	HoldUntil *metav1.Time `json:"holdUntil,omitempty"`
	// Target is the parallelism per vertex being applied, written before the first request for it
	// is sent, so that an operator restarted meanwhile carries on with it; empty once it runs.
	Target *ScalingTarget `json:"target,omitempty"`
	// Applied is the parallelism per vertex the autoscaler last put in force. Every job the
	// application submits again (after a restart, a recovery or an update) runs at it, through
	// Flink's pipeline.jobvertex-parallelism-overrides, while spec.parallelism is what it was when
	// it was applied. Turning the autoscaler off forgets it.
	Applied *AppliedParallelism `json:"applied,omitempty"`
}

// AppliedParallelism is the parallelism per vertex the autoscaler put in force.
type AppliedParallelism struct {
	Parallelism map[string]int32 `json:"parallelism"`
	// SpecParallelism is spec.parallelism when it was applied: a new spec.parallelism is the
	// user's, and replaces it.
	SpecParallelism int32 `json:"specParallelism"`
}

// ScalingTarget is a change of parallelism under way.
type ScalingTarget struct {
	Time        metav1.Time      `json:"time"`
	Parallelism map[string]int32 `json:"parallelism"`
	// WayBack is set when the target is the last parallelism that ran stable, after a scaled job
	// failed or did not run stable.
	WayBack bool `json:"wayBack,omitempty"`
	// Restart is set when the target is applied by stopping the job per upgradeMode and submitting
	// it again at the target (the cluster does not rescale a running job in place).
	Restart bool `json:"restart,omitempty"`
	// From is the job the target was decided for: a restart target is done once another job runs.
	From string `json:"from,omitempty"`
	// SpecParallelism is the spec.parallelism the target was decided under: once the user changes
	// it, the target is given up, and the user's parallelism wins. 0 for a target recorded before
	// it was kept.
	SpecParallelism int32 `json:"specParallelism,omitempty"`
}

// VertexScaling is one vertex's parallelism as the autoscaler sees it.
type VertexScaling struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Current     int32  `json:"current"`
	Recommended int32  `json:"recommended"`
	Reason      string `json:"reason,omitempty"`
}

// ScalingChange is one change of the job's parallelism the autoscaler made or recommended.
type ScalingChange struct {
	Time metav1.Time `json:"time"`
	// Kind is Scaled, Recommended or WentBack.
	Kind     string         `json:"kind"`
	Vertices []VertexChange `json:"vertices,omitempty"`
	Reason   string         `json:"reason,omitempty"`
}

// VertexChange is one vertex's part of a ScalingChange.
type VertexChange struct {
	ID   string `json:"id"`
	From int32  `json:"from"`
	To   int32  `json:"to"`
}

// StableParallelism is a parallelism per vertex that ran stable.
type StableParallelism struct {
	Time        metav1.Time      `json:"time"`
	Parallelism map[string]int32 `json:"parallelism,omitempty"`
}
