package realflink

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// With Kubernetes HA on a session cluster, a session job's JobManager process killed is replaced by
// one that recovers the job under the same id, from its newest checkpoint, and never runs a second
// job beside it; the operator follows that job and submits nothing. On 2.3 the job (run with a job
// id through /jars/:jarid/run) is an application of the same id, before and after.
//
// This is what the operator assumes of Flink (docs/job-lifecycle.md#flink-23-applications) and what
// integ/flinksim does by default: a job its JobManager does not know is gone only when its
// application is over or unknown too, and nothing is submitted while an application of the owner's
// runs. The test logs each answer the takeover gave, so that a change of Flink's shows.
func TestASessionJobIsRecoveredUnderItsOwnIDWhenItsJobManagerIsKilledUnderHA(t *testing.T) {
	env, fleet, releases := operatorOnRealFlink(t)
	for _, r := range releases {
		t.Run(r.name, func(t *testing.T) { haSessionJob(t, env, fleet, r) })
	}
}

func haSessionJob(t *testing.T, env *localenv.Env, fleet *Fleet, r realRelease) {
	ctx := context.Background()
	ns := realNamespace(t, env)
	api := client.New(client.DefaultConfig(), nil)
	app := lyftManifest(t, ns, r, t.TempDir())
	app.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
	app.Spec.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/flink/ha"
	one := int32(1)
	cluster := &v1beta1.FlinkSessionCluster{ObjectMeta: metav1.ObjectMeta{Name: "ha-session", Namespace: ns},
		Spec: v1beta1.FlinkSessionClusterSpec{ClusterSpec: app.Spec.ClusterSpec,
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{TaskManagerConfig: app.Spec.TaskManagerConfig, Replicas: &one}}}
	eventually(t, 30*time.Second, "creating the session cluster", func() (bool, error) {
		_, err := env.Apps.FlinkV1beta1().FlinkSessionClusters(ns).Create(ctx, cluster, metav1.CreateOptions{})
		return err == nil, err
	})
	out := t.TempDir()
	sj := &v1beta1.FlinkSessionJob{ObjectMeta: metav1.ObjectMeta{Name: "recovered", Namespace: ns},
		Spec: v1beta1.FlinkSessionJobSpec{ClusterName: cluster.Name,
			Job: v1beta1.JobSpec{JarURI: "local://" + lyftJar, EntryClass: testJobClass, Parallelism: &one,
				Args: []string{"--out", out, "--keys", strconv.Itoa(testKeys), "--rate", "200"}}}}
	if _, err := env.Apps.FlinkV1beta1().FlinkSessionJobs(ns).Create(ctx, sj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running := awaitSessionJob(t, env, ns, sj.Name, "Running", func(j *v1beta1.FlinkSessionJob) bool {
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.State == v1beta1.JobRunning
	})
	id := running.Status.JobStatus.JobID
	hash := clusterHashOf(t, env, ns, cluster.Name)
	service := cluster.Name + "-" + hash
	url := fleet.JobManagerURL(ns, service)
	eventually(t, 2*time.Minute, "three checkpoints of job "+id, func() (bool, error) {
		st, err := api.GetCheckpoints(ctx, url, id)
		return err == nil && st.Counts.Completed >= 3, err
	})
	major, minor := majorMinor(r.dist.Version)
	applications := major > 2 || major == 2 && minor >= 3
	if applications {
		a, err := api.GetApplication(ctx, url, id)
		if err != nil || a.ID != id || len(a.Jobs) != 1 || a.Jobs[0].ID != id {
			t.Errorf("before the takeover, application %s is %+v (%v); want one of the same id holding job %s", id, a, err, id)
		}
	}

	s := &lifecycle{t: t, env: env, fleet: fleet, ns: ns, name: cluster.Name}
	jm := s.pod(hash, roleJobManager)
	if !fleet.Kill(ns, jm) {
		t.Fatalf("JobManager %s had no process to kill", jm)
	}
	// Every answer of the JobManager that takes over, until the job runs again from a checkpoint.
	var answers []string
	note := func(a string) {
		if len(answers) == 0 || answers[len(answers)-1] != a {
			answers = append(answers, a)
		}
	}
	var restored *client.RestoredCheckpoint
	eventually(t, 4*time.Minute, "job "+id+" recovered under HA", func() (bool, error) {
		u := fleet.JobManagerURL(ns, service)
		if u == "" {
			note("no JobManager up")
			return false, nil
		}
		listed, err := api.GetJobs(ctx, u)
		if err != nil {
			note("GET /jobs: " + firstLine(err))
			return false, nil
		}
		for _, j := range listed {
			if j.ID != id {
				t.Fatalf("the JobManager that took over lists job %s (%s) beside %s: two jobs", j.ID, j.Status, id)
			}
		}
		job, err := api.GetJob(ctx, u, id)
		if err != nil {
			note(fmt.Sprintf("%d jobs listed; GET /jobs/%s: %s", len(listed), id, firstLine(err)))
			return false, nil
		}
		if applications {
			if a, err := api.GetApplication(ctx, u, id); err != nil {
				note(fmt.Sprintf("job %s; GET /applications/%s: %s", job.State, id, firstLine(err)))
			} else {
				note(fmt.Sprintf("job %s; application %s %s with %d jobs", job.State, a.ID, a.Status, len(a.Jobs)))
			}
		} else {
			note("job " + job.State)
		}
		if job.State != client.JobRunning {
			return false, nil
		}
		st, err := api.GetCheckpoints(ctx, u, id)
		if err != nil {
			return false, nil
		}
		restored = st.Latest.Restored
		return restored != nil && st.Latest.Completed != nil && st.Latest.Completed.ID > restored.ID, nil
	})
	t.Logf("Flink %s: the takeover answered, in order: %s", r.dist.Version, strings.Join(answers, " | "))
	if isSavepointPath(restored.ExternalPath) {
		t.Errorf("job %s recovered from savepoint %s; want its newest checkpoint", id, restored.ExternalPath)
	}
	got := currentSessionJob(t, env, ns, sj.Name)
	if got.Status.JobStatus.JobID != id || got.Status.Phase != v1beta1.SessionJobRunning {
		t.Errorf("after the takeover the session job is %s with job %s; want Running job %s", got.Status.Phase, got.Status.JobStatus.JobID, id)
	}
	o, err := ReadJobOutput(out, id)
	if err != nil {
		t.Fatal(err)
	}
	check(t, o.CheckCounts(testKeys))

	if err := env.Apps.FlinkV1beta1().FlinkSessionJobs(ns).Delete(ctx, sj.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.Apps.FlinkV1beta1().FlinkSessionClusters(ns).Delete(ctx, cluster.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "every process of the session cluster ended", func() (bool, error) {
		return fleet.processesOf(ns, cluster.Name) == 0, nil
	})
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 160 {
		s = s[:160]
	}
	return s
}
