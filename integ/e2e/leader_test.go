package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Two operator replicas with leader election: the leader is SIGKILLed in the middle of an upgrade,
// after it triggered the savepoint. The standby takes the lease over and finishes the upgrade: one
// savepoint, one new job, restored from that savepoint, never two jobs at once.
func TestStandbyFinishesTheUpgradeOfAKilledLeader(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel: the environment's own operator is stopped for the two replicas.
	s := newScenario(t)
	env.KillOperator()
	t.Cleanup(func() { _ = env.StartOperator() })
	election := map[string]string{"leaderElection": fmt.Sprintf(
		"{enabled: true, leaseNamespace: %s, leaseDuration: 3s, renewDeadline: 2s, retryPeriod: 500ms}", s.ns)}
	replicas := map[int]*localenv.Replica{}
	for _, name := range []string{"a", "b"} {
		r, err := env.StartReplica(name, election)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Kill)
		replicas[r.Pid()] = r
	}
	leader := func() *localenv.Replica {
		var holder string
		s.eventually("a leader", func() (bool, string) {
			l, err := env.Kube.CoordinationV1().Leases(s.ns).Get(s.ctx, "flinkfsm-leader", metav1.GetOptions{})
			if err != nil || l.Spec.HolderIdentity == nil {
				return false, fmt.Sprint(err)
			}
			holder = *l.Spec.HolderIdentity
			return true, ""
		})
		parts := strings.Split(holder, "_")
		pid, _ := strconv.Atoi(parts[len(parts)-2])
		r := replicas[pid]
		if r == nil {
			t.Fatalf("lease held by %q, not by a replica of this test", holder)
		}
		return r
	}

	old := s.createRunning("wordcount", nil)
	first := leader()
	oldJM := s.jobManager(old)
	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	s.pollUntil("savepoint triggered", 20*time.Millisecond, func() (bool, string) {
		return oldJM.SavepointTriggers() > 0, "no savepoint trigger yet"
	})
	first.Kill()
	delete(replicas, first.Pid())

	app := s.waitRunning(old.Name, old.Status.DeployHash)
	if second := leader(); second == first {
		t.Errorf("the killed replica still holds the lease")
	}
	s.assertSavepointTriggers(oldJM, 1)
	job := s.onlyJob(s.jobManager(app))
	s.assertSavepointOf(job.RestoredFrom, old.Status.JobStatus.JobID)
	if n := len(s.timeline(app.Name)); n != 2 {
		t.Errorf("the simulator saw %d jobs of %s, want the old one and one new one", n, app.Name)
	}
}
