package client

import (
	"context"
	"io"
)

// API is what the operator needs from a Flink JobManager.
//
// url is the JobManager's REST base URL, for example "http://app-abc123.ns:8081" or
// "http://127.0.0.1:9000/ns/app-abc123". Every error returned is an *Error.
type API interface {
	// GetClusterOverview calls GET /overview. The operator uses it as a readiness probe.
	GetClusterOverview(ctx context.Context, url string) (*ClusterOverview, error)
	// GetJobs calls GET /jobs, which also lists terminal jobs for about an hour.
	GetJobs(ctx context.Context, url string) ([]JobSummary, error)
	// GetJob calls GET /jobs/:jobid.
	GetJob(ctx context.Context, url, jobID string) (*JobDetails, error)
	// GetJobExceptions calls GET /jobs/:jobid/exceptions.
	GetJobExceptions(ctx context.Context, url, jobID string) (*JobExceptions, error)
	// GetCheckpoints calls GET /jobs/:jobid/checkpoints. A job without checkpointing
	// returns empty statistics, not an error.
	GetCheckpoints(ctx context.Context, url, jobID string) (*CheckpointStats, error)
	// GetTaskManagers calls GET /taskmanagers.
	GetTaskManagers(ctx context.Context, url string) ([]TaskManager, error)
	// TriggerSavepoint calls POST /jobs/:jobid/savepoints and returns the trigger id to poll.
	TriggerSavepoint(ctx context.Context, url, jobID string, req SavepointRequest) (string, error)
	// GetSavepointStatus calls GET /jobs/:jobid/savepoints/:triggerid.
	GetSavepointStatus(ctx context.Context, url, jobID, triggerID string) (*SavepointStatus, error)
	// TriggerCheckpoint calls POST /jobs/:jobid/checkpoints (Flink 1.17+) and returns the trigger
	// id to poll.
	TriggerCheckpoint(ctx context.Context, url, jobID string, req CheckpointRequest) (string, error)
	// GetCheckpointStatus calls GET /jobs/:jobid/checkpoints/:triggerid.
	GetCheckpointStatus(ctx context.Context, url, jobID, triggerID string) (*CheckpointStatus, error)
	// GetCheckpointDetails calls GET /jobs/:jobid/checkpoints/details/:checkpointid: one
	// checkpoint's statistics, its path among them.
	GetCheckpointDetails(ctx context.Context, url, jobID string, checkpointID int64) (*Checkpoint, error)
	// CancelJob calls PATCH /jobs/:jobid?mode=cancel. Flink answers before the job is
	// CANCELED; watch the job state to see it finish.
	CancelJob(ctx context.Context, url, jobID string) error
	// DisposeSavepoint calls POST /savepoint-disposal: Flink deletes the savepoint's files in the
	// background. It returns as soon as Flink accepted the request.
	DisposeSavepoint(ctx context.Context, url, path string) error
	// SubmitJob calls POST /jars/:jarid/run and returns the new job's id.
	SubmitJob(ctx context.Context, url, jarID string, req SubmitJobRequest) (string, error)
	// UploadJar calls POST /jars/upload with body as the jar file name (which must end in .jar)
	// and returns the id Flink gave it, "<uuid>_<name>", for SubmitJob and DeleteJar. Every upload
	// is a new file, so a retry after a lost answer leaves the first one behind; list /jars or
	// delete it by id. A retry needs a fresh body: this one has been read.
	UploadJar(ctx context.Context, url, name string, body io.Reader) (jarID string, err error)
	// DeleteJar calls DELETE /jars/:jarid. Flink answers 400 for a jar it does not have
	// (IsJarNotFound), which a retry of a delete that did happen meets.
	DeleteJar(ctx context.Context, url, jarID string) error
	// GetJobResourceRequirements calls GET /jobs/:jobid/resource-requirements (Flink 1.18+):
	// each vertex's parallelism bounds. Only the adaptive scheduler answers it; with any other
	// the error satisfies IsUnsupported. Flink answers an unknown or finished job with a 500
	// naming FlinkJobNotFoundException, not a 404.
	GetJobResourceRequirements(ctx context.Context, url, jobID string) (JobResourceRequirements, error)
	// UpdateJobResourceRequirements calls PUT /jobs/:jobid/resource-requirements (Flink 1.18+).
	// req must give every vertex of the job, and nothing else. The adaptive scheduler then
	// restarts the job in place, keeping its id, with each vertex at as many slots as it gets
	// up to the upper bound; it waits for jobmanager.adaptive-scheduler.scaling-interval.min
	// (30 s) after the job last started running, and keeps the job as it is while the lower
	// bounds cannot be met. Any other scheduler fails it with an error satisfying IsUnsupported.
	UpdateJobResourceRequirements(ctx context.Context, url, jobID string, req JobResourceRequirements) error
	// VertexMetricNames calls GET /jobs/:jobid/vertices/:vertexid/subtasks/metrics: the names of
	// the metrics the vertex's running subtasks report (MetricBusyTime and the others, operator
	// metrics such as a source's pendingRecords, and a Kafka source's partition offsets, which
	// SourcePartitions counts). Flink answers from the metric store it refreshes every 10 s: an
	// unknown job or vertex, or one whose tasks do not run, has none.
	VertexMetricNames(ctx context.Context, url, jobID, vertexID string) ([]string, error)
	// VertexMetrics calls GET /jobs/:jobid/vertices/:vertexid/subtasks/metrics?get=...&agg=...:
	// each named metric aggregated over the vertex's subtasks, by name. Up to 64 names, which
	// must fit Flink's request line (about 3 KiB). Flink answers nothing at all as soon as one
	// name is not among the vertex's metrics (a source's pendingRecords before its first record),
	// so ask for names VertexMetricNames listed, and expect an empty map.
	VertexMetrics(ctx context.Context, url, jobID, vertexID string, names []string) (map[string]AggregatedMetric, error)
	// GetApplications calls GET /applications/overview (Flink 2.3+): every application the
	// JobManager runs or still lists, without their jobs. A release before 2.3 answers 404
	// (IsRouteNotFound).
	GetApplications(ctx context.Context, url string) ([]ApplicationSummary, error)
	// GetApplication calls GET /applications/:applicationid (Flink 2.3+): the application and its
	// jobs. Flink answers an unknown application with a 500 naming it (IsApplicationNotFound).
	GetApplication(ctx context.Context, url, applicationID string) (*Application, error)
}

