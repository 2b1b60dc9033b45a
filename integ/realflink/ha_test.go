package realflink

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// With Kubernetes HA, a killed JobManager process is replaced by one that recovers the job itself,
// under the same job id, from the checkpoint its HA ConfigMaps point to: the operator submits
// nothing. The HA ConfigMaps are the ones Flink really writes (names and labels the operator's
// clean-up selects): after a savepoint upgrade the old cluster's are removed and the new one's kept,
// and deleting the application removes the rest.
func TestAJobManagerKilledUnderHAIsRecoveredByFlinkAndItsConfigMapsAreCleanedUp(t *testing.T) {
	env, fleet, releases := operatorOnRealFlink(t)
	for _, r := range releases {
		t.Run(r.name, func(t *testing.T) { haLifecycle(t, env, fleet, r) })
	}
}

func haLifecycle(t *testing.T, env *localenv.Env, fleet *Fleet, r realRelease) {
	ctx := context.Background()
	began := time.Now()
	ns := realNamespace(t, env)
	out := t.TempDir()
	app := lyftManifest(t, ns, r, out)
	app.Name = "ha"
	app.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
	app.Spec.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/flink/ha"
	s := &lifecycle{t: t, env: env, fleet: fleet, ns: ns, name: app.Name, out: out, api: client.New(client.DefaultConfig(), nil)}
	apps := env.Apps.FlinkV1beta1().FlinkApplications(ns)
	s.create(app)
	job := s.awaitNewJob("", "")
	s.awaitCheckpoints(job, 3)
	clusterID := flink.HAClusterIDOf(app.Name, job.hash)
	if got := s.haClusters(); !slices.Contains(got, clusterID) {
		t.Fatalf("the HA ConfigMaps the operator selects are of clusters %v; want %s among them (the cluster id the operator set). "+
			"The namespace's ConfigMaps: %s", got, clusterID, s.configMaps())
	}
	t.Logf("Flink %s's HA ConfigMaps: %s", r.dist.Version, s.configMaps())

	jm := s.pod(job.hash, roleJobManager)
	if !fleet.Kill(ns, jm) {
		t.Fatalf("JobManager %s had no process to kill", jm)
	}
	var restored *client.RestoredCheckpoint
	eventually(t, 4*time.Minute, "job "+job.id+" recovered by the next JobManager", func() (bool, error) {
		url := fleet.JobManagerURL(ns, app.Name+"-"+job.hash)
		if url == "" {
			return false, nil
		}
		st, err := s.api.GetCheckpoints(ctx, url, job.id)
		if err != nil {
			return false, err
		}
		restored = st.Latest.Restored
		return restored != nil && st.Latest.Completed != nil && st.Latest.Completed.ID > restored.ID, nil
	})
	if isSavepointPath(restored.ExternalPath) {
		t.Errorf("Flink recovered job %s from savepoint %s; want its newest checkpoint", job.id, restored.ExternalPath)
	}
	a := s.current()
	if a.Status.JobStatus.JobID != job.id || a.Status.DeployHash != job.hash || a.Status.Phase != v1beta1.PhaseRunning {
		t.Errorf("after the JobManager was killed under HA the application is %s with job %s on %s; want Running job %s on %s, recovered by Flink",
			a.Status.Phase, a.Status.JobStatus.JobID, a.Status.DeployHash, job.id, job.hash)
	}
	url := fleet.JobManagerURL(ns, app.Name+"-"+job.hash)
	listed, err := s.api.GetJobs(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].ID != job.id {
		t.Errorf("the recovered JobManager lists %+v; want job %s alone", listed, job.id)
	}
	o, err := ReadJobOutput(out, job.id)
	if err != nil {
		t.Fatal(err)
	}
	check(t, o.CheckCounts(testKeys))
	job.url = url
	job.restored = restored

	// A savepoint upgrade: the old cluster's HA ConfigMaps go once it is torn down.
	s.update(func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 3 })
	upgraded := s.awaitNewJob(job.id, job.hash)
	s.checkWentOnExactlyAfterRestart(job, upgraded)
	newID := flink.HAClusterIDOf(app.Name, upgraded.hash)
	eventually(t, 3*time.Minute, "the HA ConfigMaps of "+clusterID+" removed", func() (bool, error) {
		got := s.haClusters()
		return !slices.Contains(got, clusterID) && slices.Contains(got, newID), nil
	})

	// Nine more updates, each a cluster of its own: only the running cluster's HA ConfigMaps stay,
	// and they never go while it runs.
	for i := 1; i <= 9; i++ {
		s.update(func(a *v1beta1.FlinkApplication) { a.Spec.RestartNonce = v1beta1.Nonce(fmt.Sprintf("update-%d", i)) })
		next := s.awaitNewJob(upgraded.id, upgraded.hash)
		running := flink.HAClusterIDOf(app.Name, next.hash)
		eventually(t, 3*time.Minute, "only the HA ConfigMaps of "+running+" left", func() (bool, error) {
			got := s.haClusters()
			return len(got) == 1 && got[0] == running, nil
		})
		upgraded = next
	}
	o, err = ReadJobOutput(out, upgraded.id)
	if err != nil {
		t.Fatal(err)
	}
	check(t, o.CheckCounts(testKeys))

	if err := apps.Delete(ctx, app.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "every process and HA ConfigMap of "+app.Name+" gone", func() (bool, error) {
		return fleet.processesOf(ns, app.Name) == 0 && len(s.haClusters()) == 0, nil
	})
	t.Logf("Flink %s: HA recovery, upgrade and delete in %s; %s", r.dist.Version, time.Since(began).Round(time.Second), fleet.Memory())
}

