package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// An object stored before the CRD refused such schedules (or one written past it) takes no periodic
// snapshot on them: each field is said once per spec generation, named, and the job runs on.
func TestAScheduleMoreFrequentThanTheLeastIntervalTakesNothing(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.PeriodicSavepoint = &v1beta1.PeriodicSchedule{Schedule: "@every 1s"}
		s.PeriodicCheckpoint = &v1beta1.PeriodicSchedule{IntervalSeconds: 5}
	})
	w.runFor("wc", 3*time.Minute)
	n, messages := countReason(w.events(), "InvalidSchedule")
	assert.Equal(t, 2, n, "once for each field: %v", messages)
	said := strings.Join(messages, "\n")
	assert.Contains(t, said, `spec.periodicSavepoint.schedule "@every 1s"`)
	assert.Contains(t, said, `spec.periodicCheckpoint.intervalSeconds 5`)
	app := w.get("wc")
	assert.Empty(t, triggerTimes(app, v1beta1.SavepointPeriodic))
	assert.Empty(t, triggerTimes(app, v1beta1.PeriodicCheckpoint))
	assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)
	assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID, "the job keeps running")
}