// Job states as Flink spells them (JobStatus, identical in 1.17 to 2.x). Note CANCELED has one
// L while CANCELLING has two.
const (
	JobInitializing = "INITIALIZING"
	JobCreated      = "CREATED"
	JobRunning      = "RUNNING"
	JobFailing      = "FAILING"
	JobFailed       = "FAILED"
	JobCancelling   = "CANCELLING"
	JobCanceled     = "CANCELED"
	JobFinished     = "FINISHED"
	JobRestarting   = "RESTARTING"
	JobSuspended    = "SUSPENDED"
	JobReconciling  = "RECONCILING"
)

// IsGloballyTerminal reports whether a job in this state can never change again.
// SUSPENDED is deliberately excluded: the job resumes when a JobManager regains leadership.
func IsGloballyTerminal(state string) bool {
	switch state {
	case JobFinished, JobCanceled, JobFailed:
		return true
	}
	return false
}

// SavepointRequest is the body of POST /jobs/:jobid/savepoints. Flink spells these keys in
// kebab case, unlike the stop endpoint.
type SavepointRequest struct {
	// TargetDirectory defaults to the cluster's state.savepoints.dir; Flink answers 400 when
	// neither is set.
	TargetDirectory string `json:"target-directory,omitempty"`
	// CancelJob cancels the job right after the savepoint completes.
	CancelJob bool `json:"cancel-job"`
	// TriggerID, if set (32 hex characters), makes a repeated trigger a no-op that returns the
	// same id, which is what makes retrying a lost trigger safe.
	TriggerID string `json:"triggerId,omitempty"`
	// FormatType is "CANONICAL" (Flink's default) or "NATIVE".
	FormatType string `json:"formatType,omitempty"`
	// FlinkVersion is the release the JobManager runs (version.go). Flink before 1.15 has no
	// TriggerID or FormatType and refuses a request that names them, so they are left out.
	FlinkVersion string `json:"-"`
}

