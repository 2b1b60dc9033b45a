package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// Session clusters and session jobs on the local cluster: jars served from a loopback HTTP server
// (the only private address the environment's operator config allows), uploaded to the simulated
// JobManager and run there.

// sessionJar is the jar the loopback server serves.
var sessionJar = []byte("PK\x03\x04 wordcount, as the simulator sees it")

func sessionJarSHA256() string {
	sum := sha256.Sum256(sessionJar)
	return hex.EncodeToString(sum[:])
}

// jarServer serves sessionJar at /wordcount.jar on 127.0.0.1 for the test's lifetime.
func (s *scenario) jarServer() string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/wordcount.jar" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(sessionJar)
	}))
	s.t.Cleanup(srv.Close)
	return srv.URL + "/wordcount.jar"
}

// createSessionCluster creates a session cluster of two TaskManagers with two slots each, its jobs
// checkpointing every second and keeping three checkpoints.
func (s *scenario) createSessionCluster(name string, edit func(*v1beta1.FlinkSessionClusterSpec)) {
	s.t.Helper()
	small := &corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}
	slots, tms := int32(2), int32(2)
	c := &v1beta1.FlinkSessionCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: v1beta1.FlinkSessionClusterSpec{
			ClusterSpec: v1beta1.ClusterSpec{
				Image: testImage, FlinkVersion: "1.20",
				FlinkConfig: v1beta1.FlinkConfig{
					"state.savepoints.dir":             "file:///flink/savepoints",
					"state.checkpoints.dir":            "file:///flink/checkpoints",
					"execution.checkpointing.interval": "1s",
					"state.checkpoints.num-retained":   "3",
				},
				JobManagerConfig: v1beta1.JobManagerConfig{Resources: small},
			},
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{
				TaskManagerConfig: v1beta1.TaskManagerConfig{Resources: small, TaskSlots: &slots}, Replicas: &tms},
		}}
	if edit != nil {
		edit(&c.Spec)
	}
	if _, err := env.Apps.FlinkV1beta1().FlinkSessionClusters(s.ns).Create(s.ctx, c, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("creating FlinkSessionCluster %s: %v", name, err)
	}
}

// createSessionJob creates a session job of parallelism 1 on the cluster; its jobs are checked for
// overlaps when the test ends.
func (s *scenario) createSessionJob(name, cluster, jarURI string, mode v1beta1.UpgradeMode, edit func(*v1beta1.FlinkSessionJobSpec)) {
	s.t.Helper()
	one := int32(1)
	j := &v1beta1.FlinkSessionJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: v1beta1.FlinkSessionJobSpec{ClusterName: cluster, DeleteMode: v1beta1.DeleteModeSavepoint,
			Job: v1beta1.JobSpec{JarURI: jarURI, EntryClass: "org.apache.flink.WordCount", Args: []string{"--input", "a b"},
				Parallelism: &one, UpgradeMode: mode}}}
	if edit != nil {
		edit(&j.Spec)
	}
	if _, err := env.Apps.FlinkV1beta1().FlinkSessionJobs(s.ns).Create(s.ctx, j, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("creating FlinkSessionJob %s: %v", name, err)
	}
	s.t.Cleanup(func() { s.assertSessionJobAlone(cluster, name) })
}

func (s *scenario) sessionJob(name string) *v1beta1.FlinkSessionJob {
	s.t.Helper()
	j, err := env.Apps.FlinkV1beta1().FlinkSessionJobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("getting FlinkSessionJob %s: %v", name, err)
	}
	return j
}

func (s *scenario) sessionCluster(name string) *v1beta1.FlinkSessionCluster {
	s.t.Helper()
	c, err := env.Apps.FlinkV1beta1().FlinkSessionClusters(s.ns).Get(s.ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("getting FlinkSessionCluster %s: %v", name, err)
	}
	return c
}

func (s *scenario) updateSessionJob(name string, edit func(*v1beta1.FlinkSessionJobSpec)) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		j, err := env.Apps.FlinkV1beta1().FlinkSessionJobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(&j.Spec)
		_, err = env.Apps.FlinkV1beta1().FlinkSessionJobs(s.ns).Update(s.ctx, j, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("updating FlinkSessionJob %s: %v", name, err)
	}
}

