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

// Flink 2.3 puts every job in an application (the simulator follows its document and Dispatcher:
// integ/flinksim/applications.go). What that changes for the operator, on the simulator as 2.3
// behaves.

// A submission whose answer is lost is sent again under the same id once the grace period ends, and
// Flink refuses it because the job was submitted. Flink 2.3 refuses it as an application already
// submitted, no longer as a job: that refusal means submitted too, not a failed deploy.
func TestASubmissionSentAgainAfterItsAnswerWasLostIsFollowedOnFlink23(t *testing.T) {
	for _, version := range []string{"2.2", "2.3"} {
		t.Run(version, func(t *testing.T) {
			w := newWorld(t)
			w.imageFaults["flink-wordcount:1"] = flinksim.Faults{SubmitRegistersAfter: 2 * time.Minute}
			app := wordcount("wc")
			app.Spec.FlinkVersion = version
			w.create(app)
			app = w.runUntil("wc", "running or failed", func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseRunning || a.Status.Phase == v1beta1.PhaseDeployFailed
			})
			require.Equal(t, v1beta1.PhaseRunning, app.Status.Phase, app.Status.Reason)
			jobs := w.timeline.Jobs(ns + "/wc")
			require.Len(t, jobs, 1)
			assert.Equal(t, app.Status.JobStatus.JobID, jobs[0].JobID)
			assert.False(t, strings.Contains(strings.Join(w.events(), "\n"), "refused"))
		})
	}
}
