package lyftcompat

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/suite"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

const (
	// waitTimeout bounds each wait. Lyft's WaitForPhase waits up to 500 s on minikube with real
	// Flink; the simulator's savepoints take a second.
	waitTimeout  = 90 * time.Second
	pollInterval = 150 * time.Millisecond

	// testFinalizer is the finalizer Lyft's tests add so that a deleted application stays until
	// they have looked at what the deletion left (Lyft's "simple.finalizers.test.com").
	testFinalizer = "simple.finalizers.test.com"

	diagnosticsEnv = "FLINKFSM_E2E_DIAGNOSTICS"
)

// scenario is one test's namespace and the applications it created there.
type scenario struct {
	t    *testing.T
	ctx  context.Context
	ns   string
	apps []string
	// blueGreen are applications whose two versions' jobs run side by side by design.
	blueGreen map[string]bool
	// updated is when the scenario last changed a spec: a phase reached before it is not the
	// change's.
	updated time.Time
}

// newScenario creates the test's namespace. Lyft's manifest mounts a hostPath volume
// (/tmp/checkpoints, where Lyft's tests drop their failure files), which flinkfsm's pod policy
// refuses unless the namespace allows it (docs/security.md): the namespace does, as a Lyft user
// switching operators would have to. When the test ends, no two jobs of an application may have
// overlapped (a BlueGreen application may run two, never three).
func newScenario(t *testing.T) *scenario {
	t.Helper()
	s := &scenario{t: t, ctx: context.Background()}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: testkit.NamespacePrefix("lyft-", t.Name()),
		Annotations:  map[string]string{"flinkfsm.io/allow-host-path": "true"},
	}}
	created, err := env.Kube.CoreV1().Namespaces().Create(s.ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace for %s: %v", t.Name(), err)
	}
	s.ns = created.Name
	began := time.Now()
	t.Cleanup(func() {
		if t.Failed() || os.Getenv(diagnosticsEnv) != "" {
			s.logDiagnostics()
		}
		t.Logf("wall time %s", time.Since(began).Round(100*time.Millisecond))
	})
	t.Cleanup(s.assertNoOverlaps)
	return s
}

// readTestApp is Lyft's ReadFlinkApplication("test_app.yaml"): the manifest as it is, in the
// test's namespace. Lyft's harness points the hostPath at its checkpoint directory; nothing here
// reads that path.
func (s *scenario) readTestApp() *v1beta1.FlinkApplication {
	s.t.Helper()
	b, err := os.ReadFile("testdata/test_app.yaml")
	if err != nil {
		s.t.Fatal(err)
	}
	app := &v1beta1.FlinkApplication{}
	if err := yaml.UnmarshalStrict(b, app); err != nil {
		s.t.Fatalf("Failed to read test app yaml: %v", err)
	}
	app.Namespace = s.ns
	return app
}

// Lyft's test image and jar configure Flink in ways the simulator cannot read: the image's
// flink-conf.yaml (integ/operator-test-app/flink-conf.yaml) and the jar's code
// (OperatorTestApp.configureEnvironment). The simulator reads Flink's configuration only from the
// pods' FLINK_PROPERTIES, so the scenarios that depend on them add the same settings to
// flinkConfig; the manifest itself is left as it is.

// imageConfig is what the test image's flink-conf.yaml sets that the simulator acts on: a
// fixed-delay restart strategy with unlimited attempts, and four retained checkpoints.
func imageConfig(app *v1beta1.FlinkApplication) {
	c := app.Spec.FlinkConfig
	c["restart-strategy"] = "fixed-delay"
	c["restart-strategy.fixed-delay.delay"] = "0s"
	c["restart-strategy.fixed-delay.attempts"] = "2147483647"
	c["state.checkpoints.num-retained"] = "4"
}

// jarCheckpointing is what the test jar's code sets: a checkpoint every 5 s with a 10 s timeout,
// externalized (retained on cancellation) when the EXTERNAL_CHECKPOINT variable is set. Lyft's
// scenarios that delay checkpoints by 120 s (checkpoint_delay) leave this out instead: no
// checkpoint completes within those scenarios, which the simulator shows by taking none.
func jarCheckpointing(app *v1beta1.FlinkApplication, externalized bool) {
	c := app.Spec.FlinkConfig
	c["execution.checkpointing.interval"] = "5s"
	c["execution.checkpointing.timeout"] = "10s"
	if externalized {
		c["execution.checkpointing.externalized-checkpoint-retention"] = "RETAIN_ON_CANCELLATION"
	}
}