func (s *scenario) updateSessionCluster(name string, edit func(*v1beta1.FlinkSessionClusterSpec)) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := env.Apps.FlinkV1beta1().FlinkSessionClusters(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(&c.Spec)
		_, err = env.Apps.FlinkV1beta1().FlinkSessionClusters(s.ns).Update(s.ctx, c, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("updating FlinkSessionCluster %s: %v", name, err)
	}
}

// waitSessionJob polls the session job until done holds.
func (s *scenario) waitSessionJob(name, what string, done func(*v1beta1.FlinkSessionJob) bool) *v1beta1.FlinkSessionJob {
	s.t.Helper()
	var last *v1beta1.FlinkSessionJob
	s.eventually(name+" "+what, func() (bool, string) {
		j, err := env.Apps.FlinkV1beta1().FlinkSessionJobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		last = j
		return done(j), describeSessionJob(j)
	})
	return last
}

// sessionJobRuns waits until the session job's job runs and differs from notJob.
func (s *scenario) sessionJobRuns(name, notJob string) *v1beta1.FlinkSessionJob {
	s.t.Helper()
	return s.waitSessionJob(name, "running a job other than "+notJob, func(j *v1beta1.FlinkSessionJob) bool {
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.State == v1beta1.JobRunning &&
			j.Status.JobStatus.JobID != "" && j.Status.JobStatus.JobID != notJob
	})
}

func describeSessionJob(j *v1beta1.FlinkSessionJob) string {
	out := fmt.Sprintf("phase %s, reason %q, job %s %s", j.Status.Phase, j.Status.Reason, j.Status.JobStatus.JobID, j.Status.JobStatus.State)
	for _, h := range j.Status.History {
		out += fmt.Sprintf(" [%s>%s %s]", h.From, h.To, h.Reason)
	}
	return out
}

// sessionJobsOf are the simulator's records of a session job's jobs on its cluster: those whose ids
// carry the session job's name (jobs.Owner), of this object or an earlier one of the same name.
func (s *scenario) sessionJobsOf(cluster, name string) []flinksim.JobRecord {
	owner := jobs.Owner{Name: "FlinkSessionJob/" + s.ns + "/" + name}
	var out []flinksim.JobRecord
	for _, r := range env.Fleet.Timeline().Jobs(s.appKey(cluster)) {
		if owner.Named(r.JobID) {
			out = append(out, r)
		}
	}
	return out
}

// assertSessionJobAlone checks that no two jobs of the session job were ever alive at once.
func (s *scenario) assertSessionJobAlone(cluster, name string) {
	for _, o := range flinksim.Overlapping(s.sessionJobsOf(cluster, name)) {
		s.t.Errorf("FlinkSessionJob %s: jobs %s and %s were alive together from %s to %v",
			name, o.First.JobID, o.Second.JobID, o.From.Format("15:04:05.000"), o.To)
	}
}

// Two session jobs on one session cluster: each upgrades in its own mode from the right state, the
// other is untouched, and a change of the cluster carries both across with their state, on the
// oldest and the newest Flink release.
func TestSessionJobsUpgradeAloneAndMoveWithTheirCluster(t *testing.T) {
	for _, version := range coreVersions {
		t.Run(version, func(t *testing.T) { sessionJobsUpgradeAloneAndMove(t, version) })
	}
}