// SubmitJobRequest is the body of POST /jars/:jarid/run. Every field is optional.
type SubmitJobRequest struct {
	EntryClass string `json:"entryClass,omitempty"`
	// ProgramArgs is a single string Flink 1.x tokenises. Flink 2.0 removed it and ignores it, so
	// that its job would run without arguments: SubmitJob refuses it for 2.x. The operator sends
	// ProgramArgsList only (split with flink.ProgramArguments as 1.x splits the string). Setting
	// both is a 400.
	ProgramArgs     string   `json:"programArgs,omitempty"`
	ProgramArgsList []string `json:"programArgsList,omitempty"`
	Parallelism     int32    `json:"parallelism,omitempty"`
	// JobID (32 hex characters) fixes the job's id, so an uncertain submit can be checked by
	// listing jobs, and a duplicate is rejected with 400.
	JobID                 string `json:"jobId,omitempty"`
	AllowNonRestoredState bool   `json:"allowNonRestoredState,omitempty"`
	// SavepointPath is not checked by the submit call: a missing savepoint shows up later as
	// the job going INITIALIZING -> FAILED.
	SavepointPath string `json:"savepointPath,omitempty"`
	// RestoreMode and ClaimMode are one setting, CLAIM, NO_CLAIM or LEGACY, under its 1.15 name and
	// its 1.20 name; 1.15 to 1.19 refuse claimMode as an unknown property. Either may be set:
	// SubmitJob sends it under the name the release knows. Unset, Flink 1.15 and later restore
	// NO_CLAIM.
	RestoreMode string `json:"restoreMode,omitempty"`
	ClaimMode   string `json:"claimMode,omitempty"`
	// FlinkConfiguration is merged into the job's configuration (1.17+).
	FlinkConfiguration map[string]string `json:"flinkConfiguration,omitempty"`
	// FlinkVersion is the release the JobManager runs (version.go): what SubmitJob sends is what
	// that release takes.
	FlinkVersion string `json:"-"`
}

// Savepoint operation states, as in the status.id of GET /jobs/:jobid/savepoints/:triggerid.
const (
	SavepointInProgress = "IN_PROGRESS"
	SavepointCompleted  = "COMPLETED"
)

// SavepointStatus is the outcome of a savepoint (or stop-with-savepoint) operation.
type SavepointStatus struct {
	// State is "IN_PROGRESS" or "COMPLETED". COMPLETED alone does not mean success.
	State string
	// Location is the savepoint path when the savepoint succeeded: always a plausible path
	// (state_paths.go).
	Location string
	// FailureCause is Flink's exception class and first stack-trace line (plus the root cause
	// when there is one), or "" when the operation did not fail. A location that is no plausible
	// path is refused here: the savepoint failed.
	FailureCause string
}

// InProgress reports whether Flink is still taking the savepoint.
func (s *SavepointStatus) InProgress() bool { return s.State == SavepointInProgress }

// Succeeded reports whether the savepoint completed and can be restored from.
func (s *SavepointStatus) Succeeded() bool {
	return s.State == SavepointCompleted && s.FailureCause == "" && s.Location != ""
}

// Failed reports whether the operation is over without a usable savepoint. A completed
// operation without a location counts as failed: there is nothing to restore from.
func (s *SavepointStatus) Failed() bool { return !s.InProgress() && !s.Succeeded() }