// createApp is Lyft's CreateFlinkApplication, retried while the namespace's hostPath allowance
// is not yet seen by the admission policy (it applies a moment after the namespace exists).
func (s *scenario) createApp(app *v1beta1.FlinkApplication) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Create(s.ctx, app, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "hostPath") || time.Now().After(deadline) {
			s.t.Fatalf("Failed to create flink application %s/%s: %v", s.ns, app.Name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.apps = append(s.apps, app.Name)
	if app.Spec.DeploymentMode == v1beta1.DeploymentModeBlueGreen {
		if s.blueGreen == nil {
			s.blueGreen = map[string]bool{}
		}
		s.blueGreen[app.Name] = true
	}
}

// update is Lyft's Update: change the application, retrying on conflicts.
func (s *scenario) update(name string, edit func(*v1beta1.FlinkApplication)) *v1beta1.FlinkApplication {
	s.t.Helper()
	var updated *v1beta1.FlinkApplication
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := s.get(name)
		if err != nil {
			return err
		}
		edit(app)
		updated, err = env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Update(s.ctx, app, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("updating %s/%s: %v", s.ns, name, err)
	}
	s.updated = time.Now()
	return updated
}

func (s *scenario) get(name string) (*v1beta1.FlinkApplication, error) {
	return env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Get(s.ctx, name, metav1.GetOptions{})
}

func (s *scenario) mustGet(name string) *v1beta1.FlinkApplication {
	s.t.Helper()
	app, err := s.get(name)
	if err != nil {
		s.t.Fatalf("getting %s/%s: %v", s.ns, name, err)
	}
	return app
}

// waitPhase is Lyft's WaitForPhase(name, phase, failurePhases...): it returns once the application
// is in phase, and fails the test if it is in one of failurePhases first. Lyft polls every second
// and would miss a phase shorter than that; this one also counts phase as reached when
// status.history records entering it since the wait began, so a short Savepointing is not missed.
func (s *scenario) waitPhase(name string, phase v1beta1.FlinkApplicationPhase, failurePhases ...v1beta1.FlinkApplicationPhase) *v1beta1.FlinkApplication {
	s.t.Helper()
	// A phase passed through recently counts too (a short one may be missed between polls), but not
	// one reached before the scenario's last spec change, which is not that change's: history times
	// are whole seconds, and a fast scenario passes through Running twice within two of them.
	since := time.Now().Add(-time.Second).Truncate(time.Second)
	if u := s.updated.Truncate(time.Second); u.After(since) {
		since = u
	}
	before := map[v1beta1.PhaseTransition]bool{}
	if a, err := s.get(name); err == nil {
		for _, h := range a.Status.History {
			before[h] = h.Time.Time.Before(since)
		}
	}
	return s.waitFor(name, string(phase), func(a *v1beta1.FlinkApplication) bool {
		if a.Status.Phase == phase {
			return true
		}
		for _, h := range a.Status.History {
			if h.To == phase && !before[h] {
				return true
			}
		}
		return false
	}, func(a *v1beta1.FlinkApplication) bool {
		for _, p := range failurePhases {
			if p != "" && a.Status.Phase == p {
				return true
			}
		}
		return false
	})
}

// waitFor polls the application until done holds; hopeless fails the wait early.
func (s *scenario) waitFor(name, what string, done, hopeless func(*v1beta1.FlinkApplication) bool) *v1beta1.FlinkApplication {
	s.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var last *v1beta1.FlinkApplication
	var lastErr error
	for {
		app, err := s.get(name)
		if err == nil {
			last, lastErr = app, nil
			if done(app) {
				return app
			}
			if hopeless != nil && hopeless(app) {
				s.t.Fatalf("%s/%s can no longer reach %s: %s", s.ns, name, what, testkit.Describe(app))
			}
		} else {
			lastErr = err
		}
		if time.Now().After(deadline) {
			if last == nil {
				s.t.Fatalf("%s/%s did not reach %s within %s: %v", s.ns, name, what, waitTimeout, lastErr)
			}
			s.t.Fatalf("%s/%s did not reach %s within %s: %s", s.ns, name, what, waitTimeout, testkit.Describe(last))
		}
		time.Sleep(pollInterval)
	}
}

// eventually polls check until it holds, failing the test with its last explanation.
func (s *scenario) eventually(what string, check func() (ok bool, why string)) {
	s.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ok, why := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: not within %s: %s", what, waitTimeout, why)
		}
		time.Sleep(pollInterval)
	}
}

