package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The scenarios of the job-truth design, end to end: the operator judges each job from what Flink
// says, never starts a job while another may be alive, and restores the newest state Flink completed.

// With Flink HA, deleting the JobManager Deployment ends only the JobManager process: the operator
// creates the cluster again under the same hash, whose new JobManager recovers the job from the HA
// store, and adopts it. One job id ever, no second submission, and the job continues from the
// checkpoint it completed last.
func TestDeletedJobManagerDeploymentWithHAAdoptsTheRecoveredJob(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
		checkpointing(spec)
		spec.FlinkConfig["high-availability.type"] = "kubernetes"
		spec.FlinkConfig["high-availability.storageDir"] = "file:///flink/ha"
	})
	oldJM := s.jobManager(old)
	hash, jobID := old.Status.DeployHash, old.Status.JobStatus.JobID
	s.waitCheckpoints(jobID, 2)

	bg := metav1.DeletePropagationBackground
	err := env.Kube.AppsV1().Deployments(s.ns).Delete(s.ctx, flink.JobManagerName(old, hash), metav1.DeleteOptions{PropagationPolicy: &bg})
	if err != nil {
		t.Fatal(err)
	}
	// Once the JobManager process is gone the job is suspended in the HA store: what it checkpointed
	// until then is what its recovery must continue from.
	var suspendedAt time.Time
	s.eventually("job suspended with its JobManager", func() (bool, string) {
		r := s.record(old.Name, jobID)
		for _, c := range r.States {
			if c.State == "SUSPENDED" {
				suspendedAt = c.Time
			}
		}
		return !suspendedAt.IsZero(), states(r)
	})
	var newestBefore int64
	for _, c := range checkpointsOf(jobID) {
		if c.CreatedAt.Before(suspendedAt) {
			newestBefore = max(newestBefore, c.CheckpointID)
		}
	}
	app := s.waitFor(old.Name, "Running the recovered job", func(a *v1beta1.FlinkApplication) bool {
		st := a.Status
		return st.Phase == v1beta1.PhaseRunning && st.JobStatus.State == v1beta1.JobRunning &&
			countHistory(a, v1beta1.PhaseSubmitting) > countHistory(old, v1beta1.PhaseSubmitting)
	}, inPhase(v1beta1.PhaseDeployFailed))

	if app.Status.DeployHash != hash || app.Status.JobStatus.JobID != jobID {
		t.Errorf("after the recovery: deployHash %s, job %s; want the same cluster %s and job %s",
			app.Status.DeployHash, app.Status.JobStatus.JobID, hash, jobID)
	}
	jm := s.jobManager(app)
	if jm == oldJM {
		t.Fatalf("JobManager %s was never replaced", jm.Name())
	}
	job := s.onlyJob(jm)
	s.assertRunningJob(job, 3)
	if job.ID != jobID {
		t.Errorf("the new JobManager runs job %s, want the recovered %s", job.ID, jobID)
	}
	records := s.assertJobCount(app.Name, 1)
	if records[0].JobID != jobID || !records[0].LostAt.IsZero() {
		t.Errorf("the simulator's only job is %s (lost at %v), want the recovered %s", records[0].JobID, records[0].LostAt, jobID)
	}
	restored := s.restoredCheckpoint(app, jobID)
	if snap, ok := env.Fleet.Storage().Get(restored.ExternalPath); restored.IsSavepoint || !ok || snap.JobID != jobID || restored.ID < newestBefore {
		t.Errorf("the recovered job restored checkpoint %d (%s, in storage %v); want the newest checkpoint %d job %s completed",
			restored.ID, restored.ExternalPath, ok, newestBefore, jobID)
	}
	s.assertEvent(app.Name, "RecoverDeployment")
}

