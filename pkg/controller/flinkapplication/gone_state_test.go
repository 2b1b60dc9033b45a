package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// A state Flink could not find when a job was started from it is never offered again, and no older
// state is taken in its stead: the job may have completed newer state, which only Flink's storage
// holds. Explorer seed 11000118: a session job's recorded checkpoint was subsumed before the next
// record and its JobManager lost without HA; the job, submitted again from it, was refused, and the
// next spec change submitted from it again.
func TestAStateFlinkCouldNotFindIsNeverOfferedAgain(t *testing.T) {
	w, first, hash := sessionJobSubmitting(t, false)
	recorded := ledger.Of(&w.sessionJob("a").Status.Ledger).Checkpoint(first)
	require.NotNil(t, recorded)
	snap, ok := w.storage.Get(recorded.Path)
	require.True(t, ok)
	w.mu.Lock()
	jm := w.jms["session-"+hash]
	w.mu.Unlock()
	require.NotNil(t, jm)
	// Flink subsumed the recorded checkpoint, and lost the job with its JobManager process.
	w.storage.Delete(recorded.Path)
	jm.Restart()
	w.runSessionsUntil("a failed to deploy", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) })

	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = append(j.Spec.Job.Args, "--changed") })
	for i := 0; i < 100; i++ {
		w.reconcileSessions()
	}
	starts := 0
	for _, r := range w.jobsOf("session", "a") {
		if r.RestoredFrom == recorded.Path {
			starts++
		}
	}
	assert.Equal(t, 1, starts, "the state Flink could not find was offered again")
	j := w.sessionJob("a")
	assert.Equal(t, v1beta1.SessionJobDeployFailed, j.Status.Phase)
	assert.Contains(t, j.Status.Reason, "gone from storage")
	assert.True(t, ledger.Of(&j.Status.Ledger).IsGone(recorded.Path))

	// The user copies the checkpoint back and names it: the job starts from it.
	w.storage.PutBack(snap)
	w.env.Config.JobStabilizationPeriod.Duration = 10 * time.Second
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) {
		j.Spec.Job.InitialSavepointPath, j.Spec.Job.SavepointRedeployNonce = recorded.Path, "back"
	})
	w.runSessionsUntil("a runs from the state named", func() bool {
		j := w.sessionJob("a")
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.RestorePath == recorded.Path
	})
}
