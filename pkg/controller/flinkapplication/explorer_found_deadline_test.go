package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// sessionJobThatNeverRunsStable starts a session job whose tasks fail every few seconds, so that it
// never runs for the stabilization period, and returns when its job was first submitted.
func sessionJobThatNeverRunsStable(t *testing.T) (*world, time.Time) {
	w := newWorld(t)
	jar := w.withSessions()
	w.faults = flinksim.Faults{RestartJobsEvery: 5 * time.Second} // never stable for 10 s
	w.createSessionCluster(sessionCluster("session"))
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeLastState))
	w.runSessionsUntil("the job submitted", func() bool { return len(w.jobsOf("session", "a")) > 0 })
	return w, w.clock.Now()
}

// A session job whose job keeps restarting gives up its Submitting readinessTimeout after the job's
// tasks first ran, with a Warning: every restart deploys the tasks again, and counting the deadline
// from the newest deployment moved it on with each restart, for good (found by explorer seeds 1049,
// 1052, 1060, 1067 and 1072: a FlinkSessionJob in Submitting long past its deadline, without a
// Warning).
func TestASessionJobWhoseJobKeepsRestartingGivesUpInTime(t *testing.T) {
	w, submitted := sessionJobThatNeverRunsStable(t)
	timeout := w.env.Config.ReadinessTimeout.Duration
	end := submitted.Add(timeout + 2*time.Minute)
	for w.clock.Now().Before(end) && !w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) {
		w.reconcileSessions()
	}
	j := w.sessionJob("a")
	require.Equal(t, v1beta1.SessionJobDeployFailed, j.Status.Phase, "gave up within %s of the submission: %s", timeout+2*time.Minute, j.Status.Reason)
	assert.Contains(t, j.Status.Reason, "Submitting did not complete within")
	warned := false
	for _, e := range w.events() {
		warned = warned || strings.HasPrefix(e, "Warning DeployFailed ")
	}
	assert.True(t, warned, "a Warning names the reason")
}