func sessionJobsUpgradeAloneAndMove(t *testing.T, version string) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	jar := s.jarServer()
	s.createSessionCluster("shared", func(spec *v1beta1.FlinkSessionClusterSpec) { onFlink(version, &spec.ClusterSpec) })
	s.createSessionJob("a", "shared", jar, v1beta1.UpgradeModeSavepoint, func(j *v1beta1.FlinkSessionJobSpec) {
		j.Job.JarSHA256 = sessionJarSHA256()
	})
	s.createSessionJob("b", "shared", jar, v1beta1.UpgradeModeLastState, nil)
	a, b := s.sessionJobRuns("a", ""), s.sessionJobRuns("b", "")
	c := s.sessionCluster("shared")
	jm := env.Fleet.JobManager(s.ns, "shared-"+c.Status.DeployHash)
	if jm == nil {
		t.Fatalf("no JobManager for shared-%s", c.Status.DeployHash)
	}
	if n := len(jm.Jobs()); n != 2 {
		t.Errorf("the session cluster runs %d jobs, want 2", n)
	}
	if jars := jm.UploadedJars(); len(jars) != 0 {
		t.Errorf("uploaded jars left after their jobs ran: %v", jars)
	}
	s.waitCheckpoints(b.Status.JobStatus.JobID, 2)

	// Savepoint: a's new job starts from the savepoint of its old one; b is untouched.
	s.updateSessionJob("a", func(j *v1beta1.FlinkSessionJobSpec) { j.Job.Args = []string{"--input", "c d"} })
	a2 := s.sessionJobRuns("a", a.Status.JobStatus.JobID)
	s.assertSavepointOf(a2.Status.JobStatus.RestorePath, a.Status.JobStatus.JobID)
	if got := s.sessionJob("b").Status.JobStatus; got.JobID != b.Status.JobStatus.JobID || got.JobRestartCount != b.Status.JobStatus.JobRestartCount {
		t.Errorf("b was touched by a's update: job %s restarts %d, was %s restarts %d", got.JobID, got.JobRestartCount,
			b.Status.JobStatus.JobID, b.Status.JobStatus.JobRestartCount)
	}

	// LastState: b is cancelled and its new job restores its newest retained checkpoint; a is untouched.
	s.updateSessionJob("b", func(j *v1beta1.FlinkSessionJobSpec) { j.Job.Args = []string{"--input", "e f"} })
	b2 := s.sessionJobRuns("b", b.Status.JobStatus.JobID)
	s.assertNewestCheckpointOf(b2.Status.JobStatus.RestorePath, b.Status.JobStatus.JobID)
	if got := s.sessionJob("a").Status.JobStatus.JobID; got != a2.Status.JobStatus.JobID {
		t.Errorf("a was touched by b's update: job %s, was %s", got, a2.Status.JobStatus.JobID)
	}

	// A change of the cluster: a new Flink cluster beside the old one, each job moved per its mode.
	s.waitCheckpoints(b2.Status.JobStatus.JobID, 2)
	old := c.Status.DeployHash
	s.updateSessionCluster("shared", func(spec *v1beta1.FlinkSessionClusterSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	moved := func(name string) *v1beta1.FlinkSessionJob {
		return s.waitSessionJob(name, "moved to the new cluster", func(j *v1beta1.FlinkSessionJob) bool {
			return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.State == v1beta1.JobRunning &&
				j.Status.JobStatus.ClusterHash != "" && j.Status.JobStatus.ClusterHash != old
		})
	}
	a3, b3 := moved("a"), moved("b")
	s.assertSavepointOf(a3.Status.JobStatus.RestorePath, a2.Status.JobStatus.JobID)
	s.assertNewestCheckpointOf(b3.Status.JobStatus.RestorePath, b2.Status.JobStatus.JobID)
	s.eventually("old Flink cluster deleted", func() (bool, string) {
		_, err := env.Kube.AppsV1().Deployments(s.ns).Get(s.ctx, "shared-"+old+"-jm", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("shared-%s-jm: %v", old, err)
	})
	if n := len(s.sessionJobsOf("shared", "a")); n != 3 {
		t.Errorf("a ran %d jobs, want 3 (first, updated, moved)", n)
	}
}

// Suspend and resume one job; deleting a job records its final savepoint; deleting the cluster while
// a job names it is held, and completes once the job is gone.
func TestSessionJobSuspendResumeAndDeletes(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	jar := s.jarServer()
	s.createSessionCluster("shared", nil)
	s.createSessionJob("a", "shared", jar, v1beta1.UpgradeModeSavepoint, nil)
	s.createSessionJob("b", "shared", jar, v1beta1.UpgradeModeSavepoint, nil)
	a := s.sessionJobRuns("a", "")
	b := s.sessionJobRuns("b", "")

	// kubectl flink savepoint takes a savepoint of a session job, which keeps running.
	manual := strings.TrimSpace(s.pluginOK("savepoint", "sessionjob/b", "--timeout", "60s"))
	s.assertSavepointOf(manual, b.Status.JobStatus.JobID)
	if j := s.sessionJob("b"); j.Status.JobStatus.JobID != b.Status.JobStatus.JobID || len(j.Status.Savepoints) != 1 {
		t.Errorf("after kubectl flink savepoint: %s, savepoints %+v; want b running on and one savepoint recorded",
			describeSessionJob(j), j.Status.Savepoints)
	}
	if out := s.pluginOK("status", "sessionjob/b"); !strings.Contains(out, b.Status.JobStatus.JobID) {
		t.Errorf("kubectl flink status sessionjob/b does not name its job:\n%s", out)
	}

	s.updateSessionJob("a", func(j *v1beta1.FlinkSessionJobSpec) { j.Job.State = v1beta1.JobStateSuspended })
	suspended := s.waitSessionJob("a", "suspended", func(j *v1beta1.FlinkSessionJob) bool {
		return j.Status.Phase == v1beta1.SessionJobSuspended
	})
	s.assertSavepointOf(suspended.Status.SavepointPath, a.Status.JobStatus.JobID)
	s.updateSessionJob("a", func(j *v1beta1.FlinkSessionJobSpec) { j.Job.State = v1beta1.JobStateRunning })
	resumed := s.sessionJobRuns("a", a.Status.JobStatus.JobID)
	if resumed.Status.JobStatus.RestorePath != suspended.Status.SavepointPath {
		t.Errorf("resumed from %q, want the suspend's savepoint %q", resumed.Status.JobStatus.RestorePath, suspended.Status.SavepointPath)
	}
	if got := s.sessionJob("b").Status.JobStatus.JobID; got != b.Status.JobStatus.JobID {
		t.Errorf("b was touched by a's suspend and resume")
	}

	// Deleting a job stops it with a final savepoint.
	if err := env.Apps.FlinkV1beta1().FlinkSessionJobs(s.ns).Delete(s.ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.eventually("a deleted", func() (bool, string) {
		_, err := env.Apps.FlinkV1beta1().FlinkSessionJobs(s.ns).Get(s.ctx, "a", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if savepoints := savepointsOf(resumed.Status.JobStatus.JobID); len(savepoints) != 1 {
		t.Errorf("a's last job has %d savepoints, want its final one", len(savepoints))
	}

	// The cluster's deletion is held while b names it.
	if err := env.Apps.FlinkV1beta1().FlinkSessionClusters(s.ns).Delete(s.ctx, "shared", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.eventually("cluster deletion held", func() (bool, string) {
		c := s.sessionCluster("shared")
		return c.Status.Phase == v1beta1.SessionClusterDeleting && strings.Contains(c.Status.Reason, "b"), c.Status.Reason
	})
	if j := s.sessionJob("b"); j.Status.Phase != v1beta1.SessionJobRunning || j.Status.JobStatus.JobID != b.Status.JobStatus.JobID {
		t.Errorf("b stopped while the cluster's deletion waited: %s", describeSessionJob(j))
	}
	if err := env.Apps.FlinkV1beta1().FlinkSessionJobs(s.ns).Delete(s.ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.eventually("b and the cluster deleted", func() (bool, string) {
		_, errJob := env.Apps.FlinkV1beta1().FlinkSessionJobs(s.ns).Get(s.ctx, "b", metav1.GetOptions{})
		_, errCluster := env.Apps.FlinkV1beta1().FlinkSessionClusters(s.ns).Get(s.ctx, "shared", metav1.GetOptions{})
		return apierrors.IsNotFound(errJob) && apierrors.IsNotFound(errCluster), fmt.Sprint(errJob, errCluster)
	})
	if savepoints := savepointsOf(b.Status.JobStatus.JobID); len(savepoints) != 2 {
		t.Errorf("b's job has %d savepoints, want the one kubectl flink took and its final one", len(savepoints))
	}
}

// A jarURI to a private address is refused by the default policy (the environment allows only
// 127.0.0.1), as is a jar whose SHA-256 differs; neither leaves a job running.
func TestSessionJobJarGuards(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	jar := s.jarServer()
	s.createSessionCluster("shared", nil)
	s.createSessionJob("private", "shared", "http://10.0.0.1/wordcount.jar", v1beta1.UpgradeModeSavepoint, nil)
	s.createSessionJob("wrongsum", "shared", jar, v1beta1.UpgradeModeSavepoint, func(j *v1beta1.FlinkSessionJobSpec) {
		j.Job.JarSHA256 = strings.Repeat("0", 64)
	})
	for name, want := range map[string]string{"private": "10.0.0.1", "wrongsum": "SHA-256"} {
		j := s.waitSessionJob(name, "refused", func(j *v1beta1.FlinkSessionJob) bool {
			return j.Status.Phase == v1beta1.SessionJobDeployFailed
		})
		if !strings.Contains(j.Status.Reason, want) {
			t.Errorf("%s: reason %q does not name %q", name, j.Status.Reason, want)
		}
		if n := len(s.sessionJobsOf("shared", name)); n != 0 {
			t.Errorf("%s: %d jobs ran from a refused jar", name, n)
		}
	}
}

// An operator killed with SIGKILL at every step of two session jobs' lives (each time a job's phase
// or records change: upload recorded, job id recorded, submission, savepoint trigger, cancel,
// restore chosen) comes back each time and carries on: one job per step of each session job, never
// two of one at once, each restored from the state its step promises.
func TestSessionJobsSurviveTheOperatorKilledAtEveryStep(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel: the other tests would lose their operator too.
	s := newScenario(t)
	t.Cleanup(func() { _ = env.StartOperator() })
	jar := s.jarServer()
	s.createSessionCluster("shared", nil)
	s.createSessionJob("a", "shared", jar, v1beta1.UpgradeModeSavepoint, nil)
	s.createSessionJob("b", "shared", jar, v1beta1.UpgradeModeLastState, nil)

	kills := s.killOperatorOnEveryStep("a", "b")
	a := s.sessionJobRuns("a", "")
	b := s.sessionJobRuns("b", "")
	s.waitCheckpoints(b.Status.JobStatus.JobID, 2)
	s.updateSessionJob("a", func(j *v1beta1.FlinkSessionJobSpec) { j.Job.Args = []string{"--input", "c"} })
	a2 := s.sessionJobRuns("a", a.Status.JobStatus.JobID)
	s.updateSessionJob("b", func(j *v1beta1.FlinkSessionJobSpec) { j.Job.Args = []string{"--input", "d"} })
	b2 := s.sessionJobRuns("b", b.Status.JobStatus.JobID)
	n := kills()

	s.assertSavepointOf(a2.Status.JobStatus.RestorePath, a.Status.JobStatus.JobID)
	if !strings.Contains(b2.Status.JobStatus.RestorePath, "/chk-") {
		t.Errorf("b restored from %q, want a retained checkpoint of %s", b2.Status.JobStatus.RestorePath, b.Status.JobStatus.JobID)
	}
	if got := len(s.sessionJobsOf("shared", "a")); got != 2 {
		t.Errorf("a ran %d jobs, want 2 (first, updated)", got)
	}
	if got := len(s.sessionJobsOf("shared", "b")); got != 2 {
		t.Errorf("b ran %d jobs, want 2 (first, updated)", got)
	}
	if n < 8 {
		t.Errorf("the operator was killed %d times, want one at each of at least 8 steps", n)
	}
	t.Logf("operator killed %d times", n)
}

// killOperatorOnEveryStep watches the session jobs and, each time one's phase or records change,
// kills the operator with SIGKILL and starts it again. The returned func stops watching and says
// how many kills there were.
func (s *scenario) killOperatorOnEveryStep(names ...string) func() int {
	stop, done := make(chan struct{}), make(chan int)
	seen := map[string]string{}
	go func() {
		kills := 0
		defer func() { done <- kills }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			for _, name := range names {
				j, err := env.Apps.FlinkV1beta1().FlinkSessionJobs(s.ns).Get(s.ctx, name, metav1.GetOptions{})
				if err != nil {
					continue
				}
				records, _ := json.Marshal(j.Status.Deployments)
				step := string(j.Status.Phase) + " " + string(records)
				if prev, ok := seen[name]; ok && prev != step {
					env.KillOperator()
					kills++
					if err := env.StartOperator(); err != nil {
						s.t.Errorf("restarting the operator: %v", err)
						return
					}
				}
				seen[name] = step
			}
		}
	}()
	return func() int {
		close(stop)
		return <-done
	}
}

// Deleting the namespace of a session cluster and its jobs completes: the jobs stop per their
// deleteMode while their JobManager is there, or are found stopped once it is gone, and the
// cluster's deletion is released when they are.
func TestDeletingTheNamespaceOfASessionClusterCompletes(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	jar := s.jarServer()
	s.createSessionCluster("shared", nil)
	s.createSessionJob("a", "shared", jar, v1beta1.UpgradeModeSavepoint, nil)
	s.createSessionJob("b", "shared", jar, v1beta1.UpgradeModeLastState, func(j *v1beta1.FlinkSessionJobSpec) {
		j.DeleteMode = v1beta1.DeleteModeForceCancel
	})
	s.sessionJobRuns("a", "")
	s.sessionJobRuns("b", "")
	if err := env.Kube.CoreV1().Namespaces().Delete(s.ctx, s.ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.eventually("namespace deleted", func() (bool, string) {
		ns, err := env.Kube.CoreV1().Namespaces().Get(s.ctx, s.ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("%s: %+v", ns.Status.Phase, ns.Status.Conditions)
	})
}
