package flinkapplication

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// manualCheckpointOf takes a checkpoint of the running job by checkpointTriggerNonce and returns
// its path.
func manualCheckpointOf(t *testing.T, w *world, name, nonce string) string {
	t.Helper()
	w.update(name, func(a *v1beta1.FlinkApplication) { a.Spec.CheckpointTriggerNonce = v1beta1.Nonce(nonce) })
	for i := 0; i < 60; i++ {
		_, _ = w.reconcile(name)
		for _, e := range w.get(name).Status.Ledger {
			if e.Purpose == v1beta1.ManualCheckpoint && e.Result == v1beta1.StateCompleted {
				return e.Path
			}
		}
	}
	t.Fatalf("no manual checkpoint completed: %+v", w.get(name).Status.Ledger)
	return ""
}

// A user who redeploys a BlueGreen application from a state they name (spec.savepointPath with a
// new savepointRedeployNonce) gets a new version that starts from that state. Here the named state
// is a checkpoint the user took of the running job with checkpointTriggerNonce a few minutes
// earlier (Flink retains it: num-retained is high): it is exactly what they asked to go back to.
// freshenBesideRestore reads any checkpoint of the deployed job older than the record window as one
// the deployed job will subsume, and moves the new version's restore on to the job's newest
// checkpoint, silently dropping the state the user named.
func TestABlueGreenRedeployFromANamedCheckpointStartsFromThatCheckpoint(t *testing.T) {
	w := newWorld(t)
	runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		blueGreenSpec(s)
		s.UpgradeMode = v1beta1.UpgradeModeLastState
		s.BlueGreen = &v1beta1.BlueGreenSpec{LastStateFrom: v1beta1.LastStateFromCheckpoint}
		s.FlinkConfig["state.checkpoints.num-retained"] = "100"
	})
	named := manualCheckpointOf(t, w, "wc", "c1")
	require.Contains(t, named, "chk-")
	// The user decides a few minutes later to go back to it.
	for end := w.clock.Now().Add(3 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	require.True(t, w.storage.Exists(named), "Flink still has %s", named)
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.Image = "flink-wordcount:2"
		a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce = named, "r1"
	})
	dual := w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
	c := dual.Status.Deployments.Candidate
	require.NotNil(t, c)
	assert.Equal(t, named, c.RestorePath, "the new version starts from the checkpoint the user named")
	for _, j := range w.timeline.Jobs(ns + "/wc") {
		if j.JobID == c.JobID {
			assert.Equal(t, named, j.RestoredFrom, "Flink restored job %s from the named checkpoint", j.JobID)
		}
	}
}

// A new BlueGreen version's job that ran and completed checkpoints of its own while it stabilized
// in Submitting (recordCandidateCheckpoint records them in the ledger) is lost with its JobManager
// (no HA) before it runs stable. Its own newest checkpoint is the newest state of the job being
// replaced on that cluster: "lost without HA, the new version's job starts again from its own
// newest checkpoint, never from the one it started from" (jobstate.Observe.CandidateCheckpoint). A JobManager
// that now says it has no such job is what freshenBesideRestore reads as "not yet submitted", and it
// moves the restore to the deployed version's newest checkpoint, dropping the state the new
// version's job built.
func TestANewBlueGreenVersionLostWhileStabilizingStartsAgainFromItsOwnCheckpoint(t *testing.T) {
	w := newWorld(t)
	w.env.Config.JobStabilizationPeriod.Duration = 2 * time.Minute
	app := wordcount("wc")
	blueGreenSpec(&app.Spec)
	app.Spec.UpgradeMode = v1beta1.UpgradeModeLastState
	app.Spec.BlueGreen = &v1beta1.BlueGreenSpec{LastStateFrom: v1beta1.LastStateFromCheckpoint}
	app.Spec.FlinkConfig["state.checkpoints.num-retained"] = "3"
	w.create(app)
	old := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	w.passes("wc", 10)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	sub := w.runUntil("wc", "the new version's job checkpointed", func(a *v1beta1.FlinkApplication) bool {
		c := a.Status.Deployments.Candidate
		return a.Status.Phase == v1beta1.PhaseSubmitting && c != nil && c.JobID != "" &&
			ledger.Of(&a.Status.Ledger).NewestPath(c.JobID) != ""
	})
	c := sub.Status.Deployments.Candidate
	for end := w.clock.Now().Add(15 * time.Second); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	require.Equal(t, v1beta1.PhaseSubmitting, w.get("wc").Status.Phase, "still stabilizing")
	w.jm(old, c.ClusterHash).Crash()
	// The job is sent again under the same id: the restore after the loss is the second run of it.
	again := func() (string, bool) {
		runs := 0
		for _, j := range w.timeline.Jobs(ns + "/wc") {
			if j.JobID == c.JobID {
				runs++
				if runs == 2 {
					return j.RestoredFrom, true
				}
			}
		}
		return "", false
	}
	w.runUntil("wc", "the new version's job started again", func(*v1beta1.FlinkApplication) bool {
		_, ok := again()
		return ok
	})
	from, _ := again()
	assert.Contains(t, from, c.JobID+"/chk-", "job %s, lost after it completed checkpoints of its own (the newest recorded %s), started again from %s",
		c.JobID, ledger.Of(&sub.Status.Ledger).NewestPath(c.JobID), from)
}
