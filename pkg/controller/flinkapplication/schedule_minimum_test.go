package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A schedule obeys the least interval of periodic snapshots (60 s) as intervalSeconds does: every
// form whose next two times can be closer is refused, whatever spells it.
func TestASchedulesTimesAreAtLeastTheLeastIntervalApart(t *testing.T) {
	for _, tc := range []struct {
		schedule v1beta1.PeriodicSchedule
		refused  bool
	}{
		{schedule: v1beta1.PeriodicSchedule{Schedule: "@every 1s"}, refused: true},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "@every 59s"}, refused: true},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "@every 59.999s"}, refused: true},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "@every 500ms"}, refused: true},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "@every 0s"}, refused: true},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "CRON_TZ=UTC @every 30s"}, refused: true},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "TZ=UTC   @every 1s"}, refused: true},
		{schedule: v1beta1.PeriodicSchedule{IntervalSeconds: 59}, refused: true},
		{schedule: v1beta1.PeriodicSchedule{IntervalSeconds: 1}, refused: true},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "@every 60s"}},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "@every 1m0.5s"}},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "@every 2h"}},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "* * * * *"}},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "CRON_TZ=Europe/Berlin * * * * *"}},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "@hourly"}},
		{schedule: v1beta1.PeriodicSchedule{IntervalSeconds: 60}},
	} {
		_, err := parseSchedule(&tc.schedule)
		if tc.refused {
			if assert.Error(t, err, "%+v", tc.schedule) {
				assert.Contains(t, err.Error(), "60s", "%+v", tc.schedule)
			}
		} else {
			assert.NoError(t, err, "%+v", tc.schedule)
		}
	}
}

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
