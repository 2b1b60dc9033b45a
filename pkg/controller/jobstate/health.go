package jobstate

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// JobHealth is Red for a failed or failing job (and for a minute after it failed over), Yellow while
// some tasks are not running or its checkpoints stopped completing, Green otherwise.
func JobHealth(js *v1beta1.FlinkJobStatus, now time.Time) v1beta1.HealthStatus {
	h, _ := JudgeHealth(js, now, 0)
	return h
}

// JudgeHealth is the job's health and, when it is not Green, why. checkpointsDue is how long after
// the recorded checkpoint a newer one must have been recorded; zero when checkpoints are not judged.
func JudgeHealth(js *v1beta1.FlinkJobStatus, now time.Time, checkpointsDue time.Duration) (v1beta1.HealthStatus, string) {
	switch js.State {
	case v1beta1.JobFailed, v1beta1.JobFailing, v1beta1.JobCanceled, v1beta1.JobFinished:
		return v1beta1.Red, "JobNotRunning"
	}
	if js.LastFailingTime != nil && now.Sub(js.LastFailingTime.Time) < time.Minute {
		return v1beta1.Red, "JobRestarting"
	}
	if js.State != v1beta1.JobRunning || js.RunningTasks < js.TotalTasks {
		return v1beta1.Yellow, "TasksNotRunning"
	}
	if checkpointsDue > 0 && js.LastCheckpointTime != nil && now.Sub(js.LastCheckpointTime.Time) > checkpointsDue {
		return v1beta1.Yellow, "CheckpointsNotCompleting"
	}
	return v1beta1.Green, "JobHealthy"
}

// MsTime is a time Flink gives in milliseconds since the epoch, as status keeps it; nil for none.
func MsTime(ms int64) *metav1.Time {
	if ms <= 0 {
		return nil
	}
	t := metav1.NewTime(time.UnixMilli(ms).UTC())
	return &t
}

// CheckpointRecordDue tells whether a completed checkpoint (its path, and its trigger time in ms)
// is to be recorded: one newer than the recorded one, when the job's checkpoints are looked at,
// which is every checkpoint record window. Writing every checkpoint would write at every poll of
// every checkpointing job.
func CheckpointRecordDue(recordedPath string, recordedAt time.Time, path string, triggered int64) bool {
	if recordedPath == "" || recordedAt.IsZero() {
		return true
	}
	// Status keeps whole seconds: a checkpoint of the recorded second is newer only by its path.
	return path != recordedPath && !time.UnixMilli(triggered).Before(recordedAt)
}

// CheckpointInterval is the job's checkpoint interval from its configuration; 0 when unset.
func (s *Settings) CheckpointInterval() time.Duration {
	text, _, err := s.FlinkConfig.Lookup(flink.CheckpointIntervalKey)
	if err != nil {
		return 0
	}
	interval, err := flink.ParseDuration(text)
	if err != nil {
		return 0
	}
	return interval
}
