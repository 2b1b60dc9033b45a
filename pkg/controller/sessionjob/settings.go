package sessionjob

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// settings are a FlinkSessionJob's job settings (jobstate.Settings); cluster is the
// FlinkSessionCluster it names, nil when that does not exist.
func settings(job *v1beta1.FlinkSessionJob, cluster *v1beta1.FlinkSessionCluster) *jobstate.Settings {
	j := &job.Spec.Job
	mode := j.UpgradeMode
	if mode == "" {
		mode = v1beta1.UpgradeModeSavepoint
	}
	deleteMode := job.Spec.DeleteMode
	if deleteMode == "" {
		deleteMode = v1beta1.DeleteModeSavepoint
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
	return &jobstate.Settings{
		UpgradeMode: mode, Suspend: j.State == v1beta1.JobStateSuspended, DeleteMode: deleteMode,
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

// Hash identifies what a session job runs: its jar, entry class, arguments, parallelism, its own
// Flink configuration, the restart nonce and the redeploy nonce. The upgrade mode, the desired
// state, the initial savepoint and the delete mode only say how to get there, and changing them
// restarts nothing. A field added here is omitted while empty, so that the hashes of jobs running
// before it existed stay the same.
func Hash(job *v1beta1.FlinkSessionJob) string {
	j := job.Spec.Job
	b, _ := json.Marshal(struct {
		JarURI, JarSHA256, EntryClass, RestartNonce string
		Args                                        []string
		Parallelism                                 *int32
		AllowNonRestoredState                       bool
		FlinkConfig                                 v1beta1.FlinkConfig
		SavepointRedeployNonce                      string `json:",omitempty"`
	}{j.JarURI, j.JarSHA256, j.EntryClass, string(j.RestartNonce), j.Args, j.Parallelism, j.AllowNonRestoredState, job.Spec.FlinkConfig,
		string(j.SavepointRedeployNonce)})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:8]
}