// A JobManager process that restarts in its pod without HA (an OOMKill) loses the job while its
// Deployment stays: the application says the job is lost and not ready, and starts a new job on the
// same cluster from the old job's checkpoint.
func TestJobManagerRestartWithoutHARecoversTheLostJobOnTheSameCluster(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
		checkpointing(spec)
		// The operator may restore only the checkpoint it last saw in status: keep enough of them
		// that it is still retained, however far the status lags behind Flink.
		spec.FlinkConfig["state.checkpoints.num-retained"] = "10"
	})
	oldJM := s.jobManager(old)
	hash, oldJob := old.Status.DeployHash, old.Status.JobStatus.JobID
	seen := s.waitFor(old.Name, "a checkpoint in status", func(a *v1beta1.FlinkApplication) bool {
		return strings.Contains(a.Status.JobStatus.LastCheckpointPath, "/chk-")
	}, nil)

	if !env.Fleet.RestartJobManager(s.ns, old.Name+"-"+hash) {
		t.Fatalf("no JobManager is up for %s-%s", old.Name, hash)
	}
	notReady := false
	app := s.waitFor(old.Name, "Running a new job", func(a *v1beta1.FlinkApplication) bool {
		if c := meta.FindStatusCondition(a.Status.Conditions, v1beta1.ConditionReady); c != nil && c.Status == metav1.ConditionFalse {
			notReady = true
		}
		st := a.Status
		return st.Phase == v1beta1.PhaseRunning && st.JobStatus.JobID != oldJob && st.JobStatus.State == v1beta1.JobRunning
	}, inPhase(v1beta1.PhaseDeployFailed))

	if !notReady {
		t.Errorf("Ready never went False while job %s was lost", oldJob)
	}
	s.assertEvent(app.Name, "JobLost")
	if app.Status.DeployHash != hash {
		t.Errorf("the job moved to cluster %s, want it started again on %s", app.Status.DeployHash, hash)
	}
	if jm := s.jobManager(app); jm != oldJM {
		t.Errorf("JobManager %s replaced by %s; want the same one, restarted", oldJM.Name(), jm.Name())
	}
	job := s.onlyJob(oldJM)
	s.assertRunningJob(job, 3)
	if job.ID != app.Status.JobStatus.JobID || job.RestoredFrom != app.Status.JobStatus.RestorePath {
		t.Errorf("Flink runs job %s restored from %q; status says job %s from %q",
			job.ID, job.RestoredFrom, app.Status.JobStatus.JobID, app.Status.JobStatus.RestorePath)
	}
	snap, ok := env.Fleet.Storage().Get(job.RestoredFrom)
	if !ok || snap.Savepoint || snap.JobID != oldJob || !strings.Contains(job.RestoredFrom, "/chk-") {
		t.Errorf("new job restored %q (in storage %v, of job %s); want a checkpoint of %s", job.RestoredFrom, ok, snap.JobID, oldJob)
	}
	if prev, _ := env.Fleet.Storage().Get(seen.Status.JobStatus.LastCheckpointPath); snap.CheckpointID < prev.CheckpointID {
		t.Errorf("restored checkpoint %d, older than %d seen before the loss", snap.CheckpointID, prev.CheckpointID)
	}
	records := s.assertJobCount(app.Name, 2)
	if records[0].JobID != oldJob || records[0].LostAt.IsZero() {
		t.Errorf("first job %s (lost at %v), want %s lost with the JobManager process", records[0].JobID, records[0].LostAt, oldJob)
	}
}

// A savepoint usually fails because a TaskManager is not ready. When the old JobManager then also
// fails to answer about the job for a while, the job's state is unknown and nothing may start; once
// it answers again, the update cancels the old job and restores its newest checkpoint on the new
// cluster. Never two jobs.
func TestUnreadyTaskManagersAndRestErrorsDuringUpdateNeverRunTwoJobs(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", checkpointing)
	oldJM := s.jobManager(old)
	oldHash, oldJob := old.Status.DeployHash, old.Status.JobStatus.JobID
	s.waitCheckpoints(oldJob, 2)

	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	// The savepoint takes a second in the simulator. Within it, the old JobManager stops answering
	// GET /jobs/:id, and the old cluster's TaskManagers stop being ready: Flink loses their slots,
	// the job fails over and the savepoint fails with it. The operator then goes straight on to
	// cancel the job, unless it cannot see it: hence the errors first.
	s.pollUntil("savepoint triggered", 20*time.Millisecond, func() (bool, string) {
		return oldJM.SavepointTriggers() > 0, "no savepoint trigger yet"
	})
	oldJM.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointJob: 1}})
	s.setTaskManagersReady(old.Name, oldHash, false)
	s.waitFor(old.Name, "Recovering, unable to see the old job", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRecovering && a.Status.LastSeenError != nil
	}, func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseSubmitting || a.Status.Phase == v1beta1.PhaseRunning ||
			a.Status.Phase == v1beta1.PhaseDeployFailed
	})
	if j := s.jobByID(oldJM, oldJob); j.TasksRunning {
		t.Fatalf("old job %s still runs its tasks without ready TaskManagers: %s", oldJob, formatJobs([]flinksim.JobInfo{j}))
	}
	for hold := time.Now().Add(3 * time.Second); time.Now().Before(hold); time.Sleep(pollInterval) {
		if n := len(s.timeline(old.Name)); n != 1 {
			t.Fatalf("a job was started while the old job's state was unknown: %d jobs", n)
		}
		if j := s.jobByID(oldJM, oldJob); j.State == "CANCELLING" || j.State == "CANCELED" {
			t.Fatalf("old job %s %s while its state was unknown", oldJob, j.State)
		}
	}
	oldJM.SetFaults(flinksim.Faults{})
	app := s.waitRunning(old.Name, oldHash)

	if !testkit.HistoryHas(app, v1beta1.PhaseRecovering) {
		t.Errorf("no Recovering in the history: %s", testkit.Describe(app))
	}
	job := s.onlyJob(s.jobManager(app))
	s.assertRunningJob(job, 3)
	s.assertNewestCheckpointOf(job.RestoredFrom, oldJob)
	if job.RestoredFrom != app.Status.JobStatus.RestorePath {
		t.Errorf("Flink restored %q, status.jobStatus.restorePath says %q", job.RestoredFrom, app.Status.JobStatus.RestorePath)
	}
	s.assertSavepointTriggers(oldJM, 1)
	if r := s.record(app.Name, oldJob); !reached(r, "CANCELED") {
		t.Errorf("old job %s went %s, want it CANCELED", oldJob, states(r))
	}
	s.assertJobCount(app.Name, 2)
	s.waitClusterGone(app.Name, oldHash)
}

