package jobstate

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Settings are what the job handlers (starting, stopping, restoring, deleting and savepointing a
// job) read of an object's spec, whatever its kind. Each kind that owns a job says once, in its own
// terms, how its job is to be run; the handlers never read a kind's spec themselves.
type Settings struct {
	UpgradeMode v1beta1.UpgradeMode
	// Suspend is set when the spec asks for the job to be suspended.
	Suspend    bool
	DeleteMode v1beta1.DeleteMode
	// InitialSavepoint is what the first job starts from.
	InitialSavepoint                       string
	RestartFailedJob, FallbackWithoutState bool
	MaxCheckpointRestoreAgeSeconds         *int32
	// ReadinessTimeoutSeconds bounds how long a new job may take to run stable; nil for the
	// operator's readinessTimeout.
	ReadinessTimeoutSeconds *int32
	SavepointTriggerNonce   v1beta1.Nonce
	// CheckpointTriggerNonce asks, each time it changes, for a checkpoint of the running job.
	CheckpointTriggerNonce v1beta1.Nonce
	// RedeployNonce asks, each time it changes, for the next job to start from RedeployFrom, the
	// savepoint the user named.
	RedeployNonce v1beta1.Nonce
	RedeployFrom  string
	// RestoreSnapshot is the FlinkSnapshot the spec names instead of a path; while it has none to
	// give, InitialSavepoint and RedeployFrom are empty and RestoreWaiting says why
	// (snapshots.ResolveRestore), and nothing is started from them.
	RestoreSnapshot, RestoreWaiting string
	// PeriodicSavepoint and PeriodicCheckpoint are the schedules of the snapshots the operator takes
	// of the running job by itself.
	PeriodicSavepoint, PeriodicCheckpoint *v1beta1.PeriodicSchedule
	// SavepointFormatType is the format of the savepoints the operator takes; empty is Flink's default.
	SavepointFormatType v1beta1.SavepointFormatType
	SavepointRetention  *v1beta1.SavepointRetention
	// FlinkConfig is the Flink configuration the job runs with (a session job's is its cluster's
	// with its own over it): it says, for example, whether a cancel keeps the job's checkpoints.
	FlinkConfig v1beta1.FlinkConfig
	// Field is where a setting lives in the kind's spec, for messages that tell users what to change.
	Field func(name string) string
}

// InitialSavepoint is the state a first deploy restores: savepointPath, or its deprecated form.
func InitialSavepoint(app *v1beta1.FlinkApplication) string {
	if app.Spec.SavepointPath != "" {
		return app.Spec.SavepointPath
	}
	return app.Spec.SavepointInfo.SavepointLocation
}
