package client

// ClusterOverview is the body of GET /overview.
type ClusterOverview struct {
	TaskManagers        int    `json:"taskmanagers"`
	TaskManagersBlocked int    `json:"taskmanagers-blocked,omitempty"`
	SlotsTotal          int    `json:"slots-total"`
	SlotsAvailable      int    `json:"slots-available"`
	SlotsFreeAndBlocked int    `json:"slots-free-and-blocked,omitempty"`
	JobsRunning         int    `json:"jobs-running"`
	JobsFinished        int    `json:"jobs-finished"`
	JobsCancelled       int    `json:"jobs-cancelled"` // two Ls, as Flink spells it
	JobsFailed          int    `json:"jobs-failed"`
	FlinkVersion        string `json:"flink-version"`
	FlinkCommit         string `json:"flink-commit"`
}

// JobSummary is one entry of GET /jobs.
type JobSummary struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// JobDetails is the body of GET /jobs/:jobid. Flink's plan and per-vertex metrics are left out.
type JobDetails struct {
	JID            string `json:"jid"`
	Name           string `json:"name"`
	IsStoppable    bool   `json:"isStoppable"`
	State          string `json:"state"`
	JobType        string `json:"job-type,omitempty"` // BATCH or STREAMING, 1.20+
	StartTime      int64  `json:"start-time"`
	EndTime        int64  `json:"end-time"` // -1 until the job is globally terminal
	Duration       int64  `json:"duration"`
	MaxParallelism int64  `json:"maxParallelism"`
	Now            int64  `json:"now"`
	// Timestamps says when the job entered a JobStatus (0 if never).
	Timestamps JobTimestamps `json:"timestamps"`
	// Vertices is empty while the job is INITIALIZING and when it failed during initialisation.
	Vertices []JobVertex `json:"vertices"`
	// Plan is the job's dataflow, of which only which vertex feeds which is read.
	Plan *JobPlan `json:"plan,omitempty"`
}

// JobPlan is the dataflow of a job: its vertices and their inputs.
type JobPlan struct {
	Nodes []PlanNode `json:"nodes"`
}

// PlanNode is one vertex of a job's plan and the vertices it reads from.
type PlanNode struct {
	ID     string      `json:"id"`
	Inputs []PlanInput `json:"inputs,omitempty"`
}

// PlanInput names a vertex a plan node reads from.
type PlanInput struct {
	ID string `json:"id"`
}

// Upstream is, per vertex id, the vertices it reads from, as the plan says; nil without a plan.
func (j *JobDetails) Upstream() map[string][]string {
	if j.Plan == nil {
		return nil
	}
	out := map[string][]string{}
	for _, n := range j.Plan.Nodes {
		for _, in := range n.Inputs {
			out[n.ID] = append(out[n.ID], in.ID)
		}
	}
	return out
}

// Parallelism is the highest vertex parallelism, the number a user means by "the job's
// parallelism". It is 0 while the job has no vertices.
func (j *JobDetails) Parallelism() int32 {
	var max int32
	for _, v := range j.Vertices {
		if v.Parallelism > max {
			max = v.Parallelism
		}
	}
	return max
}

// JobVertex is one entry of JobDetails.Vertices.
type JobVertex struct {
	ID                 string `json:"id"`
	SlotSharingGroupID string `json:"slotSharingGroupId,omitempty"` // 1.20+
	Name               string `json:"name"`
	MaxParallelism     int32  `json:"maxParallelism"`
	Parallelism        int32  `json:"parallelism"`
	// Status is an ExecutionState name (note CANCELING with one L at this level).
	Status    string `json:"status"`
	StartTime int64  `json:"start-time"`
	EndTime   int64  `json:"end-time"`
	Duration  int64  `json:"duration"`
	// Tasks counts subtasks per ExecutionState. A job is RUNNING before its tasks are, so readiness
	// checks should look here.
	Tasks TaskCounts `json:"tasks"`
}

// JobTimestamps is when a job entered the JobStatus it reads, in epoch ms, of Flink's timestamps
// map. These answers are decoded every poll of every job: fields, unlike a map, cost no allocation
// per entry, and the operator reads only these.
type JobTimestamps struct {
	Running int64 `json:"RUNNING"`
}

// TaskCounts counts a vertex's subtasks in the ExecutionStates the operator reads, of Flink's
// per-state map (see JobTimestamps for why not a map).
type TaskCounts struct {
	Deploying int `json:"DEPLOYING"`
	Running   int `json:"RUNNING"`
	Finished  int `json:"FINISHED"`
}

// JobExceptions is the body of GET /jobs/:jobid/exceptions.
type JobExceptions struct {
	// RootException is the stringified root failure of a failed job. Deprecated by Flink and
	// removed in 2.0; prefer ExceptionHistory.
	RootException string `json:"root-exception,omitempty"`
	// Timestamp of RootException in epoch ms. Removed in 2.0.
	Timestamp        int64            `json:"timestamp,omitempty"`
	Truncated        bool             `json:"truncated,omitempty"`
	ExceptionHistory ExceptionHistory `json:"exceptionHistory"`
}