// jobID is Lyft's GetJobID: the job of the version being deployed under BlueGreen, else
// status.jobStatus.jobID.
func jobID(app *v1beta1.FlinkApplication) string {
	if app.Spec.DeploymentMode == v1beta1.DeploymentModeBlueGreen && len(app.Status.VersionStatuses) > 0 {
		return app.Status.VersionStatuses[currentStatusIndex(app)].JobStatus.JobID
	}
	return app.Status.JobStatus.JobID
}

// currentStatusIndex is Lyft's GetCurrentStatusIndex: the version status of the version being
// deployed, 0 when none is.
func currentStatusIndex(app *v1beta1.FlinkApplication) int {
	switch app.Status.Phase {
	case v1beta1.PhaseRunning, v1beta1.PhaseDeployFailed, v1beta1.PhaseSavepointing, v1beta1.PhaseDeleting:
		return 0
	}
	if app.Status.DeployHash == "" || len(app.Status.VersionStatuses) < 2 {
		return 0
	}
	return 1
}

// flinkURL is the REST address of the cluster the application's Service points at, which is
// where Lyft's FlinkAPIGet goes (through kubectl proxy to the Service <app>, or under BlueGreen to
// <app>-<version>). The simulator serves each cluster under its versioned Service's name.
func (s *scenario) flinkURL(app *v1beta1.FlinkApplication, endpoint string) string {
	s.t.Helper()
	service := flink.GenericServiceName(app)
	if app.Spec.DeploymentMode == v1beta1.DeploymentModeBlueGreen {
		version := app.Status.UpdatingVersion
		if version == "" {
			version = app.Status.DeployVersion
		}
		service = flink.VersionServiceName(app, version)
	}
	svc, err := env.Kube.CoreV1().Services(s.ns).Get(s.ctx, service, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("Service %s of %s: %v", service, app.Name, err)
	}
	hash := svc.Spec.Selector[flink.HashLabel]
	return fmt.Sprintf("%s/%s/%s/%s", env.FlinkURL, s.ns, flink.VersionedServiceName(app, hash), strings.TrimPrefix(endpoint, "/"))
}

// flinkAPI is Lyft's FlinkAPIGet and FlinkAPIPatch: a REST call to the application's cluster,
// its JSON answer decoded.
func (s *scenario) flinkAPI(method string, app *v1beta1.FlinkApplication, endpoint string) (interface{}, error) {
	req, err := http.NewRequestWithContext(s.ctx, method, s.flinkURL(app, endpoint), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("request failed with code %d: %s", resp.StatusCode, body)
	}
	var result interface{}
	if err := json.Unmarshal(body, &result); err != nil {
		return nil, err
	}
	return result, nil
}

func (s *scenario) flinkGet(app *v1beta1.FlinkApplication, endpoint string) interface{} {
	s.t.Helper()
	res, err := s.flinkAPI(http.MethodGet, app, endpoint)
	if err != nil {
		s.t.Fatalf("GET %s of %s: %v", endpoint, app.Name, err)
	}
	return res
}

// restoredFrom is "latest.restored" of the job's checkpoint statistics (GET
// jobs/:id/checkpoints), which Lyft reads to tell how a job started; nil when it restored nothing.
func (s *scenario) restoredFrom(app *v1beta1.FlinkApplication) map[string]interface{} {
	s.t.Helper()
	body := s.flinkGet(app, fmt.Sprintf("jobs/%s/checkpoints", jobID(app))).(map[string]interface{})
	latest, _ := body["latest"].(map[string]interface{})
	restored, _ := latest["restored"].(map[string]interface{})
	return restored
}

// waitForAllTasksRunning is Lyft's WaitForAllTasksRunning: every vertex of the application's job
// RUNNING with all its tasks. Lyft then sleeps 5 s because real Flink reports tasks running a
// moment early; the simulator does not.
func (s *scenario) waitForAllTasksRunning(name string) {
	s.t.Helper()
	app := s.mustGet(name)
	endpoint := "jobs/" + jobID(app)
	s.eventually("all tasks of "+name+" running", func() (bool, string) {
		res, err := s.flinkAPI(http.MethodGet, app, endpoint)
		if err != nil {
			return false, err.Error()
		}
		vertices, _ := res.(map[string]interface{})["vertices"].([]interface{})
		for _, v := range vertices {
			if !vertexRunning(v.(map[string]interface{})) {
				return false, fmt.Sprintf("vertex %v", v)
			}
		}
		return len(vertices) > 0, "no vertices"
	})
}

