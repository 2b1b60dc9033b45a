package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

const (
	// waitTimeout bounds every wait for the operator: generous for a loaded 2-core machine, yet far
	// below what a stuck phase would take to be noticed otherwise.
	waitTimeout = 60 * time.Second
	// pollInterval is how often waits look again.
	pollInterval = 150 * time.Millisecond

	// diagnosticsEnv, when set, logs every test's diagnostics, not only those of failed tests.
	diagnosticsEnv = "FLINKFSM_E2E_DIAGNOSTICS"

	testJar   = "wordcount.jar"
	testImage = "flinkfsm.test/wordcount:v1"
)

// scenario is one test's view of the shared environment: its own namespace and the applications it
// created there, which are checked for overlapping jobs when the test ends.
type scenario struct {
	t    *testing.T
	ctx  context.Context
	ns   string
	apps []string
	// blueGreen are the applications created with deploymentMode BlueGreen, whose two versions
	// run their jobs side by side by design.
	blueGreen map[string]bool
}

// newScenario creates the test's namespace. When the test ends, no job of any application it
// created may have overlapped another (a BlueGreen application may run two at once, never three),
// and a failed test logs what the operator and Flink did.
func newScenario(t *testing.T) *scenario {
	t.Helper()
	s := &scenario{t: t, ctx: context.Background()}
	// A generated suffix keeps -count=N runs apart.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: testkit.NamespacePrefix("", t.Name())}}
	created, err := env.Kube.CoreV1().Namespaces().Create(s.ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace for %s: %v", t.Name(), err)
	}
	s.ns = created.Name
	began := time.Now()
	// Cleanups run last-registered first: the overlap check runs before the diagnostics, so that
	// an overlap found there is explained too.
	t.Cleanup(func() {
		if t.Failed() || os.Getenv(diagnosticsEnv) != "" {
			s.logDiagnostics()
		}
		t.Logf("wall time %s", time.Since(began).Round(100*time.Millisecond))
	})
	t.Cleanup(s.assertNoOverlaps)
	return s
}

// coreVersions are the oldest and newest supported Flink releases, on which the core scenarios run
// (deploy, savepoint and LastState upgrades, suspend and resume, session jobs); the rest of the
// suite runs on appSpec's 1.20.
var coreVersions = []string{v1beta1.SupportedFlinkVersions[0], v1beta1.SupportedFlinkVersions[len(v1beta1.SupportedFlinkVersions)-1]}

// onFlink makes a cluster run a Flink release: its spec says so, and its JobManager's environment
// carries FLINK_VERSION, which is where the simulator reads the release the image would run.
func onFlink(version string, cs *v1beta1.ClusterSpec) {
	cs.FlinkVersion = version
	env := &cs.JobManagerConfig.EnvConfig.Env
	*env = append(*env, corev1.EnvVar{Name: "FLINK_VERSION", Value: version})
}

// appSpec is the spec every test starts from: the wordcount example, sized small, with its
// savepoints and checkpoints in the simulator's shared storage.
func appSpec() v1beta1.FlinkApplicationSpec {
	small := &corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}
	slots := int32(2)
	return v1beta1.FlinkApplicationSpec{
		ClusterSpec: v1beta1.ClusterSpec{
			Image:        testImage,
			FlinkVersion: "1.20",
			FlinkConfig: v1beta1.FlinkConfig{
				"state.savepoints.dir":  "file:///flink/savepoints",
				"state.checkpoints.dir": "file:///flink/checkpoints",
			},
			JobManagerConfig: v1beta1.JobManagerConfig{Resources: small},
		},
		TaskManagerConfig: v1beta1.TaskManagerConfig{Resources: small, TaskSlots: &slots},
		JarName:           testJar,
		EntryClass:        "org.apache.flink.WordCount",
		Parallelism:       3,
		DeleteMode:        v1beta1.DeleteModeForceCancel,
	}
}

// create creates an application from appSpec changed by edit.
func (s *scenario) create(name string, edit func(*v1beta1.FlinkApplicationSpec)) *v1beta1.FlinkApplication {
	s.t.Helper()
	app := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns}, Spec: appSpec()}
	if edit != nil {
		edit(&app.Spec)
	}
	created, err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Create(s.ctx, app, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("creating %s/%s: %v", s.ns, name, err)
	}
	s.apps = append(s.apps, name)
	if app.Spec.DeploymentMode == v1beta1.DeploymentModeBlueGreen {
		if s.blueGreen == nil {
			s.blueGreen = map[string]bool{}
		}
		s.blueGreen[name] = true
	}
	return created
}

// createRunning creates an application and waits until its first job runs.
func (s *scenario) createRunning(name string, edit func(*v1beta1.FlinkApplicationSpec)) *v1beta1.FlinkApplication {
	s.t.Helper()
	s.create(name, edit)
	return s.waitRunning(name, "")
}

