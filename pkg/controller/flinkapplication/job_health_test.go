package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A job whose id is recorded but which was not submitted yet is not a lost job. A first deploy
// whose JobManager answered before its TaskManagers registered wrote its job Red in
// ClusterStarting, and announced "Green (was Red)" once it ran: on the local cluster, a fifth of
// the applications of a bench run did.
func TestAJobNotSubmittedYetIsNotRed(t *testing.T) {
	w := newWorld(t)
	w.taskManagerCap["wc"] = 0 // the JobManager answers; no TaskManager registers yet
	w.create(wordcount("wc"))
	for range 5 {
		_, _ = w.reconcile("wc")
	}
	app := w.get("wc")
	require.Equal(t, v1beta1.PhaseClusterStarting, app.Status.Phase)
	require.NotEmpty(t, app.Status.JobStatus.JobID, "the job id goes out ahead of the submission")
	assert.Empty(t, app.Status.JobStatus.Health, "the job was not submitted: its health is not known")
	assert.Nil(t, meta.FindStatusCondition(app.Status.Conditions, v1beta1.ConditionJobHealthy))

	delete(w.taskManagerCap, "wc")
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	for _, e := range w.events() {
		assert.NotContains(t, e, "JobHealthChanged")
	}
}
