package lifecycle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A schedule is an interval or a cron expression; what cannot be read is an error, never a panic.
func TestParseSchedule(t *testing.T) {
	from := time.Date(2026, 11, 1, 12, 0, 30, 0, time.UTC)
	for _, tc := range []struct {
		schedule v1beta1.PeriodicSchedule
		next     time.Time // zero: no schedule
		bad      bool
	}{
		{schedule: v1beta1.PeriodicSchedule{IntervalSeconds: 90}, next: from.Add(90 * time.Second)},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "CRON_TZ=UTC 15 * * * *"}, next: time.Date(2026, 11, 1, 12, 15, 0, 0, time.UTC)},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "CRON_TZ=UTC @daily"}, next: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "@every 2h"}, next: from.Add(2 * time.Hour)},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "@every 2h", IntervalSeconds: 60}, next: from.Add(2 * time.Hour)},
		{schedule: v1beta1.PeriodicSchedule{}},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "* * * *"}, bad: true},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "0 0 * * * *"}, bad: true},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "TZ=0"}, bad: true},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "TZ=TZ=TZ="}, bad: true},
		{schedule: v1beta1.PeriodicSchedule{Schedule: "CRON_TZ=Nowhere/Atlantis * * * * *"}, bad: true},
	} {
		sched, err := parseSchedule(&tc.schedule)
		switch {
		case tc.bad:
			assert.Error(t, err, "%+v", tc.schedule)
		case tc.next.IsZero():
			assert.NoError(t, err)
			assert.Nil(t, sched, "%+v", tc.schedule)
		default:
			require.NoError(t, err, "%+v", tc.schedule)
			assert.Equal(t, tc.next, sched.Next(from).UTC(), "%+v", tc.schedule)
		}
	}
}

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
