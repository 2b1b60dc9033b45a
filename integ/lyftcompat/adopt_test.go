package lyftcompat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Switching from the Lyft operator (docs/migrating-from-lyft.md, "Switching operators on a live
// cluster"): with no operator running, applications exist as the Lyft operator left them — one
// Running, one mid-update in Lyft's SubmittingJob, one mid-rollback in RollingBackJob — each with
// the Flink clusters and jobs Lyft started and the status in Lyft's exact shape, written through the
// status subresource. flinkfsm then starts, adopts the Running one without touching its cluster or
// job and carries it through a spec update; it finishes the second's update from the savepoint Lyft
// took, and the third's rollback as Lyft would have. A fourth, which Lyft never handled (phase ""),
// is deployed. One job at a time throughout.
//
// Not parallel: it stops the shared operator while it sets the scene, which Go runs before the
// parallel tests start.
func TestLyftWrittenApplicationsAreAdoptedAndUpdated(t *testing.T) {
	defer stopEnvOnPanic()
	s := newScenario(t)
	env.KillOperator()
	operatorBack := false
	defer func() {
		if !operatorBack {
			_ = env.StartOperator()
		}
	}()
	const lyftFinalizer = "job.finalizers.flink.k8s.io"

	// The Running application: Lyft's cluster under Lyft's hash, Lyft's job on it.
	running := s.readTestApp()
	running.Name = "lyftrunning"
	running.Labels["integTest"] = "lyft_adopt"
	running.Finalizers = []string{lyftFinalizer}
	imageConfig(running)
	jarCheckpointing(running, false)
	s.createApp(running)
	running = s.mustGet(running.Name)
	const runningHash = "5f3c9d21" // Lyft hashes specs its own way: not flinkfsm's hash of this spec
	s.lyftCluster(running, runningHash, true)
	runningJob := s.submitAsLyft(running, runningHash, "")
	s.writeLyftStatus(running, map[string]interface{}{
		"phase":          "Running",
		"startedAt":      lyftTime(-time.Hour),
		"lastUpdatedAt":  lyftTime(0),
		"deployHash":     runningHash,
		"deploymentMode": "Dual",
		"clusterStatus":  lyftClusterStatus(running, runningHash),
		"jobStatus": map[string]interface{}{
			"jobOverviewURL": fmt.Sprintf("http://flinkk8soperator.lyft.example/#/jobs/%s", runningJob),
			"jobID":          runningJob, "health": "Green", "state": "RUNNING",
			"jarName": running.Spec.JarName, "parallelism": running.Spec.Parallelism, "entryClass": running.Spec.EntryClass,
			"startTime": lyftTime(-time.Hour), "completedCheckpointCount": 12, "lastCheckpointTime": lyftTime(-5 * time.Second),
			"runningTasks": 4, "totalTasks": 4,
		},
	})

	// The application mid-update: Lyft created the new cluster, cancelled the old job with a
	// savepoint and recorded it, and is about to submit the new job (SubmittingJob, job id cleared).
	mid := s.readTestApp()
	mid.Name = "lyftsubmitting"
	mid.Labels["integTest"] = "lyft_adopt"
	mid.Finalizers = []string{lyftFinalizer}
	imageConfig(mid)
	jarCheckpointing(mid, false)
	mid.Spec.Image = newImage // the spec Lyft is deploying
	s.createApp(mid)
	mid = s.mustGet(mid.Name)
	const oldHash, newHash = "1a2b3c4d", "9e8d7c6b"
	previous := mid.DeepCopy()
	previous.Spec.Image = testImage // the spec the old cluster runs
	s.lyftCluster(previous, oldHash, true)
	oldJob := s.submitAsLyft(previous, oldHash, "")
	triggerID, savepoint := s.cancelWithSavepointAsLyft(previous, oldHash, oldJob)
	s.lyftCluster(mid, newHash, false)
	s.waitJobManager(mid.Name, newHash)
	s.writeLyftStatus(mid, map[string]interface{}{
		"phase":              "SubmittingJob",
		"startedAt":          lyftTime(-time.Hour),
		"lastUpdatedAt":      lyftTime(0),
		"deployHash":         oldHash,
		"updatingHash":       newHash,
		"deploymentMode":     "Dual",
		"savepointTriggerId": triggerID,
		"savepointPath":      savepoint,
		"clusterStatus":      lyftClusterStatus(mid, newHash),
		"jobStatus": map[string]interface{}{
			"health": "Green", "state": "CANCELED",
			"jarName": mid.Spec.JarName, "parallelism": mid.Spec.Parallelism, "entryClass": mid.Spec.EntryClass,
			"startTime": lyftTime(-time.Hour),
		},
	})

	// The application mid-rollback: Lyft's submission of the new spec (a jar the image lacks) failed
	// on the new cluster, the old job had been cancelled with a savepoint, and Lyft is about to
	// resubmit the old job on the old cluster (RollingBackJob). jobStatus keeps the old job's
	// parameters, from which Lyft resubmits; the Service <app> still points at the new cluster.
	rolling := s.readTestApp()
	rolling.Name = "lyftrollingback"
	rolling.Labels["integTest"] = "lyft_adopt"
	rolling.Finalizers = []string{lyftFinalizer}
	imageConfig(rolling)
	jarCheckpointing(rolling, false)
	rolling.Spec.JarName = "nonexistent.jar" // the spec that failed, as the user left it
	rolling.Spec.RestartNonce = "rollback"
	s.createApp(rolling)
	rolling = s.mustGet(rolling.Name)
	const stableHash, failedHash = "2c4e6a80", "7b9d1f35"
	stableSpec := rolling.DeepCopy()
	stableSpec.Spec.JarName, stableSpec.Spec.RestartNonce = testJar, ""
	s.lyftCluster(stableSpec, stableHash, false)
	stableJob := s.submitAsLyft(stableSpec, stableHash, "")
	rollbackTrigger, rollbackSavepoint := s.cancelWithSavepointAsLyft(stableSpec, stableHash, stableJob)
	s.lyftCluster(rolling, failedHash, true)
	s.waitJobManager(rolling.Name, failedHash)
	s.writeLyftStatus(rolling, map[string]interface{}{
		"phase":              "RollingBackJob",
		"startedAt":          lyftTime(-time.Hour),
		"lastUpdatedAt":      lyftTime(0),
		"deployHash":         stableHash,
		"updatingHash":       failedHash,
		"deploymentMode":     "Dual",
		"savepointTriggerId": rollbackTrigger,
		"savepointPath":      rollbackSavepoint,
		"retryCount":         0,
		"clusterStatus":      lyftClusterStatus(rolling, failedHash),
		"jobStatus": map[string]interface{}{
			"health": "Red", "state": "CANCELED",
			"jarName": testJar, "parallelism": rolling.Spec.Parallelism, "entryClass": rolling.Spec.EntryClass,
			"startTime": lyftTime(-time.Hour),
		},
	})
	// An application Lyft's operator never got to: its status as Lyft's types serialise it before
	// the first pass, an empty phase and deployHash.
	fresh := s.readTestApp()
	fresh.Name = "lyftnew"
	fresh.Labels["integTest"] = "lyft_adopt"
	imageConfig(fresh)
	jarCheckpointing(fresh, false)
	s.createApp(fresh)
	s.writeLyftStatus(s.mustGet(fresh.Name), map[string]interface{}{
		"phase": "", "deployHash": "", "clusterStatus": map[string]interface{}{"availableTaskSlots": 0},
		"jobStatus": map[string]interface{}{"jarName": "", "parallelism": 0},
	})
	pods := podUIDs(s, "integTest=lyft_adopt")

	// flinkfsm takes over.
	if err := env.StartOperator(); err != nil {
		t.Fatal(err)
	}
	operatorBack = true

	// Adopted: Running, the same cluster and job, nothing redeployed, no pod replaced.
	adopted := s.waitFor(running.Name, "adopted", func(a *v1beta1.FlinkApplication) bool {
		return len(a.Status.Conditions) > 0 && a.Status.Phase == v1beta1.PhaseRunning
	}, nil)
	time.Sleep(3 * time.Second) // passes of the operator over the adopted application
	adopted = s.mustGet(running.Name)
	if adopted.Status.Phase != v1beta1.PhaseRunning || adopted.Status.DeployHash != runningHash || adopted.Status.JobStatus.JobID != runningJob {
		t.Errorf("adopted: %s; want Running on %s with job %s", testkit.Describe(adopted), runningHash, runningJob)
	}
	if jobs := env.Fleet.Timeline().Jobs(s.ns + "/" + running.Name); len(jobs) != 1 {
		t.Errorf("the simulator ran %d jobs of %s after the adoption, want Lyft's only", len(jobs), running.Name)
	}
	if n := s.jobManager(running.Name, runningHash).SavepointTriggers(); n != 0 {
		t.Errorf("%d savepoints taken of the adopted job, want none", n)
	}

	// The update Lyft was in the middle of completes: the new job on Lyft's new cluster, from the
	// savepoint Lyft took, and the old cluster goes.
	finished := s.waitFor(mid.Name, "Running on Lyft's new cluster", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash == newHash && a.Status.JobStatus.JobID != ""
	}, func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == v1beta1.PhaseDeployFailed })
	var restored string
	for _, r := range env.Fleet.Timeline().Jobs(s.ns + "/" + mid.Name) {
		if r.JobID == finished.Status.JobStatus.JobID {
			restored = r.RestoredFrom
		}
	}
	if restored != savepoint {
		t.Errorf("the new job %s restored %q, want Lyft's savepoint %s", finished.Status.JobStatus.JobID, restored, savepoint)
	}
	if jobs := env.Fleet.Timeline().Jobs(s.ns + "/" + mid.Name); len(jobs) != 2 {
		t.Errorf("the simulator ran %d jobs of %s, want the old and the new", len(jobs), mid.Name)
	}
	if n := s.jobManager(mid.Name, newHash).SavepointTriggers(); n != 0 {
		t.Errorf("savepoints taken on the new cluster: %d", n)
	}
	if finished.Status.SavepointPath != "" || finished.Status.SavepointTriggerID != "" {
		t.Errorf("status.savepointPath %q, savepointTriggerId %q once the new job runs; want both empty (Lyft's meaning)",
			finished.Status.SavepointPath, finished.Status.SavepointTriggerID)
	}
	s.waitOldPodsGone(mid.Name, oldHash)
	still := podUIDs(s, "integTest=lyft_adopt")
	for uid, cluster := range pods {
		if (cluster == running.Name+"-"+runningHash || cluster == mid.Name+"-"+newHash) && still[uid] == "" {
			t.Errorf("a pod (uid %s) of Lyft's cluster %s was replaced", uid, cluster)
		}
	}

	// The rollback Lyft was in the middle of completes as Lyft's would: the old job resubmitted on
	// the old cluster from Lyft's savepoint, DeployFailed, the Service <app> back on the old cluster.
	rolledBack := s.waitFor(rolling.Name, "DeployFailed after Lyft's rollback", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseDeployFailed && a.Status.JobStatus.JobID != "" && a.Status.JobStatus.JobID != stableJob
	}, func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == v1beta1.PhaseRunning })
	if strings.Contains(rolledBack.Status.Reason, "()") {
		t.Errorf("status.reason %q names an empty cause", rolledBack.Status.Reason)
	}
	if rolledBack.Status.DeployHash != stableHash {
		t.Errorf("after Lyft's rollback: deployHash %s, want the old cluster %s", rolledBack.Status.DeployHash, stableHash)
	}
	var resubmitted *flinksim.JobRecord
	for _, r := range env.Fleet.Timeline().Jobs(s.ns + "/" + rolling.Name) {
		if r.JobID == rolledBack.Status.JobStatus.JobID {
			r := r
			resubmitted = &r
		}
	}
	switch {
	case resubmitted == nil:
		t.Errorf("the simulator never ran job %s", rolledBack.Status.JobStatus.JobID)
	case resubmitted.RestoredFrom != rollbackSavepoint || resubmitted.Parallelism != int(rolling.Spec.Parallelism):
		t.Errorf("the resubmitted job restored %q with parallelism %d, want Lyft's savepoint %s", resubmitted.RestoredFrom,
			resubmitted.Parallelism, rollbackSavepoint)
	}
	if jm := s.jobManager(rolling.Name, stableHash); len(jm.Jobs()) != 2 {
		t.Errorf("the old cluster lists %d jobs, want the cancelled and the resubmitted one", len(jm.Jobs()))
	}
	if rolledBack.Status.SavepointPath != "" || rolledBack.Status.SavepointTriggerID != "" {
		t.Errorf("after the rollback: savepointPath %q, savepointTriggerId %q; want both empty (Lyft's meaning)",
			rolledBack.Status.SavepointPath, rolledBack.Status.SavepointTriggerID)
	}
	s.eventually("Service "+rolling.Name+" back on the old cluster", func() (bool, string) {
		svc, err := env.Kube.CoreV1().Services(s.ns).Get(s.ctx, rolling.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return svc.Spec.Selector[flink.HashLabel] == stableHash, "selects " + svc.Spec.Selector[flink.HashLabel]
	})

	// The never-handled one is deployed from scratch.
	s.waitPhase(fresh.Name, v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed)

	// The adopted application goes through a spec update like any other.
	updated := s.updateAndValidate(running.Name, func(app *v1beta1.FlinkApplication) { app.Spec.Image = newImage }, v1beta1.PhaseDeployFailed)
	var from string
	for _, r := range env.Fleet.Timeline().Jobs(s.ns + "/" + running.Name) {
		if r.JobID == updated.Status.JobStatus.JobID {
			from = r.RestoredFrom
		}
	}
	if snap, ok := env.Fleet.Storage().Get(from); !ok || !snap.Savepoint || snap.JobID != runningJob {
		t.Errorf("the updated job restored %q, want a savepoint of Lyft's job %s", from, runningJob)
	}
	if jobs := env.Fleet.Timeline().Jobs(s.ns + "/" + running.Name); len(jobs) != 2 {
		t.Errorf("the simulator ran %d jobs of %s, want Lyft's and the updated one", len(jobs), running.Name)
	}
}

