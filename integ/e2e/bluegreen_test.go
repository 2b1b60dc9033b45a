package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

const (
	green = v1beta1.GreenFlinkApplication
	blue  = v1beta1.BlueFlinkApplication

	// testFinalizer holds a deleted application after the operator removed its own finalizer, as
	// Lyft's test does, so that the status the deletion left can be read before the object goes.
	testFinalizer = "test.flinkfsm.io/hold-deleted"
)

// blueGreen is the spec of Lyft's scenario: BlueGreen, with a final savepoint on deletion.
func blueGreen(spec *v1beta1.FlinkApplicationSpec) {
	spec.DeploymentMode = v1beta1.DeploymentModeBlueGreen
	spec.DeleteMode = v1beta1.DeleteModeSavepoint
}

// Lyft's blue/green scenario (TestUpdateWithBlueGreenDeploymentMode) on the local cluster. The first
// version is green. An image update starts blue's cluster beside green's and blue's job from a
// savepoint of green's, which keeps running: DualRunning, both clusters' pods up, both jobs RUNNING.
// Tearing down green's hash stops green's job with a recorded savepoint, deletes its cluster and
// Services, moves the application's Service to blue and leaves blue deployed, its job untouched.
// Deleting stops blue's job with a final savepoint. Never more than the two versions' jobs at once.
func TestBlueGreenUpdateRunsBothVersionsUntilOneIsTornDown(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", blueGreen)
	s.holdDeletion(old.Name)
	oldJM := s.jobManager(old)
	oldHash, oldJob := old.Status.DeployHash, old.Status.JobStatus.JobID
	if old.Status.DeployVersion != green || old.Status.UpdatingVersion != "" {
		t.Errorf("first version: deployVersion %q, updatingVersion %q; want green and none", old.Status.DeployVersion, old.Status.UpdatingVersion)
	}
	s.assertPrintedVersions(old.Name, green, "")
	s.assertVersionPods(old.Name, map[string]v1beta1.FlinkApplicationVersion{oldHash: green})

	// Update the image: blue starts beside green.
	newHash := flink.ClusterHash(s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" }))
	dual := s.waitDualRunning(old.Name, newHash, oldHash, oldJob)
	st := dual.Status
	if st.DeployVersion != green || st.UpdatingVersion != blue || st.DeployHash != oldHash || st.JobStatus.JobID != oldJob {
		t.Errorf("DualRunning: deployVersion %q, updatingVersion %q, deployHash %s, job %s; want green, blue, %s, %s",
			st.DeployVersion, st.UpdatingVersion, st.DeployHash, st.JobStatus.JobID, oldHash, oldJob)
	}
	s.assertPrintedVersions(old.Name, green, blue)
	newJM := s.jobManagerOf(old.Name, newHash)
	newJob := s.onlyJob(newJM)
	s.assertRunningJob(newJob, 3)
	s.assertSavepointOf(newJob.RestoredFrom, oldJob)
	s.assertVersionStatus(dual, 0, green, oldHash, oldJob)
	s.assertVersionStatus(dual, 1, blue, newHash, newJob.ID)
	if rp := st.VersionStatuses[1].JobStatus.RestorePath; rp != newJob.RestoredFrom {
		t.Errorf("versionStatuses[1] says blue restored %q, Flink says %q", rp, newJob.RestoredFrom)
	}
	// Green's job was only asked for a savepoint: not cancelled, not restarted.
	s.assertUntouched(oldJM, oldJob)
	s.assertSavepointTriggers(oldJM, 1)
	if most := env.Fleet.Timeline().MostAlive(s.appKey(old.Name)); most != 2 {
		t.Errorf("%d jobs alive at most in DualRunning, want both versions' 2", most)
	}
	s.assertVersionPods(old.Name, map[string]v1beta1.FlinkApplicationVersion{oldHash: green, newHash: blue})
	s.assertServiceOn(old.Name+"-green", oldHash)
	s.assertServiceOn(old.Name+"-blue", newHash)
	s.assertServiceOn(old.Name, oldHash)

	// Tear down green: blue is deployed.
	s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.TearDownVersionHash = oldHash })
	app := s.waitFor(old.Name, "Running blue alone", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash == newHash
	}, inPhase(v1beta1.PhaseDeployFailed))
	st = app.Status
	if !testkit.HistoryHas(app, v1beta1.PhaseTeardown) || st.TeardownHash != oldHash {
		t.Errorf("want Teardown of %s in the history and as status.teardownHash: %s", oldHash, testkit.Describe(app))
	}
	if st.DeployVersion != blue || st.UpdatingVersion != "" || st.UpdatingHash != "" || st.JobStatus.JobID != newJob.ID {
		t.Errorf("after teardown: deployVersion %q, updatingVersion %q, updatingHash %q, job %s; want blue, none, none, %s",
			st.DeployVersion, st.UpdatingVersion, st.UpdatingHash, st.JobStatus.JobID, newJob.ID)
	}
	s.assertVersionStatus(app, 0, blue, newHash, newJob.ID)
	if len(st.VersionStatuses) == 2 && st.VersionStatuses[1] != (v1beta1.FlinkApplicationVersionStatus{}) {
		t.Errorf("versionStatuses[1] %+v, want it empty once green is gone", st.VersionStatuses[1])
	}
	s.assertPrintedVersions(old.Name, blue, "")
	if lt := st.LastTeardown; lt == nil || lt.Version != green || lt.VersionHash != oldHash || lt.JobID != oldJob {
		t.Errorf("status.lastTeardown %+v, want green's hash %s and job %s", lt, oldHash, oldJob)
	} else {
		s.assertSavepointOf(lt.SavepointPath, oldJob)
		if lt.SavepointPath == newJob.RestoredFrom {
			t.Errorf("the teardown recorded the update's savepoint %s, not one taken as green's job stopped", lt.SavepointPath)
		}
	}
	s.assertSavepointTriggers(oldJM, 2)
	if r := s.record(app.Name, oldJob); !reached(r, "CANCELED") || reached(r, "RESTARTING") {
		t.Errorf("green's job %s went %s, want it RUNNING until CANCELED by the teardown", oldJob, states(r))
	}
	// Promotion moves no job: blue's keeps running as it was.
	s.assertUntouched(newJM, newJob.ID)
	s.assertSavepointTriggers(newJM, 0)
	s.assertJobCount(app.Name, 2)
	s.waitClusterGone(app.Name, oldHash)
	// The Deployments' pods go by garbage collection, which the suite makes sure of only now, while
	// the application got this far.
	if err := theSuite.GarbageCollectorReady(); err != nil {
		t.Fatal(err)
	}
	s.waitNoPods(app.Name, oldHash)
	s.eventually("Service "+app.Name+"-green deleted", func() (bool, string) {
		_, err := env.Kube.CoreV1().Services(s.ns).Get(s.ctx, app.Name+"-green", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	s.assertServiceOn(app.Name+"-blue", newHash)
	s.assertServiceOn(app.Name, newHash)
	s.assertAtMostTwoAlive(app.Name)

	// Delete: blue's job stops with a final savepoint, recorded before the application goes.
	if err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Delete(s.ctx, app.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	deleted := s.waitDeletionHandled(app.Name)
	s.assertSavepointOf(deleted.Status.FinalSavepointPath, newJob.ID)
	s.assertSavepointTriggers(newJM, 1)
	if r := s.record(app.Name, newJob.ID); !reached(r, "CANCELED") {
		t.Errorf("blue's job %s went %s, want it CANCELED after its final savepoint", newJob.ID, states(r))
	}
	s.waitFinalSavepointEvent(app.Name, deleted.Status.FinalSavepointPath)
	s.releaseDeletion(app.Name)
	s.waitGone(app.Name)
	s.waitNamespaceEmpty()
	s.assertJobCount(app.Name, 2)
}

// A spec change during DualRunning replaces the updating version: blue's job stops and its cluster
// goes, the newest spec starts as blue again from a fresh savepoint of green's job, which runs on
// untouched throughout. Deleting during DualRunning then stops both jobs and records green's state.
func TestBlueGreenSpecChangeDuringDualRunningReplacesTheUpdatingVersion(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	old := s.createRunning("wordcount", blueGreen)
	s.holdDeletion(old.Name)
	oldJM := s.jobManager(old)
	oldHash, oldJob := old.Status.DeployHash, old.Status.JobStatus.JobID

	hash2 := flink.ClusterHash(s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" }))
	s.waitDualRunning(old.Name, hash2, oldHash, oldJob)
	job2 := s.onlyJob(s.jobManagerOf(old.Name, hash2)).ID

	hash3 := flink.ClusterHash(s.update(old.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v3" }))
	app := s.waitDualRunning(old.Name, hash3, oldHash, oldJob)
	st := app.Status
	if !testkit.HistoryHas(app, v1beta1.PhaseTeardown) || st.DeployVersion != green || st.UpdatingVersion != blue {
		t.Errorf("want a Teardown, then green deployed and the newest spec updating as blue: %s", testkit.Describe(app))
	}
	if lt := st.LastTeardown; lt == nil || lt.VersionHash != hash2 || lt.JobID != job2 {
		t.Errorf("status.lastTeardown %+v, want the replaced version %s (job %s)", lt, hash2, job2)
	}
	s.assertVersionStatus(app, 0, green, oldHash, oldJob)
	job3 := s.onlyJob(s.jobManagerOf(app.Name, hash3))
	s.assertRunningJob(job3, 3)
	s.assertSavepointOf(job3.RestoredFrom, oldJob)
	s.assertVersionStatus(app, 1, blue, hash3, job3.ID)
	s.assertUntouched(oldJM, oldJob)
	// One savepoint without cancel for each version started beside green.
	s.assertSavepointTriggers(oldJM, 2)
	if r := s.record(app.Name, job2); !reached(r, "CANCELED") {
		t.Errorf("the replaced version's job %s went %s, want it CANCELED", job2, states(r))
	}
	s.waitClusterGone(app.Name, hash2)
	s.assertServiceOn(app.Name+"-blue", hash3)
	s.assertServiceOn(app.Name, oldHash)
	s.assertJobCount(app.Name, 3)
	s.assertAtMostTwoAlive(app.Name)

	if err := theSuite.GarbageCollectorReady(); err != nil {
		t.Fatal(err)
	}
	if err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Delete(s.ctx, app.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	deleted := s.waitDeletionHandled(app.Name)
	// The deployed version's state is the one kept; the updating version's job is cancelled.
	s.assertSavepointOf(deleted.Status.FinalSavepointPath, oldJob)
	for _, r := range s.timeline(app.Name) {
		if _, ended := r.AliveUntil(); !ended || !reached(r, "CANCELED") {
			t.Errorf("job %s went %s, want every job CANCELED once the deletion is handled", r.JobID, states(r))
		}
	}
	if n := len(savepointsOf(job3.ID)); n != 0 {
		t.Errorf("the updating version's job %s has %d savepoints, want it cancelled without one", job3.ID, n)
	}
	s.releaseDeletion(app.Name)
	s.waitGone(app.Name)
	s.waitNamespaceEmpty()
	s.assertJobCount(app.Name, 3)
}

// waitDualRunning waits until the version with hash runs beside the deployed one, failing the test
// as soon as the deployed version, the cluster oldHash with job oldJob, is seen to change: the
// deployed job runs untouched while a BlueGreen update is under way.
func (s *scenario) waitDualRunning(name, hash, oldHash, oldJob string) *v1beta1.FlinkApplication {
	s.t.Helper()
	return s.waitFor(name, "DualRunning with "+hash+" updating", func(a *v1beta1.FlinkApplication) bool {
		st := a.Status
		return st.Phase == v1beta1.PhaseDualRunning && st.UpdatingHash == hash && st.DeployHash == oldHash
	}, func(a *v1beta1.FlinkApplication) bool {
		st := a.Status
		return st.Phase == v1beta1.PhaseDeployFailed || st.DeployHash != oldHash || st.JobStatus.JobID != oldJob
	})
}

// assertVersionStatus checks status.versionStatuses[i]: the version, its hash, and its job RUNNING.
func (s *scenario) assertVersionStatus(app *v1beta1.FlinkApplication, i int, version v1beta1.FlinkApplicationVersion, hash, jobID string) {
	s.t.Helper()
	if len(app.Status.VersionStatuses) != 2 {
		s.t.Errorf("status.versionStatuses has %d entries, want 2 (deployed, updating): %+v", len(app.Status.VersionStatuses), app.Status.VersionStatuses)
		return
	}
	v := app.Status.VersionStatuses[i]
	if v.Version != version || v.VersionHash != hash || v.JobStatus.JobID != jobID || v.JobStatus.State != v1beta1.JobRunning {
		s.t.Errorf("versionStatuses[%d]: %s, hash %s, job %s (%s); want %s, hash %s, job %s RUNNING",
			i, v.Version, v.VersionHash, v.JobStatus.JobID, v.JobStatus.State, version, hash, jobID)
	}
}

// assertUntouched checks that the JobManager runs exactly the job jobID, RUNNING since it was
// submitted: never cancelled, failed over or resubmitted.
func (s *scenario) assertUntouched(jm *flinksim.JobManager, jobID string) {
	s.t.Helper()
	job := s.onlyJob(jm)
	if job.ID != jobID || job.State != "RUNNING" || job.Restarts != 0 {
		s.t.Errorf("JobManager %s runs job %s (%s, %d restarts), want job %s RUNNING untouched", jm.Name(), job.ID, job.State, job.Restarts, jobID)
	}
}

// assertVersionPods checks the application's pods against its versions by cluster hash: per
// version a JobManager and two TaskManagers (parallelism 3 on 2 slots each), all Running, each
// labelled with its colour and told it in FLINK_APPLICATION_VERSION; no other pods.
func (s *scenario) assertVersionPods(name string, versions map[string]v1beta1.FlinkApplicationVersion) {
	s.t.Helper()
	sel := labels.SelectorFromSet(labels.Set{flink.AppLabel: name}).String()
	pods, err := env.Kube.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		s.t.Fatalf("listing pods of %s: %v", name, err)
	}
	count := map[string]int{}
	for _, p := range pods.Items {
		hash := p.Labels[flink.HashLabel]
		want, ok := versions[hash]
		if !ok {
			s.t.Errorf("pod %s belongs to cluster %s, not to a running version", p.Name, hash)
			continue
		}
		count[hash]++
		colour := ""
		for _, e := range p.Spec.Containers[0].Env {
			if e.Name == flink.VersionEnv {
				colour = e.Value
			}
		}
		if p.Status.Phase != corev1.PodRunning || p.Labels[flink.VersionLabel] != string(want) || colour != string(want) {
			s.t.Errorf("pod %s: %s, label %s=%q, %s=%q; want Running and %s", p.Name, p.Status.Phase,
				flink.VersionLabel, p.Labels[flink.VersionLabel], flink.VersionEnv, colour, want)
		}
	}
	for hash, version := range versions {
		if count[hash] != 3 {
			s.t.Errorf("%s (cluster %s) has %d pods, want 3: a JobManager and 2 TaskManagers", version, hash, count[hash])
		}
	}
}

// assertServiceOn checks that a Service selects exactly the JobManager pod of the cluster hash.
func (s *scenario) assertServiceOn(service, hash string) {
	s.t.Helper()
	svc, err := env.Kube.CoreV1().Services(s.ns).Get(s.ctx, service, metav1.GetOptions{})
	if err != nil {
		s.t.Errorf("Service %s: %v", service, err)
		return
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector).String()
	pods, err := env.Kube.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		s.t.Fatalf("listing the pods of Service %s: %v", service, err)
	}
	var selected []string
	for _, p := range pods.Items {
		selected = append(selected, fmt.Sprintf("%s (%s %s)", p.Name, p.Labels[flink.HashLabel], p.Labels[flink.ComponentLabel]))
	}
	if len(svc.Spec.Selector) == 0 || len(pods.Items) != 1 || pods.Items[0].Labels[flink.HashLabel] != hash ||
		pods.Items[0].Labels[flink.ComponentLabel] != flink.JobManagerComponent {
		s.t.Errorf("Service %s (selector %s) selects %v; want the JobManager of cluster %s", service, sel, selected, hash)
	}
}

// assertPrintedVersions checks the Version and Updating Version columns `kubectl get
// flinkapplications` prints: the API server's Table rendering of the CRD's printer columns.
func (s *scenario) assertPrintedVersions(name string, deployed, updating v1beta1.FlinkApplicationVersion) {
	s.t.Helper()
	raw, err := env.Apps.FlinkV1beta1().RESTClient().Get().Namespace(s.ns).Resource("flinkapplications").Name(name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(s.ctx).Raw()
	if err != nil {
		s.t.Fatalf("getting %s as a Table: %v", name, err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil || len(table.Rows) != 1 {
		s.t.Fatalf("%s as a Table: %d rows (err %v): %s", name, len(table.Rows), err, raw)
	}
	columns := map[string]string{}
	for i, c := range table.ColumnDefinitions {
		if cell := table.Rows[0].Cells[i]; cell != nil {
			columns[c.Name] = fmt.Sprint(cell)
		}
	}
	if columns["Version"] != string(deployed) || columns["Updating Version"] != string(updating) {
		var shown []string
		for k, v := range columns {
			shown = append(shown, k+"="+v)
		}
		sort.Strings(shown)
		s.t.Errorf("kubectl shows Version %q, Updating Version %q; want %q, %q (columns: %s)",
			columns["Version"], columns["Updating Version"], deployed, updating, strings.Join(shown, ", "))
	}
}

// holdDeletion adds testFinalizer to the application.
func (s *scenario) holdDeletion(name string) {
	s.t.Helper()
	s.editFinalizers(name, func(fs []string) []string { return append(fs, testFinalizer) })
}

// releaseDeletion removes testFinalizer, letting a deleted application go.
func (s *scenario) releaseDeletion(name string) {
	s.t.Helper()
	s.editFinalizers(name, func(fs []string) []string {
		var keep []string
		for _, f := range fs {
			if f != testFinalizer {
				keep = append(keep, f)
			}
		}
		return keep
	})
}

func (s *scenario) editFinalizers(name string, edit func([]string) []string) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := s.get(name)
		if err != nil {
			return err
		}
		app.Finalizers = edit(app.Finalizers)
		_, err = env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Update(s.ctx, app, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("changing the finalizers of %s/%s: %v", s.ns, name, err)
	}
}

// waitDeletionHandled waits until the operator let a deleted application go: only testFinalizer
// holds it, with the status the deletion left.
func (s *scenario) waitDeletionHandled(name string) *v1beta1.FlinkApplication {
	s.t.Helper()
	return s.waitFor(name, "deletion handled", func(a *v1beta1.FlinkApplication) bool {
		return a.DeletionTimestamp != nil && len(a.Finalizers) == 1 && a.Finalizers[0] == testFinalizer
	}, nil)
}

// waitNoPods waits until no pod of the cluster hash is left.
func (s *scenario) waitNoPods(name, hash string) {
	s.t.Helper()
	sel := labels.SelectorFromSet(labels.Set{flink.AppLabel: name, flink.HashLabel: hash}).String()
	s.eventually("pods of "+name+"-"+hash+" deleted", func() (bool, string) {
		pods, err := env.Kube.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 0, fmt.Sprintf("%d pods left", len(pods.Items))
	})
}
