package realflink

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// A LastState application on real Flink keeps exactly its state through everything that restarts
// its job without a savepoint: an upgrade, a suspend and resume, a TaskManager killed (Flink
// restarts the job itself) and a JobManager killed without HA (the job is lost with it, and the
// operator starts it again on the same cluster). Each new job goes on at exactly the position of
// the checkpoint Flink says it restored, with counters that match it, as the test job's output
// shows.
func TestALastStateApplicationKeepsItsExactStateThroughRestartsOnRealFlink(t *testing.T) {
	env, fleet, releases := operatorOnRealFlink(t)
	for _, r := range releases {
		t.Run(r.name, func(t *testing.T) { lastStateLifecycle(t, env, fleet, r) })
	}
}

func lastStateLifecycle(t *testing.T, env *localenv.Env, fleet *Fleet, r realRelease) {
	ctx := context.Background()
	began := time.Now()
	ns := realNamespace(t, env)
	out := t.TempDir()
	app := lyftManifest(t, ns, r, out)
	app.Name = "laststate"
	app.Spec.UpgradeMode = v1beta1.UpgradeModeLastState
	s := &lifecycle{t: t, env: env, fleet: fleet, ns: ns, name: app.Name, out: out, api: client.New(client.DefaultConfig(), nil)}
	s.create(app)
	job := s.awaitNewJob("", "")
	s.awaitCheckpoints(job, 2)

	// An upgrade: the job is cancelled and the new one starts from its newest checkpoint.
	s.update(func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 3 })
	upgraded := s.awaitNewJob(job.id, job.hash)
	if upgraded.hash == job.hash {
		t.Fatalf("the upgrade kept cluster %s", job.hash)
	}
	s.checkWentOnExactly(job, upgraded, false)

	// Suspended, the job stops and its cluster goes; resumed, it goes on from its newest checkpoint.
	s.awaitCheckpoints(upgraded, 2)
	s.update(func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
	suspended := awaitApp(t, env, ns, app.Name, "Suspended", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseSuspended
	})
	eventually(t, 2*time.Minute, "the processes of the suspended "+app.Name+" ended", func() (bool, error) {
		return fleet.processesOf(ns, app.Name) == 0, nil
	})
	t.Logf("suspended: %s", testkit.Describe(suspended))
	s.update(func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateRunning })
	resumed := s.awaitNewJob(upgraded.id, "")
	s.checkWentOnExactly(upgraded, resumed, false)
	if p := suspended.Status.Deployments.NextRestorePath; p != "" && p != resumed.restored.ExternalPath {
		t.Errorf("suspended, the status said the job would resume from %s; it resumed from %s", p, resumed.restored.ExternalPath)
	}

	// A TaskManager killed: Flink restarts the job's tasks from its newest checkpoint, under the same
	// job id, and the operator starts nothing.
	s.awaitCheckpoints(resumed, 2)
	tm := s.pod(resumed.hash, roleTaskManager)
	if !fleet.Kill(ns, tm) {
		t.Fatalf("TaskManager %s had no process to kill", tm)
	}
	eventually(t, 3*time.Minute, "job "+resumed.id+" restored after its TaskManager was killed", func() (bool, error) {
		st, err := s.api.GetCheckpoints(ctx, resumed.url, resumed.id)
		if err != nil {
			return false, err
		}
		r := st.Latest.Restored
		return r != nil && r.ID > resumed.restored.ID && st.Latest.Completed != nil && st.Latest.Completed.ID > r.ID, nil
	})
	afterKill := s.current()
	if afterKill.Status.JobStatus.JobID != resumed.id || afterKill.Status.DeployHash != resumed.hash {
		t.Fatalf("after a TaskManager was killed the application runs job %s on %s; want job %s on %s, restarted by Flink",
			afterKill.Status.JobStatus.JobID, afterKill.Status.DeployHash, resumed.id, resumed.hash)
	}
	o, err := ReadJobOutput(out, resumed.id)
	if err != nil {
		t.Fatal(err)
	}
	check(t, o.CheckCounts(testKeys))
	if len(o.Attempts) < 2 {
		t.Errorf("job %s wrote from attempts %v; want a second attempt after its TaskManager was killed", resumed.id, keys(o.Attempts))
	}

	// A JobManager killed without HA: the job is lost with the process. The operator starts it
	// again on the same cluster from the newest checkpoint it knows.
	s.awaitCheckpoints(resumed, 2)
	jm := s.pod(resumed.hash, roleJobManager)
	if !fleet.Kill(ns, jm) {
		t.Fatalf("JobManager %s had no process to kill", jm)
	}
	recovered := s.awaitNewJob(resumed.id, "")
	if recovered.hash != resumed.hash {
		t.Errorf("the lost job was started again on cluster %s, want %s", recovered.hash, resumed.hash)
	}
	if isSavepointPath(recovered.restored.ExternalPath) {
		t.Errorf("the lost job was started from savepoint %s; want a checkpoint", recovered.restored.ExternalPath)
	}
	before, err := ReadJobOutput(out, resumed.id)
	if err != nil {
		t.Fatal(err)
	}
	after, err := ReadJobOutput(out, recovered.id)
	if err != nil {
		t.Fatal(err)
	}
	resume, ok := before.ResumePosition(recovered.restored.ID)
	if !ok {
		t.Fatalf("job %s wrote no position for checkpoint %d", resumed.id, recovered.restored.ID)
	}
	upTo, _ := after.ResumePosition(recovered.later.ID)
	check(t, before.CheckCounts(testKeys), after.CheckCounts(testKeys), after.CheckExactlyFrom(resume, upTo))
	t.Logf("Flink %s: LastState upgrade, suspend and resume, TaskManager and JobManager loss in %s; %s",
		r.dist.Version, time.Since(began).Round(time.Second), fleet.Memory())

	s.deleteAndWait()
}