// lyftCluster creates a Flink cluster as the Lyft operator did: JobManager and TaskManager
// Deployments named <app>-<hash>-jm/-tm and the versioned Service, owned by the application, their
// pods labelled flink-app, flink-app-hash and flink-deployment-type and annotated with Lyft's
// flink-app-hash and flink-job-properties; with live, the Service <app> points at it. The pod specs
// are flinkfsm's rendering (the simulator reads only FLINK_PROPERTIES from them).
func (s *scenario) lyftCluster(app *v1beta1.FlinkApplication, hash string, live bool) {
	s.t.Helper()
	c, err := flink.RenderCluster(app, hash, "")
	if err != nil {
		s.t.Fatalf("rendering %s-%s: %v", app.Name, hash, err)
	}
	for _, d := range []*corev1.PodTemplateSpec{&c.JobManager.Spec.Template, &c.TaskManager.Spec.Template} {
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		d.Annotations["flink-app-hash"] = hash
		d.Annotations["flink-job-properties"] = fmt.Sprintf("jarName: %s\nparallelism: %d\nentryClass:%s\nprogramArgs:\"%s\"",
			app.Spec.JarName, app.Spec.Parallelism, app.Spec.EntryClass, app.Spec.ProgramArgs)
	}
	if _, err := env.Kube.AppsV1().Deployments(s.ns).Create(s.ctx, c.JobManager, metav1.CreateOptions{}); err != nil {
		s.t.Fatal(err)
	}
	if _, err := env.Kube.AppsV1().Deployments(s.ns).Create(s.ctx, c.TaskManager, metav1.CreateOptions{}); err != nil {
		s.t.Fatal(err)
	}
	if _, err := env.Kube.CoreV1().Services(s.ns).Create(s.ctx, c.Service, metav1.CreateOptions{}); err != nil {
		s.t.Fatal(err)
	}
	if live {
		if _, err := env.Kube.CoreV1().Services(s.ns).Create(s.ctx, flink.RenderGenericService(app, hash), metav1.CreateOptions{}); err != nil {
			s.t.Fatal(err)
		}
	}
}

