package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The unwritten passes of Submitting keep its deadline: a first deploy whose job keeps restarting,
// and so never runs stable, gives up readinessTimeout after the job was submitted, not never, and
// says that its cluster was ready once, not at every pass.
func TestAQuietSubmissionKeepsItsDeadline(t *testing.T) {
	w := newWorld(t)
	w.faults = flinksim.Faults{RestartJobsEvery: 5 * time.Second}
	app := w.create(wordcount("wc"))
	hash := flink.ClusterHash(app)
	w.runUntil("wc", "job submitted", func(a *v1beta1.FlinkApplication) bool {
		return w.jm(a, hash) != nil && len(w.jm(a, hash).Jobs()) > 0
	})
	jm := w.jm(app, hash)
	submitted := jm.Jobs()[0].SubmittedAt
	failed := w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	took := w.clock.Since(submitted)
	timeout := w.env.Config.ReadinessTimeout.Duration
	assert.Contains(t, failed.Status.Reason, "Submitting did not complete within")
	assert.GreaterOrEqual(t, took, timeout-time.Minute)
	assert.LessOrEqual(t, took, timeout+time.Minute, "the deadline counts from the submission")
	ready := 0
	events := w.events()
	for _, e := range events {
		if strings.Contains(e, " ClusterReady ") {
			ready++
		}
	}
	assert.Equal(t, 1, ready, "the cluster was found ready once")
	var toSubmitting time.Time
	for _, h := range failed.Status.History {
		if h.To == v1beta1.PhaseSubmitting {
			toSubmitting = h.Time.Time
		}
	}
	require.False(t, toSubmitting.IsZero())
	assert.WithinDuration(t, submitted, toSubmitting, 15*time.Second, "history keeps when Submitting began")
}
