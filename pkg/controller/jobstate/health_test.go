package jobstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func TestJobHealthSaysWhy(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-d)); return &t }
	running := v1beta1.FlinkJobStatus{State: v1beta1.JobRunning, RunningTasks: 3, TotalTasks: 3, LastCheckpointTime: ago(30 * time.Second)}
	for _, c := range []struct {
		name   string
		edit   func(js *v1beta1.FlinkJobStatus)
		health v1beta1.HealthStatus
		why    string
	}{
		{"running", func(*v1beta1.FlinkJobStatus) {}, v1beta1.Green, "JobHealthy"},
		{"failed", func(js *v1beta1.FlinkJobStatus) { js.State = v1beta1.JobFailed }, v1beta1.Red, "JobNotRunning"},
		{"failed over a minute ago", func(js *v1beta1.FlinkJobStatus) { js.LastFailingTime = ago(30 * time.Second) }, v1beta1.Red, "JobRestarting"},
		{"tasks waiting", func(js *v1beta1.FlinkJobStatus) { js.RunningTasks = 1 }, v1beta1.Yellow, "TasksNotRunning"},
		{"checkpoints stopped", func(js *v1beta1.FlinkJobStatus) { js.LastCheckpointTime = ago(5 * time.Minute) }, v1beta1.Yellow, "CheckpointsNotCompleting"},
	} {
		js := running
		c.edit(&js)
		health, why := JudgeHealth(&js, now, 2*time.Minute)
		assert.Equal(t, c.health, health, c.name)
		assert.Equal(t, c.why, why, c.name)
	}
}