// waitJobManager waits until the simulator runs the cluster's JobManager with all its slots.
func (s *scenario) waitJobManager(name, hash string) {
	s.t.Helper()
	s.eventually("JobManager of "+name+"-"+hash+" up", func() (bool, string) {
		return env.Fleet.JobManager(s.ns, name+"-"+hash) != nil, "not yet"
	})
}

// lyftREST is a call to a cluster's REST API by versioned Service, as Lyft's operator made them.
func (s *scenario) lyftREST(method, name, hash, path string, body interface{}) map[string]interface{} {
	s.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(s.ctx, method, fmt.Sprintf("%s/%s/%s-%s/%s", env.FlinkURL, s.ns, name, hash, path), bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		s.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	var m map[string]interface{}
	_ = json.Unmarshal(out, &m)
	return m
}

// submitAsLyft submits the application's job to the cluster as the Lyft operator does (a job id
// chosen by Flink), and waits until all its tasks run.
func (s *scenario) submitAsLyft(app *v1beta1.FlinkApplication, hash, savepoint string) string {
	s.t.Helper()
	s.waitJobManager(app.Name, hash)
	var id string
	s.eventually("the job submitted", func() (bool, string) {
		jm := env.Fleet.JobManager(s.ns, app.Name+"-"+hash)
		if jm == nil {
			return false, "no JobManager"
		}
		if id == "" {
			// Wait for the TaskManager's slots first, as Lyft's ClusterStarting does.
			res := s.lyftREST(http.MethodGet, app.Name, hash, "overview", nil)
			if slots, _ := res["slots-total"].(float64); int32(slots) < app.Spec.Parallelism {
				return false, fmt.Sprintf("%v slots", res["slots-total"])
			}
			res = s.lyftREST(http.MethodPost, app.Name, hash, "jars/"+app.Spec.JarName+"/run", map[string]interface{}{
				"entryClass": app.Spec.EntryClass, "parallelism": app.Spec.Parallelism, "savepointPath": savepoint})
			id, _ = res["jobid"].(string)
		}
		for _, j := range jm.Jobs() {
			if j.ID == id && j.State == "RUNNING" && j.TasksRunning {
				return true, ""
			}
		}
		return false, "job " + id + " not running yet"
	})
	return id
}

// cancelWithSavepointAsLyft cancels a job with a savepoint as Lyft's Savepointing phase does, and
// returns the trigger id and the savepoint's location once it completed.
func (s *scenario) cancelWithSavepointAsLyft(app *v1beta1.FlinkApplication, hash, job string) (triggerID, location string) {
	s.t.Helper()
	res := s.lyftREST(http.MethodPost, app.Name, hash, "jobs/"+job+"/savepoints", map[string]interface{}{"cancel-job": true})
	triggerID, _ = res["request-id"].(string)
	s.eventually("Lyft's savepoint completed", func() (bool, string) {
		res := s.lyftREST(http.MethodGet, app.Name, hash, "jobs/"+job+"/savepoints/"+triggerID, nil)
		op, _ := res["operation"].(map[string]interface{})
		location, _ = op["location"].(string)
		return location != "", fmt.Sprintf("%v", res)
	})
	s.eventually("the old job cancelled", func() (bool, string) {
		for _, j := range s.jobManager(app.Name, hash).Jobs() {
			if j.ID == job {
				return j.State == "CANCELED", j.State
			}
		}
		return false, "job gone"
	})
	return triggerID, location
}

// writeLyftStatus replaces the application's status with status, as raw JSON in Lyft's field names,
// through the status subresource.
func (s *scenario) writeLyftStatus(app *v1beta1.FlinkApplication, status map[string]interface{}) {
	s.t.Helper()
	raw, err := env.Apps.FlinkV1beta1().RESTClient().Get().Namespace(s.ns).Resource("flinkapplications").Name(app.Name).DoRaw(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	var obj map[string]interface{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		s.t.Fatal(err)
	}
	obj["status"] = status
	body, _ := json.Marshal(obj)
	if _, err := env.Apps.FlinkV1beta1().RESTClient().Put().Namespace(s.ns).Resource("flinkapplications").Name(app.Name).
		SubResource("status").Body(body).DoRaw(s.ctx); err != nil {
		s.t.Fatalf("writing Lyft's status of %s: %v", app.Name, err)
	}
	got := s.mustGet(app.Name)
	if string(got.Status.Phase) != status["phase"] || got.Status.DeployHash != status["deployHash"] {
		s.t.Fatalf("status of %s as written: %s", app.Name, testkit.Describe(got))
	}
}

func lyftTime(offset time.Duration) string {
	return time.Now().Add(offset).UTC().Format(time.RFC3339)
}

func lyftClusterStatus(app *v1beta1.FlinkApplication, hash string) map[string]interface{} {
	return map[string]interface{}{
		"clusterOverviewURL": fmt.Sprintf("http://flinkk8soperator.lyft.example/%s-%s/#/overview", app.Name, hash),
		"health":             "Green", "numberOfTaskManagers": 1, "healthyTaskManagers": 1,
		"numberOfTaskSlots": 2, "availableTaskSlots": 0,
	}
}

// podUIDs maps the UIDs of the pods with the selector to "<app>-<hash>" of their cluster.
func podUIDs(s *scenario, selector string) map[string]string {
	out := map[string]string{}
	for _, p := range s.pods(selector) {
		out[string(p.UID)] = p.Labels[flink.AppLabel] + "-" + p.Labels[flink.HashLabel]
	}
	return out
}