func vertexRunning(vertex map[string]interface{}) bool {
	tasks, ok := vertex["tasks"].(map[string]interface{})
	if vertex["status"] != "RUNNING" || !ok {
		return false
	}
	running, _ := tasks["RUNNING"].(float64)
	parallelism, _ := vertex["parallelism"].(float64)
	return running == parallelism
}

// jobOverview is Lyft's GetJobOverview: the application's job as GET /jobs lists it.
func (s *scenario) jobOverview(app *v1beta1.FlinkApplication) map[string]interface{} {
	s.t.Helper()
	jobs := s.flinkGet(app, "/jobs").(map[string]interface{})
	list, _ := jobs["jobs"].([]interface{})
	for _, j := range list {
		job := j.(map[string]interface{})
		if job["id"] == jobID(app) {
			return job
		}
	}
	return nil
}

// lastState is the last state Flink gave a job, from the simulator's record of every job.
func (s *scenario) lastState(name, id string) string {
	s.t.Helper()
	for _, r := range env.Fleet.Timeline().Jobs(s.ns + "/" + name) {
		if r.JobID == id && len(r.States) > 0 {
			return r.States[len(r.States)-1].State
		}
	}
	s.t.Fatalf("the simulator never ran job %s of %s", id, name)
	return ""
}

// pods lists the pods with a label selector, as Lyft's tests do with integTest=<test>.
func (s *scenario) pods(selector string) []corev1.Pod {
	s.t.Helper()
	pods, err := env.Kube.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		s.t.Fatalf("listing pods %s: %v", selector, err)
	}
	return pods.Items
}

// assertPodImages is Lyft's check that n pods carry the label and all run image.
func (s *scenario) assertPodImages(selector string, n int, image string) {
	s.t.Helper()
	pods := s.pods(selector)
	if len(pods) != n {
		s.t.Errorf("%d pods with %s, want %d", len(pods), selector, n)
	}
	for _, pod := range pods {
		if got := pod.Spec.Containers[0].Image; got != image {
			s.t.Errorf("pod %s runs %s, want %s", pod.Name, got, image)
		}
	}
}

// waitOldPodsGone is Lyft's "wait for the old cluster to be cleaned up": no pod of the application
// from the cluster with hash is left. Lyft reads the hash from the pods' flink-app-hash annotation;
// flinkfsm's pods carry it as the flink-app-hash label, as Lyft's pods do too.
func (s *scenario) waitOldPodsGone(name string, hashes ...string) {
	s.t.Helper()
	if err := theSuite.GarbageCollectorReady(); err != nil {
		s.t.Fatal(err)
	}
	s.eventually("old pods of "+name+" gone", func() (bool, string) {
		for _, pod := range s.pods(flink.AppLabel + "=" + name) {
			for _, h := range hashes {
				if h != "" && pod.Labels[flink.HashLabel] == h {
					return false, "pod " + pod.Name + " of " + h + " still there"
				}
			}
		}
		return true, ""
	})
}

// waitNoPods is Lyft's closing loop: wait until all pods with the selector are gone.
func (s *scenario) waitNoPods(selector string) {
	s.t.Helper()
	if err := theSuite.GarbageCollectorReady(); err != nil {
		s.t.Fatal(err)
	}
	s.eventually("all pods with "+selector+" gone", func() (bool, string) {
		n := len(s.pods(selector))
		return n == 0, fmt.Sprintf("%d left", n)
	})
}

// deleteApp deletes the application.
func (s *scenario) deleteApp(name string) {
	s.t.Helper()
	if err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Delete(s.ctx, name, metav1.DeleteOptions{}); err != nil {
		s.t.Fatalf("deleting %s: %v", name, err)
	}
}

// waitOnlyTestFinalizer is Lyft's loop after a delete: the operator has dealt with the job and
// removed its finalizer, and only the test's holds the object.
func (s *scenario) waitOnlyTestFinalizer(name string) *v1beta1.FlinkApplication {
	s.t.Helper()
	return s.waitFor(name, "only the test's finalizer left", func(a *v1beta1.FlinkApplication) bool {
		return len(a.Finalizers) == 1 && a.Finalizers[0] == testFinalizer
	}, nil)
}