// haClusters lists the cluster ids that have HA ConfigMaps in the namespace.
func (s *lifecycle) haClusters() []string {
	s.t.Helper()
	cms, err := s.env.Kube.CoreV1().ConfigMaps(s.ns).List(context.Background(), metav1.ListOptions{LabelSelector: flink.HAConfigMapSelector})
	if err != nil {
		s.t.Fatal(err)
	}
	var ids []string
	for _, cm := range cms.Items {
		if id := cm.Labels[flink.HAClusterIDLabel]; !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// checkWentOnExactlyAfterRestart checks that next restored a savepoint of previous holding exactly
// what previous had counted up to it, when previous's tasks restarted (its output replays by design,
// so only the new job's is checked for gaps and repeats).
func (s *lifecycle) checkWentOnExactlyAfterRestart(previous, next realJob) {
	s.t.Helper()
	if next.restored == nil || !isSavepointPath(next.restored.ExternalPath) {
		s.t.Fatalf("job %s restored %+v; want a savepoint of job %s", next.id, next.restored, previous.id)
	}
	before, err := ReadJobOutput(s.out, previous.id)
	if err != nil {
		s.t.Fatal(err)
	}
	resume, ok := before.ResumePosition(next.restored.ID)
	if !ok {
		s.t.Fatalf("job %s wrote no position for savepoint %d", previous.id, next.restored.ID)
	}
	after, err := ReadJobOutput(s.out, next.id)
	if err != nil {
		s.t.Fatal(err)
	}
	upTo, _ := after.ResumePosition(next.later.ID)
	check(s.t, before.CheckCounts(testKeys), after.CheckCounts(testKeys), after.CheckExactlyFrom(resume, upTo))
}

// configMaps describes the namespace's ConfigMaps by name and labels.
func (s *lifecycle) configMaps() string {
	cms, err := s.env.Kube.CoreV1().ConfigMaps(s.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, cm := range cms.Items {
		out = append(out, fmt.Sprintf("%s %v", cm.Name, cm.Labels))
	}
	return strings.Join(out, "; ")
}
