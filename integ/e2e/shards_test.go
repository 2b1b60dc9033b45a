package e2e

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
)

const shardLabel = "flinkfsm.io/shard"

// shard is one operator instance of the test, owning the applications labelled shard=name.
type shard struct {
	name, metrics, log string
	pid                int
}

// Two operator instances, shards a and b of one namespace by label, each with its own Lease:
// each runs its own application to Running and never looks at the other's. Relabelled from a to b,
// an application moves across: a drops it without deleting anything, b takes it over, and its job
// runs on without a savepoint or a restart.
func TestShardsRunTheirOwnApplicationsAndHandOneOver(t *testing.T) {
	defer stopEnvOnPanic()
	s := newScenario(t)
	shards := s.startShards()

	s.createInShard("app-a", "a")
	s.createInShard("app-b", "b")
	moving := s.waitRunning("app-a", "")
	s.waitRunning("app-b", "")

	// Each shard leads under a Lease of its own.
	s.eventually("each shard holds a Lease of its own", func() (bool, string) {
		leases, err := env.Kube.CoordinationV1().Leases(s.ns).List(s.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		holders := map[string]string{}
		for _, l := range leases.Items {
			if l.Spec.HolderIdentity != nil {
				holders[l.Name] = *l.Spec.HolderIdentity
			}
		}
		for _, sh := range shards {
			lease := (&config.Config{LimitNamespace: s.ns, ShardSelector: shardLabel + "=" + sh.name}).LeaseName()
			if !strings.Contains(holders[lease], fmt.Sprintf("_%d_", sh.pid)) {
				return false, fmt.Sprintf("Lease %s held by %q, not shard %s; Leases: %v", lease, holders[lease], sh.name, holders)
			}
		}
		return len(holders) == 2 && holders[config.DefaultLeaseName] == "", fmt.Sprintf("Leases: %v", holders)
	})
	// Each reports its own application, and neither has ever logged the other's.
	s.eventually("each shard reports its own application only", func() (bool, string) {
		a, b := s.shardApps(shards["a"]), s.shardApps(shards["b"])
		return a == "app-a" && b == "app-b", fmt.Sprintf("shard a reports %q, shard b %q", a, b)
	})
	s.assertNeverLogged(shards["b"], "app-a")
	s.assertNeverLogged(shards["a"], "app-b")

	jm := s.jobManager(moving)
	deployments, err := env.Kube.AppsV1().Deployments(s.ns).List(s.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.relabel("app-a", "b")
	s.eventually("app-a moved to shard b", func() (bool, string) {
		a, b := s.shardApps(shards["a"]), s.shardApps(shards["b"])
		return a == "" && b == "app-a,app-b", fmt.Sprintf("shard a reports %q, shard b %q", a, b)
	})
	// Shard b has seen it through at least one status poll: the job still runs, the same one.
	time.Sleep(3 * time.Second)
	moved := s.waitRunning("app-a", "")
	if moved.Status.JobStatus.JobID != moving.Status.JobStatus.JobID || moved.Status.DeployHash != moving.Status.DeployHash {
		t.Errorf("app-a runs job %s on %s after the move, want job %s on %s", moved.Status.JobStatus.JobID,
			moved.Status.DeployHash, moving.Status.JobStatus.JobID, moving.Status.DeployHash)
	}
	if n := len(s.timeline("app-a")); n != 1 {
		t.Errorf("the simulator saw %d jobs of app-a, want the one it had before the move", n)
	}
	s.assertSavepointTriggers(jm, 0)
	if !slices.Contains(moved.Finalizers, lifecycle.Finalizer) {
		t.Errorf("app-a lost its finalizer %s in the move: %v", lifecycle.Finalizer, moved.Finalizers)
	}
	after, err := env.Kube.AppsV1().Deployments(s.ns).List(s.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]bool{}
	for _, d := range after.Items {
		uids[string(d.UID)] = d.DeletionTimestamp == nil
	}
	for _, d := range deployments.Items {
		if !uids[string(d.UID)] {
			t.Errorf("Deployment %s was deleted or replaced in the move", d.Name)
		}
	}
}

// startShards stops the environment's own operator, which owns every application, and starts the
// operators of shards a and b of the test's namespace, each electing its leader. The test must not
// be parallel.
func (s *scenario) startShards() map[string]*shard {
	s.t.Helper()
	env.KillOperator()
	s.t.Cleanup(func() { _ = env.StartOperator() })
	shards := map[string]*shard{}
	for _, name := range []string{"a", "b"} {
		replica := "shard-" + name + "-" + s.ns
		sh := &shard{name: name, metrics: fmt.Sprintf("127.0.0.1:%d", freePort(s.t)), log: env.ReplicaLog(replica)}
		r, err := env.StartReplica(replica, map[string]string{
			"limitNamespace": s.ns,
			"shardSelector":  fmt.Sprintf("%q", shardLabel+"="+name),
			"metricsAddress": fmt.Sprintf("%q", sh.metrics),
			"leaderElection": fmt.Sprintf("{enabled: true, leaseNamespace: %s, leaseDuration: 3s, renewDeadline: 2s, retryPeriod: 500ms}", s.ns),
		})
		if err != nil {
			s.t.Fatal(err)
		}
		s.t.Cleanup(r.Kill)
		sh.pid = r.Pid()
		shards[name] = sh
	}
	return shards
}

// A FlinkSessionJob of shard a naming a FlinkSessionCluster of shard b is held by shard a, which
// says so in its Ready condition and an Event, and submits nothing; once the cluster is relabelled
// into shard a, shard a takes the cluster over and runs the job on it.
func TestASessionJobWaitsForItsClusterToJoinItsShard(t *testing.T) {
	defer stopEnvOnPanic()
	s := newScenario(t)
	shards := s.startShards()
	jar := s.jarServer()
	s.createSessionCluster("session", nil)
	s.labelInShard("flinksessionclusters", "session", "b")
	s.createSessionJob("job", "session", jar, v1beta1.UpgradeModeSavepoint, nil)
	s.labelInShard("flinksessionjobs", "job", "a")

	held := s.waitSessionJob("job", "held for its cluster's shard", func(j *v1beta1.FlinkSessionJob) bool {
		c := meta.FindStatusCondition(j.Status.Conditions, v1beta1.ConditionReady)
		return c != nil && c.Reason == sessionjob.ReasonOtherShard
	})
	if c := meta.FindStatusCondition(held.Status.Conditions, v1beta1.ConditionReady); !strings.Contains(c.Message, "FlinkSessionCluster session is in another shard") {
		t.Errorf("the held job's Ready condition says %q", c.Message)
	}
	s.eventually("the Event on the held job", func() (bool, string) {
		events, err := env.Kube.CoreV1().Events(s.ns).List(s.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "FlinkSessionJob" && e.InvolvedObject.Name == "job" && e.Reason == sessionjob.ReasonOtherShard {
				return e.Type == "Warning", "a Normal Event"
			}
		}
		return false, fmt.Sprintf("%d Events, none %s on the job", len(events.Items), sessionjob.ReasonOtherShard)
	})
	s.eventually("shard b runs the cluster", func() (bool, string) {
		c := s.sessionCluster("session")
		return c.Status.Phase == v1beta1.SessionClusterRunning, "phase " + string(c.Status.Phase)
	})
	if j := s.sessionJob("job"); j.Status.Phase != "" || len(j.Finalizers) > 0 {
		t.Errorf("the held job moved: phase %q, finalizers %v", j.Status.Phase, j.Finalizers)
	}
	if n := len(s.sessionJobsOf("session", "job")); n != 0 {
		t.Errorf("%d jobs were submitted for the held session job", n)
	}

	s.labelInShard("flinksessionclusters", "session", "a")
	s.sessionJobRuns("job", "")
	s.eventually("the cluster and the job moved to shard a", func() (bool, string) {
		a, b := s.shardObjects(shards["a"]), s.shardObjects(shards["b"])
		return a == "FlinkSessionCluster/session,FlinkSessionJob/job" && b == "", fmt.Sprintf("shard a reports %q, shard b %q", a, b)
	})
}

// labelInShard puts an object of the test's namespace into a shard, as `kubectl label --overwrite` does.
func (s *scenario) labelInShard(resource, name, shard string) {
	s.t.Helper()
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, shardLabel, shard)
	err := env.Apps.FlinkV1beta1().RESTClient().Patch(types.MergePatchType).Namespace(s.ns).Resource(resource).Name(name).
		Body(patch).Do(s.ctx).Error()
	if err != nil {
		s.t.Fatalf("labelling %s %s into shard %s: %v", resource, name, shard, err)
	}
}

// createInShard creates an application from appSpec labelled into a shard.
func (s *scenario) createInShard(name, shard string) {
	s.t.Helper()
	app := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns,
		Labels: map[string]string{shardLabel: shard}}, Spec: appSpec()}
	if _, err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Create(s.ctx, app, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("creating %s/%s: %v", s.ns, name, err)
	}
	s.apps = append(s.apps, name)
}

