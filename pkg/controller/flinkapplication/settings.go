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

// sessionJobSettings are a FlinkSessionJob's job settings; cluster is the FlinkSessionCluster it
// names, nil when that does not exist.
func sessionJobSettings(job *v1beta1.FlinkSessionJob, cluster *v1beta1.FlinkSessionCluster) *jobSettings {
	j := &job.Spec.Job
	mode := j.UpgradeMode
	if mode == "" {
		mode = v1beta1.UpgradeModeSavepoint
	}
	conf := v1beta1.FlinkConfig{}
	if cluster != nil {
		for k, v := range *cluster.Spec.FlinkConfig.DeepCopy() {
			conf[k] = v
		}
	}
	for k, v := range *job.Spec.FlinkConfig.DeepCopy() {
		conf[k] = v
	}
	return &jobSettings{
		UpgradeMode: mode, Suspend: j.State == v1beta1.JobStateSuspended, DeleteMode: deleteModeOr(job.Spec.DeleteMode),
		InitialSavepoint: j.InitialSavepointPath, RestoreSnapshot: j.RestoreSnapshot, RestartFailedJob: j.RestartFailedJob, FallbackWithoutState: j.FallbackWithoutState,
		SavepointTriggerNonce: j.SavepointTriggerNonce, CheckpointTriggerNonce: j.CheckpointTriggerNonce, RedeployNonce: j.SavepointRedeployNonce, RedeployFrom: j.InitialSavepointPath,
		PeriodicSavepoint: j.PeriodicSavepoint, PeriodicCheckpoint: j.PeriodicCheckpoint, SavepointFormatType: j.SavepointFormatType,
		SavepointRetention: j.SavepointRetention,
		FlinkConfig:        conf,
		Field: func(name string) string {
			if name == "savepointPath" {
				return "spec.job.initialSavepointPath of a new FlinkSessionJob"
			}
			return "spec.job." + name
		},
	}
}

func deleteModeOr(m v1beta1.DeleteMode) v1beta1.DeleteMode {
	if m == "" {
		return v1beta1.DeleteModeSavepoint
	}
	return m
}
