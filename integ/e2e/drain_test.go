package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
)

// An operator told to stop (SIGTERM, as for a rolling update or a drained node) while a job
// submission is on the wire lets that pass finish: the submission gets its answer and its status
// write, not a cancelled call that leaves it ambiguous. Then it exits cleanly, and the next operator
// finds one job, already recorded.
func TestSIGTERMDuringSubmissionDrainsThePass(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel: the environment's own operator is stopped for this test's replica.
	s := newScenario(t)
	env.KillOperator()
	t.Cleanup(func() { _ = env.StartOperator() })
	replica, err := env.StartReplica("drain", map[string]string{
		"leaderElection": "{enabled: false, drainTimeout: 30s}"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(replica.Kill)

	// Flink takes 3 s to answer the submission: long enough to stop the operator in the middle.
	const answerAfter = 3 * time.Second
	env.Fleet.SetFaults(s.ns, "drain", flinksim.Faults{Latency: map[string]time.Duration{flinksim.EndpointJarRun: answerAfter}})
	s.create("drain", nil)
	s.pollUntil("the submission on the wire", 20*time.Millisecond, func() (bool, string) {
		n := env.Fleet.RequestsByEndpoint(s.ns)["POST /jars/:jar/run"]
		return n > 0, "no POST /jars/:jarid/run yet"
	})
	stopped := time.Now()
	if err := replica.Terminate(25 * time.Second); err != nil {
		t.Fatal(err)
	}
	took := time.Since(stopped)
	if code := replica.ExitCode(); code != 0 {
		t.Errorf("the operator exited with %d after SIGTERM, want 0", code)
	}
	if took < answerAfter/2 {
		t.Errorf("the operator exited %s after SIGTERM, before Flink could answer the submission: it did not drain", took)
	}
	app, err := s.get("drain")
	if err != nil {
		t.Fatal(err)
	}
	rec := app.Status.Deployments.Candidate
	if rec == nil {
		rec = app.Status.Deployments.Stable
	}
	// A first deploy writes the job id ahead, with ClusterStarting, and the pass that finds the
	// cluster ready submits under it; an answered submission writes nothing more until the job runs
	// stable. The drained pass finished its submission: Flink has the job under the id status
	// recorded, and no submission was left unanswered.
	if rec == nil || rec.JobID == "" || (app.Status.Phase != "ClusterStarting" && app.Status.Phase != "Submitting") {
		t.Fatalf("after the drain, status records no job to submit: phase %s, %+v", app.Status.Phase, app.Status.Deployments)
	}
	if jobs := s.timeline("drain"); len(jobs) != 1 || jobs[0].JobID != rec.JobID {
		t.Errorf("after the drain Flink runs %+v, want the one job %s status recorded", jobs, rec.JobID)
	}
	for _, ev := range s.events("drain") {
		if ev.Reason == "SubmissionUnanswered" {
			t.Errorf("the drained submission was left ambiguous: %s", ev.Message)
		}
	}
	if log, _ := os.ReadFile(env.ReplicaLog("drain")); strings.Contains(string(log), "cancelling their calls") {
		t.Errorf("the drain timed out and cancelled the pass in flight")
	}

	env.Fleet.SetFaults(s.ns, "drain", flinksim.Faults{})
	if err := env.StartOperator(); err != nil {
		t.Fatal(err)
	}
	app = s.waitRunning("drain", "")
	if app.Status.JobStatus.JobID != rec.JobID {
		t.Errorf("running job %s, but the drained pass submitted %s", app.Status.JobStatus.JobID, rec.JobID)
	}
	s.onlyJob(s.jobManager(app))
	if n := len(s.timeline("drain")); n != 1 {
		t.Errorf("the simulator saw %d jobs of the application, want 1", n)
	}
}