// lifecycle follows one application's jobs on real Flink.
type lifecycle struct {
	t        *testing.T
	env      *localenv.Env
	fleet    *Fleet
	ns, name string
	out      string
	api      client.API
}

// realJob is one job of the application, as Flink reports it.
type realJob struct {
	id, hash, url string
	// restored is the checkpoint or savepoint Flink restored the job from (nil for a fresh start),
	// later a checkpoint it completed after it.
	restored *client.RestoredCheckpoint
	later    *client.Checkpoint
}

// awaitNewJob waits until the application is Running a job other than previous (on another cluster
// than previousHash, when given) and that job completed a checkpoint after whatever it restored.
func (s *lifecycle) awaitNewJob(previous, previousHash string) realJob {
	s.t.Helper()
	return s.awaitJobIn(v1beta1.PhaseRunning, previous, previousHash)
}

// awaitJobIn is awaitNewJob for an application in phase.
func (s *lifecycle) awaitJobIn(phase v1beta1.FlinkApplicationPhase, previous, previousHash string) realJob {
	s.t.Helper()
	a := awaitApp(s.t, s.env, s.ns, s.name, string(phase)+" with a new job", func(a *v1beta1.FlinkApplication) bool {
		st := a.Status
		return st.Phase == phase && st.JobStatus.State == v1beta1.JobRunning && st.JobStatus.JobID != "" &&
			st.JobStatus.JobID != previous && (previousHash == "" || st.DeployHash != previousHash)
	})
	j := realJob{id: a.Status.JobStatus.JobID, hash: a.Status.DeployHash}
	eventually(s.t, 3*time.Minute, "a checkpoint of job "+j.id, func() (bool, error) {
		j.url = s.fleet.JobManagerURL(s.ns, s.name+"-"+j.hash)
		if j.url == "" {
			return false, fmt.Errorf("no JobManager of %s-%s is up", s.name, j.hash)
		}
		st, err := s.api.GetCheckpoints(context.Background(), j.url, j.id)
		if err != nil {
			return false, err
		}
		j.restored, j.later = st.Latest.Restored, st.Latest.Completed
		return j.later != nil && (j.restored == nil || j.later.ID > j.restored.ID), nil
	})
	s.t.Logf("job %s runs on %s-%s, restored from %+v", j.id, s.name, j.hash, j.restored)
	return j
}

// awaitCheckpoints waits until the job completed n checkpoints in all.
func (s *lifecycle) awaitCheckpoints(j realJob, n int64) {
	s.t.Helper()
	eventually(s.t, 2*time.Minute, fmt.Sprintf("%d checkpoints of job %s", n, j.id), func() (bool, error) {
		st, err := s.api.GetCheckpoints(context.Background(), j.url, j.id)
		return err == nil && st.Counts.Completed >= n, err
	})
}