// relabel moves an application to another shard, as `kubectl label --overwrite` does.
func (s *scenario) relabel(name, shard string) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := s.get(name)
		if err != nil {
			return err
		}
		metav1.SetMetaDataLabel(&app.ObjectMeta, shardLabel, shard)
		_, err = env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Update(s.ctx, app, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("relabelling %s: %v", name, err)
	}
}

// shardApps are the FlinkApplications of the test's namespace that the shard's instance reports
// running (flinkfsm_application_phase), comma-separated in order; why it cannot tell otherwise.
func (s *scenario) shardApps(sh *shard) string {
	return s.shardReports(sh, func(kind, name string) string {
		if kind == "FlinkApplication" {
			return name
		}
		return ""
	})
}

// shardObjects are the objects of every kind the shard's instance reports, as kind/name.
func (s *scenario) shardObjects(sh *shard) string {
	return s.shardReports(sh, func(kind, name string) string { return kind + "/" + name })
}

// shardReports are the objects of the test's namespace that the shard's instance reports running
// (flinkfsm_application_phase), as show names them ("" leaves one out), comma-separated in order;
// why it cannot tell otherwise.
func (s *scenario) shardReports(sh *shard, show func(kind, name string) string) string {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + sh.metrics + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return err.Error()
	}
	var names []string
	for _, m := range families["flinkfsm_application_phase"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["namespace"] != s.ns || m.GetGauge().GetValue() != 1 {
			continue
		}
		if shown := show(labels["kind"], labels["name"]); shown != "" {
			names = append(names, shown)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// assertNeverLogged checks that a shard's operator never logged an application by name.
func (s *scenario) assertNeverLogged(sh *shard, app string) {
	s.t.Helper()
	data, err := os.ReadFile(sh.log)
	if err != nil {
		s.t.Fatal(err)
	}
	if ref := s.ns + "/" + app; strings.Contains(string(data), ref) {
		s.t.Errorf("shard %s's operator logged %s, another shard's application", sh.name, ref)
	}
}
