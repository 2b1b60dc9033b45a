package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func lastStateBlueGreen(s *v1beta1.FlinkApplicationSpec) {
	blueGreenSpec(s)
	s.UpgradeMode = v1beta1.UpgradeModeLastState
}

// A new BlueGreen version of a LastState application starts from a savepoint of the deployed job
// taken as it runs (the Apache operator's way), not from an older checkpoint of it; the deployed job
// keeps running.
func TestALastStateBlueGreenVersionStartsFromAFreshSavepointOfTheDeployedJob(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", lastStateBlueGreen)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
	restored := w.jm(app, app.Status.UpdatingHash).Jobs()[0].RestoredFrom
	assert.Contains(t, restored, "savepoint-", "a fresh savepoint, not a checkpoint")
	assert.Equal(t, restored, app.Status.Deployments.Candidate.RestorePath)
	oldJobs := w.jm(old, old.Status.DeployHash).Jobs()
	require.Len(t, oldJobs, 1)
	assert.Equal(t, "RUNNING", oldJobs[0].State, "the savepoint did not stop the deployed job")
	assert.True(t, historyHas(app, v1beta1.PhaseSavepointing))
	w.assertAtMostTwoJobs(w.events())
}

// blueGreen.lastStateFrom Checkpoint keeps the savepoint's cost off the running job: the new version
// starts from the deployed job's newest retained checkpoint.
func TestALastStateBlueGreenVersionStartsFromTheNewestCheckpointWhenAsked(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		lastStateBlueGreen(s)
		s.BlueGreen = &v1beta1.BlueGreenSpec{LastStateFrom: v1beta1.LastStateFromCheckpoint}
	})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
	assert.Contains(t, w.jm(app, app.Status.UpdatingHash).Jobs()[0].RestoredFrom, old.Status.JobStatus.JobID+"/chk-")
	assert.False(t, historyHas(app, v1beta1.PhaseSavepointing), "no savepoint was taken")
	w.assertAtMostTwoJobs(w.events())
}

// A savepoint the deployed job cannot take falls back to its newest checkpoint, as LastState allows.
func TestALastStateBlueGreenVersionWhoseSavepointFailsStartsFromTheNewestCheckpoint(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", lastStateBlueGreen)
	w.jm(old, old.Status.DeployHash).SetFaults(flinksim.Faults{FailSavepoints: true})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntilPhase("wc", v1beta1.PhaseDualRunning)
	assert.Contains(t, w.jm(app, app.Status.UpdatingHash).Jobs()[0].RestoredFrom, old.Status.JobStatus.JobID+"/chk-")
	assert.Equal(t, "RUNNING", w.jm(old, old.Status.DeployHash).Jobs()[0].State)
	w.assertAtMostTwoJobs(w.events())
}

func historyHas(app *v1beta1.FlinkApplication, phase v1beta1.FlinkApplicationPhase) bool {
	for _, h := range app.Status.History {
		if h.To == phase {
			return true
		}
	}
	return false
}