// setTaskManagersReady makes the TaskManager pods of one cluster pass or fail their readiness
// probe, as a kubelet would report it. kwok, the kubelet here, sets a pod Ready once and leaves the
// condition alone afterwards; the simulator counts only Ready TaskManagers as Flink's.
func (s *scenario) setTaskManagersReady(name, hash string, ready bool) {
	s.t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	sel := labels.SelectorFromSet(labels.Set{flinksim.LabelApp: name, flinksim.LabelAppHash: hash,
		flinksim.LabelDeploymentType: flinksim.RoleTaskManager}).String()
	pods, err := env.Kube.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil || len(pods.Items) == 0 {
		s.t.Fatalf("TaskManager pods of %s-%s: %d (err %v)", name, hash, len(pods.Items), err)
	}
	for _, p := range pods.Items {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			pod, err := env.Kube.CoreV1().Pods(s.ns).Get(s.ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for i, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
					pod.Status.Conditions[i].Status = status
					pod.Status.Conditions[i].LastTransitionTime = metav1.Now()
				}
			}
			for i := range pod.Status.ContainerStatuses {
				pod.Status.ContainerStatuses[i].Ready = ready
			}
			_, err = env.Kube.CoreV1().Pods(s.ns).UpdateStatus(s.ctx, pod, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			s.t.Fatalf("setting pod %s ready=%v: %v", p.Name, ready, err)
		}
	}
}

// assertEvent checks that the operator emitted an Event with this reason about the application.
func (s *scenario) assertEvent(name, reason string) {
	s.t.Helper()
	var reasons []string
	for _, e := range s.events(name) {
		if e.Reason == reason {
			return
		}
		reasons = append(reasons, e.Reason)
	}
	s.t.Errorf("no %s Event about %s; events: %s", reason, name, strings.Join(reasons, ", "))
}

// restoredCheckpoint is what Flink's REST API says a job last restored from
// (GET /jobs/:id/checkpoints, latest.restored): the place a JobManager reports HA recovery.
func (s *scenario) restoredCheckpoint(app *v1beta1.FlinkApplication, jobID string) restoredCheckpoint {
	s.t.Helper()
	url := fmt.Sprintf("%s/%s/%s/jobs/%s/checkpoints", env.FlinkURL, s.ns, flink.VersionedServiceName(app, app.Status.DeployHash), jobID)
	resp, err := http.Get(url)
	if err != nil {
		s.t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var stats struct {
		Latest struct {
			Restored *restoredCheckpoint `json:"restored"`
		} `json:"latest"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil || resp.StatusCode != http.StatusOK {
		s.t.Fatalf("GET %s: %s (%v)", url, resp.Status, err)
	}
	if stats.Latest.Restored == nil {
		s.t.Fatalf("job %s restored nothing", jobID)
	}
	return *stats.Latest.Restored
}

type restoredCheckpoint struct {
	ID           int64  `json:"id"`
	IsSavepoint  bool   `json:"is_savepoint"`
	ExternalPath string `json:"external_path"`
}
