package realflink

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Two session jobs share one real Flink session cluster: one whose jar the operator fetches over
// HTTP and uploads (POST /jars/upload), one whose jar the cluster's image already holds (local://).
// Upgrading the first with a savepoint moves it to a new job with exactly its state and leaves the
// second job as it was; deleting the first takes its final savepoint and cancels it alone.
func TestTwoSessionJobsShareARealFlinkSessionClusterAndMoveAlone(t *testing.T) {
	env, fleet, releases := operatorOnRealFlink(t)
	for _, r := range releases {
		t.Run(r.name, func(t *testing.T) { twoSessionJobs(t, env, fleet, r) })
	}
}

func twoSessionJobs(t *testing.T, env *localenv.Env, fleet *Fleet, r realRelease) {
	ctx := context.Background()
	began := time.Now()
	ns := realNamespace(t, env)
	api := client.New(client.DefaultConfig(), nil)
	jarURL := serveTestJob(t, r)

	app := lyftManifest(t, ns, r, t.TempDir())
	two := int32(2)
	cluster := &v1beta1.FlinkSessionCluster{ObjectMeta: metav1.ObjectMeta{Name: "session", Namespace: ns},
		Spec: v1beta1.FlinkSessionClusterSpec{ClusterSpec: app.Spec.ClusterSpec,
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{TaskManagerConfig: app.Spec.TaskManagerConfig, Replicas: &two}}}
	clusters := env.Apps.FlinkV1beta1().FlinkSessionClusters(ns)
	eventually(t, 30*time.Second, "creating the session cluster", func() (bool, error) {
		_, err := clusters.Create(ctx, cluster, metav1.CreateOptions{})
		return err == nil, err
	})

	outUploaded, outLocal := t.TempDir(), t.TempDir()
	one := int32(1)
	jobs := env.Apps.FlinkV1beta1().FlinkSessionJobs(ns)
	for _, j := range []struct{ name, jar, out string }{
		{"uploaded", jarURL, outUploaded},
		{"local", "local://" + lyftJar, outLocal},
	} {
		sj := &v1beta1.FlinkSessionJob{ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: ns},
			Spec: v1beta1.FlinkSessionJobSpec{ClusterName: cluster.Name, DeleteMode: v1beta1.DeleteModeSavepoint,
				Job: v1beta1.JobSpec{JarURI: j.jar, EntryClass: testJobClass, Parallelism: &one,
					Args: []string{"--out", j.out, "--keys", strconv.Itoa(testKeys), "--rate", "200"}}}}
		if _, err := jobs.Create(ctx, sj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating session job %s: %v", j.name, err)
		}
	}
	first := awaitSessionJob(t, env, ns, "uploaded", "Running", func(j *v1beta1.FlinkSessionJob) bool {
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.State == v1beta1.JobRunning
	})
	local := awaitSessionJob(t, env, ns, "local", "Running", func(j *v1beta1.FlinkSessionJob) bool {
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.State == v1beta1.JobRunning
	})
	hash := clusterHashOf(t, env, ns, cluster.Name)
	url := fleet.JobManagerURL(ns, cluster.Name+"-"+hash)
	firstID, localID := first.Status.JobStatus.JobID, local.Status.JobStatus.JobID
	for _, id := range []string{firstID, localID} {
		eventually(t, 2*time.Minute, "two checkpoints of job "+id, func() (bool, error) {
			st, err := api.GetCheckpoints(ctx, url, id)
			return err == nil && st.Counts.Completed >= 2, err
		})
	}

	// The uploaded job's upgrade: a savepoint, then a new job on the same cluster from it.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		j, err := jobs.Get(ctx, "uploaded", metav1.GetOptions{})
		if err != nil {
			return err
		}
		j.Spec.Job.Parallelism = &two
		_, err = jobs.Update(ctx, j, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	upgraded := awaitSessionJob(t, env, ns, "uploaded", "Running a new job", func(j *v1beta1.FlinkSessionJob) bool {
		return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.State == v1beta1.JobRunning &&
			j.Status.JobStatus.JobID != "" && j.Status.JobStatus.JobID != firstID
	})
	second := upgraded.Status.JobStatus.JobID
	restored, later := awaitCheckpointAfterRestore(t, api, url, second)
	// Flink says is_savepoint for any path a job was submitted with: the path tells which it was.
	if !isSavepointPath(restored.ExternalPath) {
		t.Errorf("job %s restored %+v, want a savepoint", second, restored)
	}
	before, err := ReadJobOutput(outUploaded, firstID)
	if err != nil {
		t.Fatal(err)
	}
	resume, ok := before.ResumePosition(restored.ID)
	if !ok {
		t.Fatalf("job %s wrote no position for savepoint %d", firstID, restored.ID)
	}
	after, err := ReadJobOutput(outUploaded, second)
	if err != nil {
		t.Fatal(err)
	}
	upTo, _ := after.ResumePosition(later.ID)
	check(t, before.CheckCounts(testKeys), after.CheckCounts(testKeys), after.CheckExactlyFrom(resume, upTo))

	// The other job ran on untouched: the same job, one attempt, every number once.
	job, err := api.GetJob(ctx, url, localID)
	if err != nil || job.State != client.JobRunning {
		t.Fatalf("job %s of the local jar: %+v, %v; want it RUNNING still", localID, job, err)
	}
	if got := currentSessionJob(t, env, ns, "local").Status.JobStatus.JobID; got != localID {
		t.Errorf("session job local runs %s, want %s still", got, localID)
	}
	o, err := ReadJobOutput(outLocal, localID)
	if err != nil {
		t.Fatal(err)
	}
	check(t, o.CheckCounts(testKeys), o.CheckExactlyFrom(0, o.HighestCounted()-1))

	// Deleting the uploaded job: a final savepoint and its job ends; the other job still runs.
	if err := jobs.Delete(ctx, "uploaded", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "session job uploaded deleted", func() (bool, error) {
		_, err := jobs.Get(ctx, "uploaded", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	gone, err := api.GetJob(ctx, url, second)
	if err != nil || (gone.State != client.JobFinished && gone.State != client.JobCanceled) {
		t.Errorf("job %s after its session job was deleted: %+v, %v; want it FINISHED (stopped with a savepoint) or CANCELED", second, gone, err)
	}
	if job, err := api.GetJob(ctx, url, localID); err != nil || job.State != client.JobRunning {
		t.Errorf("job %s of the local jar after the other was deleted: %+v, %v; want it RUNNING", localID, job, err)
	}
	savepoints, _ := filepath.Glob(filepath.Join(fleet.opts.Dir, "hostpath", "*", "flink", "savepoints", "savepoint-*"))
	t.Logf("Flink %s: two session jobs, an upgrade and a delete in %s; savepoints on the node: %d; %s",
		r.dist.Version, time.Since(began).Round(time.Second), len(savepoints), fleet.Memory())

	if err := jobs.Delete(ctx, "local", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "session job local deleted", func() (bool, error) {
		_, err := jobs.Get(ctx, "local", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err := clusters.Delete(ctx, cluster.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "every process of the session cluster ended", func() (bool, error) {
		return fleet.processesOf(ns, cluster.Name) == 0, nil
	})
}

// serveTestJob serves the release's test job jar over HTTP on loopback, where the local
// environment's operator may fetch jars from, and returns its URL.
func serveTestJob(t *testing.T, r realRelease) string {
	t.Helper()
	jar, err := r.dist.TestJobJar()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { http.ServeFile(w, req, jar) }),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return fmt.Sprintf("http://%s/flinkfsm-test-job.jar", l.Addr())
}

func awaitSessionJob(t *testing.T, env *localenv.Env, ns, name, what string, done func(*v1beta1.FlinkSessionJob) bool) *v1beta1.FlinkSessionJob {
	t.Helper()
	var got *v1beta1.FlinkSessionJob
	eventually(t, 4*time.Minute, "session job "+name+" "+what, func() (bool, error) {
		j, err := env.Apps.FlinkV1beta1().FlinkSessionJobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = j
		if j.Status.Phase == v1beta1.SessionJobDeployFailed {
			t.Fatalf("session job %s failed to deploy: %s", name, j.Status.Reason)
		}
		return done(j), fmt.Errorf("phase %s, job %s %s, reason %q", j.Status.Phase, j.Status.JobStatus.JobID, j.Status.JobStatus.State, j.Status.Reason)
	})
	return got
}

func currentSessionJob(t *testing.T, env *localenv.Env, ns, name string) *v1beta1.FlinkSessionJob {
	t.Helper()
	j, err := env.Apps.FlinkV1beta1().FlinkSessionJobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func clusterHashOf(t *testing.T, env *localenv.Env, ns, name string) string {
	t.Helper()
	c, err := env.Apps.FlinkV1beta1().FlinkSessionClusters(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c.Status.DeployHash
}