// checkWentOnExactly checks that next restored a snapshot of previous (a savepoint or a checkpoint
// as wanted), holding exactly what previous had counted up to it, and went on from there.
func (s *lifecycle) checkWentOnExactly(previous, next realJob, savepoint bool) {
	s.t.Helper()
	if next.restored == nil {
		s.t.Fatalf("job %s started without state; want it restored from job %s's", next.id, previous.id)
	}
	// Flink reports a job submitted with a savepoint path as restored from a savepoint
	// (is_savepoint), a retained checkpoint included: the path tells which it was.
	if isSavepointPath(next.restored.ExternalPath) != savepoint {
		s.t.Errorf("job %s restored %s; want a savepoint %v", next.id, next.restored.ExternalPath, savepoint)
	}
	before, err := ReadJobOutput(s.out, previous.id)
	if err != nil {
		s.t.Fatal(err)
	}
	resume, ok := before.ResumePosition(next.restored.ID)
	if !ok {
		s.t.Fatalf("job %s wrote no position for snapshot %d (it wrote %v)", previous.id, next.restored.ID, before.Highest)
	}
	after, err := ReadJobOutput(s.out, next.id)
	if err != nil {
		s.t.Fatal(err)
	}
	upTo, _ := after.ResumePosition(next.later.ID)
	check(s.t, before.CheckCounts(testKeys), after.CheckCounts(testKeys), after.CheckExactlyFrom(resume, upTo))
	s.t.Logf("job %s went on from snapshot %d of job %s at %d (checkpoint %d holds 0..%d)",
		next.id, next.restored.ID, previous.id, resume, next.later.ID, upTo-1)
}

// create creates the application s follows, again while the namespace's hostPath allowance is not
// applied yet (a moment after the namespace exists).
func (s *lifecycle) create(app *v1beta1.FlinkApplication) {
	s.t.Helper()
	eventually(s.t, 30*time.Second, "creating "+app.Name, func() (bool, error) {
		_, err := s.env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Create(context.Background(), app, metav1.CreateOptions{})
		return err == nil, err
	})
}

// deleteAndWait deletes the application s follows and waits until every process of it ended.
func (s *lifecycle) deleteAndWait() {
	s.t.Helper()
	if err := s.env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Delete(context.Background(), s.name, metav1.DeleteOptions{}); err != nil {
		s.t.Fatal(err)
	}
	eventually(s.t, 3*time.Minute, "every process of "+s.name+" ended", func() (bool, error) {
		return s.fleet.processesOf(s.ns, s.name) == 0, nil
	})
}

func (s *lifecycle) update(edit func(*v1beta1.FlinkApplication)) {
	s.t.Helper()
	apps := s.env.Apps.FlinkV1beta1().FlinkApplications(s.ns)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		a, err := apps.Get(context.Background(), s.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(a)
		_, err = apps.Update(context.Background(), a, metav1.UpdateOptions{})
		return err
	}); err != nil {
		s.t.Fatal(err)
	}
}

func (s *lifecycle) current() *v1beta1.FlinkApplication {
	s.t.Helper()
	a, err := s.env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Get(context.Background(), s.name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return a
}

// pod names the one running pod of the role in the application's cluster of hash.
func (s *lifecycle) pod(hash, role string) string {
	s.t.Helper()
	pods, err := s.env.Kube.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: fmt.Sprintf("%s=%s,%s=%s,%s=%s", labelApp, s.name, labelAppHash, hash, labelDeploymentType, role)})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			return p.Name
		}
	}
	s.t.Fatalf("no running %s pod of %s-%s among %d", role, s.name, hash, len(pods.Items))
	return ""
}

// realNamespace creates a namespace for one scenario, where the test's hostPath volumes are allowed.
// It goes with the test, and with it whatever a failed scenario left running.
func realNamespace(t *testing.T, env *localenv.Env) string {
	t.Helper()
	ns, err := env.Kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: testkit.NamespacePrefix("real-", t.Name()),
		Annotations:  map[string]string{"flinkfsm.io/allow-host-path": "true"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// isSavepointPath tells a savepoint's path from a checkpoint's (".../chk-<n>").
func isSavepointPath(p string) bool { return !strings.Contains(p, "/chk-") }
