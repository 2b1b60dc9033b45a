package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// When Flink fails the savepoint, the update goes on from the old job's newest retained checkpoint.
func TestFailedSavepointRecoversFromNewestCheckpoint(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
		spec.FlinkConfig["execution.checkpointing.interval"] = "1s"
		// Several retained checkpoints, so that "the newest" is a choice the operator can get wrong.
		spec.FlinkConfig["state.checkpoints.num-retained"] = "3"
	})
	oldJM := s.jobManager(old)
	oldJob := old.Status.JobStatus.JobID
	s.eventually("old job has retained checkpoints", func() (bool, string) {
		n := len(checkpointsOf(oldJob))
		return n >= 2, "retained checkpoints: " + strconv.Itoa(n)
	})

	env.Fleet.SetFaults(s.ns, old.Name, flinksim.Faults{FailSavepoints: true})
	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	app := s.waitRunning(old.Name, old.Status.DeployHash)

	if !testkit.HistoryHas(app, v1beta1.PhaseRecovering) {
		t.Errorf("no Recovering in the history: %s", testkit.Describe(app))
	}
	path := app.Status.JobStatus.RestorePath
	if !strings.Contains(path, "/chk-") {
		t.Fatalf("restorePath %q is not a checkpoint", path)
	}
	snap, ok := env.Fleet.Storage().Get(path)
	if !ok || snap.Savepoint || snap.JobID != oldJob {
		t.Errorf("%s: in storage %v, savepoint %v, job %s; want a retained checkpoint of job %s", path, ok, snap.Savepoint, snap.JobID, oldJob)
	}
	for _, c := range checkpointsOf(oldJob) {
		if c.CheckpointID > snap.CheckpointID {
			t.Errorf("restored checkpoint %d (%s), but checkpoint %d (%s) is newer", snap.CheckpointID, path, c.CheckpointID, c.Path)
		}
	}
	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	if job.RestoredFrom != path {
		t.Errorf("Flink restored the new job from %q, status says %q", job.RestoredFrom, path)
	}
	s.assertSavepointTriggers(oldJM, 1)
	if r := s.record(app.Name, oldJob); !reached(r, "CANCELED") {
		t.Errorf("old job %s went %s, want it CANCELED", oldJob, states(r))
	}
}

// checkpointsOf lists the retained checkpoints (not savepoints) of a job in the simulator's storage.
func checkpointsOf(jobID string) []flinksim.Snapshot {
	var out []flinksim.Snapshot
	for _, snap := range env.Fleet.Storage().Snapshots() {
		if snap.JobID == jobID && !snap.Savepoint {
			out = append(out, snap)
		}
	}
	return out
}

// An image without the job's jar fails the first deploy promptly, saying which jar is missing.
func TestMissingJarFailsFirstDeploy(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	const image = "flinkfsm.test/no-jars:v1"
	env.Fleet.SetImageJars(image, []string{})
	s.create("wordcount", func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = image })
	app := s.waitFor("wordcount", "DeployFailed", inPhase(v1beta1.PhaseDeployFailed), inPhase(v1beta1.PhaseRunning))

	if !strings.Contains(app.Status.Reason, testJar) {
		t.Errorf("reason %q does not name the missing jar %s", app.Status.Reason, testJar)
	}
	if jobs := s.timeline(app.Name); len(jobs) != 0 {
		t.Errorf("Flink ran %d jobs of an application whose jar is missing", len(jobs))
	}
}

// With one REST call in five failing, deploy and update still complete, through one savepoint.
func TestUpdateSurvivesFlakyRestAPI(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	env.Fleet.SetFaults(s.ns, "wordcount", flinksim.Faults{ErrorRate: map[string]float64{flinksim.AnyEndpoint: 0.2}})
	old := s.createRunning("wordcount", nil)
	oldJM := s.jobManager(old)
	oldJob := old.Status.JobStatus.JobID

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	app := s.waitRunning(old.Name, old.Status.DeployHash)

	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	s.assertSavepointOf(job.RestoredFrom, oldJob)
	s.assertSavepointTriggers(oldJM, 1)
}
