package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// jobSettings are what the job handlers read of an object's spec (jobstate.Settings).
type jobSettings = jobstate.Settings

// applicationSettings are a FlinkApplication's job settings.
func applicationSettings(app *v1beta1.FlinkApplication) *jobSettings {
	s := &app.Spec
	return &jobSettings{
		UpgradeMode: upgradeMode(app), Suspend: s.State == v1beta1.JobStateSuspended, DeleteMode: deleteModeOr(s.DeleteMode),
		InitialSavepoint: jobstate.InitialSavepoint(app), RestoreSnapshot: s.RestoreSnapshot, RestartFailedJob: s.RestartFailedJob, FallbackWithoutState: s.FallbackWithoutState,
		MaxCheckpointRestoreAgeSeconds: s.MaxCheckpointRestoreAgeSeconds, ReadinessTimeoutSeconds: s.ReadinessTimeoutSeconds,
		SavepointTriggerNonce: s.SavepointTriggerNonce, CheckpointTriggerNonce: s.CheckpointTriggerNonce, RedeployNonce: s.SavepointRedeployNonce, RedeployFrom: s.SavepointPath,
		PeriodicSavepoint: s.PeriodicSavepoint, PeriodicCheckpoint: s.PeriodicCheckpoint, SavepointFormatType: s.SavepointFormatType,
		SavepointRetention: s.SavepointRetention, FlinkConfig: s.FlinkConfig,
		Field: func(name string) string { return "spec." + name },
	}
}

func deleteModeOr(m v1beta1.DeleteMode) v1beta1.DeleteMode {
	if m == "" {
		return v1beta1.DeleteModeSavepoint
	}
	return m
}