// ExceptionHistory holds the job's recent failures (web.exception-history-size, default 16).
type ExceptionHistory struct {
	Entries   []ExceptionHistoryEntry `json:"entries"`
	Truncated bool                    `json:"truncated"`
}

// ExceptionInfo is one failure. TaskName, Location, Endpoint and TaskManagerID are empty for
// global (not task-level) failures.
type ExceptionInfo struct {
	ExceptionName string            `json:"exceptionName"`
	Stacktrace    string            `json:"stacktrace"`
	Timestamp     int64             `json:"timestamp"`
	TaskName      string            `json:"taskName,omitempty"`
	Location      string            `json:"location,omitempty"`
	Endpoint      string            `json:"endpoint,omitempty"`      // 1.19+
	TaskManagerID string            `json:"taskManagerId,omitempty"` // 1.18+
	FailureLabels map[string]string `json:"failureLabels,omitempty"` // 1.18+
}

// ExceptionHistoryEntry is a root failure with the failures that happened alongside it.
type ExceptionHistoryEntry struct {
	ExceptionInfo
	ConcurrentExceptions []ExceptionInfo `json:"concurrentExceptions,omitempty"`
}

// TaskManager is one entry of GET /taskmanagers.
type TaskManager struct {
	// ID is a pod name on native Kubernetes or "ip:port-xxxxxx" in standalone mode.
	ID       string `json:"id"`
	Path     string `json:"path"`
	DataPort int    `json:"dataPort"`
	JMXPort  int    `json:"jmxPort"`
	// TimeSinceLastHeartbeat is, despite its name, the epoch-ms time of the last heartbeat.
	TimeSinceLastHeartbeat int64               `json:"timeSinceLastHeartbeat"`
	SlotsNumber            int                 `json:"slotsNumber"`
	FreeSlots              int                 `json:"freeSlots"`
	Blocked                bool                `json:"blocked,omitempty"`
	Hardware               TaskManagerHardware `json:"hardware"`
}

// TaskManagerHardware describes the machine a TaskManager runs on; memory is in bytes.
type TaskManagerHardware struct {
	CPUCores       int   `json:"cpuCores"`
	PhysicalMemory int64 `json:"physicalMemory"`
	FreeMemory     int64 `json:"freeMemory"`
	ManagedMemory  int64 `json:"managedMemory"`
}

// CheckpointStats is the body of GET /jobs/:jobid/checkpoints. A job without checkpointing
// gets the zero value.
type CheckpointStats struct {
	Counts CheckpointCounts  `json:"counts"`
	Latest LatestCheckpoints `json:"latest"`
	// History is newest first, limited to web.checkpoints.history (default 10).
	History []Checkpoint `json:"history"`
}

// CheckpointCounts counts checkpoints and savepoints since the job started.
type CheckpointCounts struct {
	// Restored increments on every restore (from the initial savepoint and on each failover
	// that restores a checkpoint), so it doubles as a restart count.
	Restored   int64 `json:"restored"`
	Total      int64 `json:"total"`
	InProgress int64 `json:"in_progress"`
	Completed  int64 `json:"completed"`
	Failed     int64 `json:"failed"`
}

// LatestCheckpoints holds the newest checkpoint of each kind; nil when there is none.
type LatestCheckpoints struct {
	// Completed is the newest completed checkpoint that is not a savepoint.
	Completed *Checkpoint `json:"completed"`
	// Savepoint is the newest completed savepoint.
	Savepoint *Checkpoint         `json:"savepoint"`
	Failed    *Checkpoint         `json:"failed"`
	Restored  *RestoredCheckpoint `json:"restored"`
}

// Checkpoint is the statistics of one checkpoint or savepoint. Timestamps are epoch ms.
type Checkpoint struct {
	ID                 int64  `json:"id"`
	Status             string `json:"status"` // IN_PROGRESS, COMPLETED or FAILED
	IsSavepoint        bool   `json:"is_savepoint"`
	TriggerTimestamp   int64  `json:"trigger_timestamp"`
	LatestAckTimestamp int64  `json:"latest_ack_timestamp"`
	StateSize          int64  `json:"state_size"`
	EndToEndDuration   int64  `json:"end_to_end_duration"`
	// ExternalPath is where a completed checkpoint lives; "<checkpoint-not-externally-addressable>"
	// means it cannot be restored from, and so does "<refused: ...>", which the client puts in the
	// place of a path that is no plausible one (state_paths.go).
	ExternalPath string `json:"external_path,omitempty"`
	// CheckpointType is CHECKPOINT, UNALIGNED_CHECKPOINT, SAVEPOINT or SYNC_SAVEPOINT.
	CheckpointType   string `json:"checkpoint_type"`
	Discarded        bool   `json:"discarded,omitempty"`
	FailureTimestamp int64  `json:"failure_timestamp,omitempty"`
	FailureMessage   string `json:"failure_message,omitempty"`
}

// RestoredCheckpoint is the checkpoint or savepoint the job last restored from.
type RestoredCheckpoint struct {
	ID               int64  `json:"id"`
	RestoreTimestamp int64  `json:"restore_timestamp"`
	IsSavepoint      bool   `json:"is_savepoint"`
	ExternalPath     string `json:"external_path"`
}