// update changes the spec, retrying on the conflicts the operator's status writes cause.
func (s *scenario) update(name string, edit func(*v1beta1.FlinkApplicationSpec)) *v1beta1.FlinkApplication {
	s.t.Helper()
	var updated *v1beta1.FlinkApplication
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(&app.Spec)
		updated, err = env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Update(s.ctx, app, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("updating %s/%s: %v", s.ns, name, err)
	}
	return updated
}

func (s *scenario) get(name string) (*v1beta1.FlinkApplication, error) {
	return env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Get(s.ctx, name, metav1.GetOptions{})
}

// waitFor polls the application until done holds. It fails the test with the application's phase,
// reason and history when waitTimeout passes or hopeless says the wait cannot succeed any more.
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

// waitRunning waits until a job runs on a cluster other than notHash (empty for a first deploy).
func (s *scenario) waitRunning(name, notHash string) *v1beta1.FlinkApplication {
	s.t.Helper()
	what := "Running"
	if notHash != "" {
		what = "Running on a cluster other than " + notHash
	}
	return s.waitFor(name, what, func(a *v1beta1.FlinkApplication) bool {
		st := a.Status
		return st.Phase == v1beta1.PhaseRunning && st.DeployHash != "" && st.DeployHash != notHash &&
			st.JobStatus.JobID != "" && st.JobStatus.State == v1beta1.JobRunning
	}, inPhase(v1beta1.PhaseDeployFailed))
}

// waitPhase waits until the application is in phase.
func (s *scenario) waitPhase(name string, phase v1beta1.FlinkApplicationPhase) *v1beta1.FlinkApplication {
	s.t.Helper()
	return s.waitFor(name, string(phase), inPhase(phase), nil)
}

func inPhase(phase v1beta1.FlinkApplicationPhase) func(*v1beta1.FlinkApplication) bool {
	return func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == phase }
}

// waitGone waits until the application no longer exists.
func (s *scenario) waitGone(name string) {
	s.t.Helper()
	s.eventually(name+" deleted", func() (bool, string) {
		app, err := s.get(name)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, testkit.Describe(app)
	})
}

// eventually polls check until it holds, failing the test with check's last explanation after
// waitTimeout.
func (s *scenario) eventually(what string, check func() (ok bool, why string)) {
	s.t.Helper()
	s.pollUntil(what, pollInterval, check)
}

// pollUntil is eventually with its own interval, for moments a test must not miss.
func (s *scenario) pollUntil(what string, every time.Duration, check func() (ok bool, why string)) {
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
		time.Sleep(every)
	}
}

// events are the Events the operator emitted about an application, oldest first.
func (s *scenario) events(name string) []corev1.Event {
	s.t.Helper()
	list, err := env.Kube.CoreV1().Events(s.ns).List(s.ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Fatalf("listing events in %s: %v", s.ns, err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "FlinkApplication" && e.InvolvedObject.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// waitFinalSavepointEvent waits for the FinalSavepoint Event naming path. Events are recorded
// asynchronously, possibly after the application is gone; the operator's last one about a deletion
// is Deleted, so once that is there without it, it will not come.
func (s *scenario) waitFinalSavepointEvent(name, path string) {
	s.t.Helper()
	s.eventually("a FinalSavepoint Event naming "+path, func() (bool, string) {
		var reasons []string
		for _, e := range s.events(name) {
			if e.Reason == "FinalSavepoint" && strings.Contains(e.Message, path) {
				return true, ""
			}
			reasons = append(reasons, e.Reason)
		}
		if len(reasons) > 0 && reasons[len(reasons)-1] == "Deleted" {
			s.t.Fatalf("the deletion finished without a FinalSavepoint Event naming %s; events: %s", path, strings.Join(reasons, ", "))
		}
		return false, "events so far: " + strings.Join(reasons, ", ")
	})
}

// logDiagnostics logs, for a failed test, each application's state, its Events, and the operator's
// log lines about this namespace.
func (s *scenario) logDiagnostics() {
	t := s.t
	t.Logf("logs in %s; cluster logs in %s", env.Dir+"/logs", env.Cluster.LogDir())
	for _, name := range s.apps {
		if app, err := s.get(name); err == nil {
			t.Logf("%s: %s", name, testkit.Describe(app))
		}
		for _, e := range s.events(name) {
			t.Logf("  event %s %s: %s", e.Type, e.Reason, e.Message)
		}
		for _, j := range env.Fleet.Timeline().Jobs(s.ns + "/" + name) {
			t.Logf("  flink job %s on %s from %q: %v (lost at %v)", j.JobID, j.JobManager, j.RestoredFrom, j.States, j.LostAt)
		}
	}
	t.Logf("operator log lines about %s (last 40):\n%s", s.ns, testkit.LinesAbout(env.OperatorLog(), s.ns, 40))
	t.Logf("simulator lines about %s (last 20):\n%s", s.ns, testkit.LinesAbout(testkit.ReadFile(theSuite.EnvLogPath), s.ns, 20))
}
