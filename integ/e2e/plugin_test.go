package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/cli"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
)

// plugin runs `kubectl flink ARGS` against the local cluster in the scenario's namespace.
func (s *scenario) plugin(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Run(args, &out, &errOut, func(string, string) (versioned.Interface, string, error) { return env.Apps, s.ns, nil })
	s.t.Logf("kubectl flink %s -> %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return code, out.String(), errOut.String()
}

func (s *scenario) pluginOK(args ...string) string {
	s.t.Helper()
	code, out, errOut := s.plugin(args...)
	if code != cli.ExitOK {
		s.t.Fatalf("kubectl flink %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// Every verb of `kubectl flink` against a real BlueGreen application: wait, status, history,
// suspend/resume, restart, promote and abort, and the exit codes a CI pipeline reads.
func TestKubectlFlinkDrivesAnApplication(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	s.create("wordcount", blueGreen)
	s.pluginOK("wait", "wordcount", "--timeout", "60s")
	app, _ := s.get("wordcount")
	out := s.pluginOK("status", "wordcount")
	for _, want := range []string{"FlinkApplication " + s.ns + "/wordcount  Running  Ready True", "job " + app.Status.JobStatus.JobID + " RUNNING", "last transitions:"} {
		if !strings.Contains(out, want) {
			t.Errorf("status does not show %q:\n%s", want, out)
		}
	}
	if out := s.pluginOK("history", "wordcount"); !strings.Contains(out, "Submitting        Running") {
		t.Errorf("history:\n%s", out)
	}

	// A savepoint of the running job, which keeps running.
	path := strings.TrimSpace(s.pluginOK("savepoint", "wordcount", "--timeout", "60s"))
	if !strings.Contains(path, "savepoint-") {
		t.Errorf("kubectl flink savepoint printed %q, want a savepoint path", path)
	}
	if now, _ := s.get("wordcount"); now.Status.JobStatus.JobID != app.Status.JobStatus.JobID {
		t.Errorf("the savepoint stopped job %s", app.Status.JobStatus.JobID)
	}

	// Suspend and resume.
	s.pluginOK("suspend", "wordcount")
	s.pluginOK("wait", "wordcount", "--for", "Suspended", "--timeout", "60s")
	if code, _, _ := s.plugin("wait", "wordcount", "--timeout", "5s"); code != cli.ExitFailed {
		t.Errorf("waiting for Running while Suspended: exit %d, want %d", code, cli.ExitFailed)
	}
	s.pluginOK("resume", "wordcount")
	s.pluginOK("wait", "wordcount", "--timeout", "60s")

	// Restart: under BlueGreen a new version beside the deployed one, which promote makes the
	// deployed one.
	before, _ := s.get("wordcount")
	s.pluginOK("restart", "wordcount")
	s.pluginOK("wait", "wordcount", "--for", "DualRunning", "--timeout", "60s")
	dual, _ := s.get("wordcount")
	s.pluginOK("promote", "wordcount")
	s.pluginOK("wait", "wordcount", "--timeout", "60s")
	promoted, _ := s.get("wordcount")
	if promoted.Status.DeployVersion != dual.Status.UpdatingVersion || promoted.Status.JobStatus.JobID == before.Status.JobStatus.JobID {
		t.Errorf("restart and promote: version %s deployed with job %s; want %s with a new job (was %s)", promoted.Status.DeployVersion,
			promoted.Status.JobStatus.JobID, dual.Status.UpdatingVersion, before.Status.JobStatus.JobID)
	}

	// Abort: the next version goes, the deployed one stays.
	s.update("wordcount", func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v3" })
	s.pluginOK("wait", "wordcount", "--for", "DualRunning", "--timeout", "60s")
	s.pluginOK("abort", "wordcount")
	s.pluginOK("wait", "wordcount", "--for", "Running", "--timeout", "60s")
	aborted, _ := s.get("wordcount")
	if aborted.Status.DeployVersion != promoted.Status.DeployVersion {
		t.Errorf("abort: version %s deployed, want %s kept", aborted.Status.DeployVersion, promoted.Status.DeployVersion)
	}

	// Exit codes: an object that is not there, and a timeout.
	if code, _, _ := s.plugin("status", "nothing-here"); code != cli.ExitError {
		t.Errorf("status of a missing application: exit %d, want %d", code, cli.ExitError)
	}
	if code, _, _ := s.plugin("wait", "wordcount", "--for", "Teardown", "--timeout", "2s"); code != cli.ExitTimeout {
		t.Errorf("waiting for a phase that does not come: exit %d, want %d", code, cli.ExitTimeout)
	}
}

// On the local cluster: periodic savepoints appear in status.savepoints with the retention applied
// (older ones disposed of through Flink), and a job that keeps failing over turns Red with an Event.
func TestPeriodicSavepointsRetentionAndJobHealth(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	app := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
		spec.PeriodicSavepoint = &v1beta1.PeriodicSchedule{IntervalSeconds: 60}
		spec.SavepointRetention = &v1beta1.SavepointRetention{Keep: 1, DisposeOlder: true}
	})
	// --nonce: a savepoint of the operator's own (a FlinkSnapshot a user creates is theirs, and
	// retention leaves it alone).
	path := strings.TrimSpace(s.pluginOK("savepoint", "wordcount", "--nonce", "--timeout", "60s"))
	// The schedule's shortest interval is a minute, counted from when the job ran stable.
	for deadline := time.Now().Add(150 * time.Second); ; time.Sleep(time.Second) {
		a, _ := s.get("wordcount")
		st := a.Status
		if len(st.Savepoints) == 1 && st.Savepoints[0].Trigger == v1beta1.SavepointPeriodic {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no periodic savepoint replaced the manual one: %+v", st.Savepoints)
		}
	}
	// Retention deletes the FlinkSnapshot first; its finalizer disposes of the storage in a pass
	// after that, which the status above does not wait for.
	for deadline := time.Now().Add(30 * time.Second); env.Fleet.Storage().Exists(path); time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the manual savepoint %s was not disposed of within 30 s of retention dropping it", path)
			break
		}
	}

	// A job that keeps failing over: Red, with an Event.
	jm := s.jobManager(app)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		// Its tasks fail every second; its restart strategy restarts it each time.
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
				jm.FailTasksNow(app.Status.JobStatus.JobID)
			}
		}
	}()
	s.eventually("Red with an Event", func() (bool, string) {
		a, _ := s.get("wordcount")
		red := a.Status.JobStatus.Health == v1beta1.Red
		for _, e := range s.events("wordcount") {
			if e.Reason == "JobHealthChanged" && strings.Contains(e.Message, "Red") && red {
				return true, ""
			}
		}
		return false, fmt.Sprintf("health %s", a.Status.JobStatus.Health)
	})
}