// releaseTestFinalizer removes the test's finalizer, letting the deleted application go.
func (s *scenario) releaseTestFinalizer(name string) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := s.get(name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		app.Finalizers = nil
		_, err = env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Update(s.ctx, app, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("removing the test finalizer of %s: %v", name, err)
	}
}

// jobManager is the simulated JobManager of the cluster with this hash.
func (s *scenario) jobManager(name, hash string) *flinksim.JobManager {
	s.t.Helper()
	jm := env.Fleet.JobManager(s.ns, name+"-"+hash)
	if jm == nil {
		s.t.Fatalf("no simulated JobManager is up for %s/%s-%s", s.ns, name, hash)
	}
	return jm
}

// failingTasks stands for Lyft's /checkpoints/fail file, which makes the test jar's MaybeFail
// operator throw on every record of every job whose pods lack SKIP_INDUCED_FAILURE=true. The
// simulator runs no jar code, so while the file "exists" the tasks of each such job of the
// application are failed every quarter second through the simulator's fault injection
// (FailTasksNow); the image's restart strategy restarts them. stop removes the file.
func (s *scenario) failingTasks(name string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(250 * time.Millisecond):
			}
			deps, err := env.Kube.AppsV1().Deployments(s.ns).List(s.ctx, metav1.ListOptions{
				LabelSelector: flink.AppLabel + "=" + name + "," + flink.ComponentLabel + "=" + flink.JobManagerComponent})
			if err != nil {
				continue
			}
			for _, d := range deps.Items {
				if skipsInducedFailure(d.Spec.Template.Spec.Containers) {
					continue
				}
				jm := env.Fleet.JobManager(s.ns, name+"-"+d.Labels[flink.HashLabel])
				if jm == nil {
					continue
				}
				for _, j := range jm.Jobs() {
					if j.State == "RUNNING" {
						jm.FailTasksNow(j.ID)
					}
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

func skipsInducedFailure(containers []corev1.Container) bool {
	for _, c := range containers {
		for _, e := range c.Env {
			if e.Name == "SKIP_INDUCED_FAILURE" && e.Value == "true" {
				return true
			}
		}
	}
	return false
}

// addEnv appends an environment variable to both JobManager and TaskManager, as Lyft's tests do.
func addEnv(app *v1beta1.FlinkApplication, name, value string) {
	v := corev1.EnvVar{Name: name, Value: value}
	app.Spec.JobManagerConfig.EnvConfig.Env = append(app.Spec.JobManagerConfig.EnvConfig.Env, v)
	app.Spec.TaskManagerConfig.EnvConfig.Env = append(app.Spec.TaskManagerConfig.EnvConfig.Env, v)
}

// assertNoOverlaps fails the test if two jobs of one application were ever alive at once (a
// BlueGreen application may run two, never three).
func (s *scenario) assertNoOverlaps() {
	for _, name := range s.apps {
		suite.CheckNoOverlaps(s.t, env.Fleet.Timeline(), s.ns+"/"+name, s.blueGreen[name])
	}
}

// logDiagnostics logs each application's state, Events and jobs, and the operator's lines about
// the namespace.
func (s *scenario) logDiagnostics() {
	t := s.t
	t.Logf("logs in %s; cluster logs in %s", env.Dir+"/logs", env.Cluster.LogDir())
	events, _ := env.Kube.CoreV1().Events(s.ns).List(s.ctx, metav1.ListOptions{})
	for _, name := range s.apps {
		if app, err := s.get(name); err == nil {
			t.Logf("%s: %s", name, testkit.Describe(app))
		}
		if events != nil {
			for _, e := range events.Items {
				if e.InvolvedObject.Name == name {
					t.Logf("  event %s %s: %s", e.Type, e.Reason, e.Message)
				}
			}
		}
		for _, j := range env.Fleet.Timeline().Jobs(s.ns + "/" + name) {
			t.Logf("  flink job %s on %s from %q: %v", j.JobID, j.JobManager, j.RestoredFrom, j.States)
		}
	}
	t.Logf("operator log lines about %s (last 40):\n%s", s.ns, testkit.LinesAbout(env.OperatorLog(), s.ns, 40))
}
