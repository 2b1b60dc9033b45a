package autoscaler

import "time"

// Vertex is one vertex of the job graph as it runs now.
type Vertex struct {
	// ID is Flink's job vertex id; it names the vertex in samples, limits and history.
	ID string
	// Name is the vertex's name, for reports and for limits given by name.
	Name string
	// Parallelism is the number of subtasks it runs with now.
	Parallelism int
	// MaxParallelism is its number of key groups, the most subtasks it can ever run with; 0 when
	// not known.
	MaxParallelism int
	// IsSource is set for a vertex that reads from outside the job: its demand is what arrives
	// there, not what an upstream vertex sends it.
	IsSource bool
	// Partitions is how many partitions (splits) a source reads; 0 when the connector does not
	// say. A subtask beyond this count would have nothing to read.
	Partitions int
	// Upstream are the ids of the vertices that send to this one.
	Upstream []string
}

// Sample is one observation of the job's metrics, each a rate Flink already averages over a
// short time. The collector takes one every few seconds to a minute.
type Sample struct {
	Time time.Time
	// Vertices holds the vertex's metrics by vertex id; a vertex missing from it was not observed.
	Vertices map[string]VertexSample
}

// VertexSample is one vertex's metrics in a sample, aggregated over its subtasks.
type VertexSample struct {
	// BusyTimeMsPerSecond is the average over subtasks; NaN, as Flink reports it for legacy
	// sources, when not known.
	BusyTimeMsPerSecond float64
	// BackPressuredTimeMsPerSecond is the average over subtasks.
	BackPressuredTimeMsPerSecond float64
	// NumRecordsInPerSecond is the sum over subtasks. For a source it is the records read from
	// outside, which Flink reports as the source operator's numRecordsOutPerSecond: the
	// collector fills it so, since a source task's own numRecordsIn is 0.
	NumRecordsInPerSecond float64
	// NumRecordsOutPerSecond is the sum over subtasks.
	NumRecordsOutPerSecond float64
	// PendingRecords is a source's backlog (its pendingRecords metric, or its lag), summed over
	// subtasks; it counts only when PendingKnown.
	PendingRecords float64
	// PendingKnown is set when the connector reports a backlog. A zero value means unknown, not
	// an empty backlog, so that a collector that fills nothing claims nothing.
	PendingKnown bool
}

// JobState is what the caller knows of the job now, besides its metrics.
type JobState struct {
	// Restarting is set while Flink restarts the job or not all its tasks run.
	Restarting bool
	// CheckpointsFailing is set when the job's recent checkpoints failed.
	CheckpointsFailing bool
	// FreshState is set when the ledger holds state young enough for the restore policy: what a
	// rescale that restarts the job starts from.
	FreshState bool
	// InPlaceRescale is set when Flink changes the parallelism itself (the adaptive scheduler's
	// resource requirements), without the operator restarting the job from the ledger's state.
	// The zero value is the safe one: a rescale restarts the job.
	InPlaceRescale bool
	// Failed is set when the job failed since its parallelism last changed.
	Failed bool
	// LastRescale is when the job's current parallelism was asked for: the last rescale, or the
	// job's start when it was never rescaled. Zero when never.
	LastRescale time.Time
	// Stable is the job's newest stable run: when the operator's readiness check last found it
	// running stable, and with which parallelism.
	Stable StableRun
}

// StableRun is a parallelism the job ran stable with, and when it was found to.
type StableRun struct {
	At          time.Time      `json:"at"`
	Parallelism map[string]int `json:"parallelism,omitempty"`
}
