package portable

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/flinkfsm/flinkfsm/integ/testkit"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/cli"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
)

const pollInterval = 250 * time.Millisecond

// scenario is one test's namespace on the target, with the applications it created there.
type scenario struct {
	t    *testing.T
	c    *cluster
	ctx  context.Context
	ns   string
	apps []string
}

// newScenario creates the test's namespace (and, against real Flink, its state volume claim). The
// namespace is deleted when the test passes, which frees a real cluster's memory for the next test;
// a failed test keeps it, and logs its applications, Events and the operator's lines about it.
func newScenario(t *testing.T) *scenario {
	t.Helper()
	c := suite(t)
	s := &scenario{t: t, c: c, ctx: context.Background()}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: testkit.NamespacePrefix("", t.Name())}}
	created, err := c.Kube.CoreV1().Namespaces().Create(s.ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace for %s: %v", t.Name(), err)
	}
	s.ns = created.Name
	began := time.Now()
	t.Cleanup(func() {
		if t.Failed() {
			s.logDiagnostics()
		} else {
			_ = c.Kube.CoreV1().Namespaces().Delete(context.Background(), s.ns, metav1.DeleteOptions{})
		}
		t.Logf("wall time %s", time.Since(began).Round(100*time.Millisecond))
	})
	if target.StateVolume {
		if _, err := c.Kube.CoreV1().PersistentVolumeClaims(s.ns).Create(s.ctx, target.StateClaim(s.ns), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating the state volume claim: %v", err)
		}
	}
	return s
}

// needsSharedState skips a test whose new Flink cluster must read the savepoint the previous one
// took, where the target cannot give the clusters shared storage.
func (s *scenario) needsSharedState() {
	s.t.Helper()
	if s.c.NoSharedState != "" {
		s.t.Skipf("needs savepoints a new Flink cluster can read: %s", s.c.NoSharedState)
	}
}

// create creates an application from the target's spec changed by edit.
func (s *scenario) create(name string, edit func(*v1beta1.FlinkApplicationSpec)) *v1beta1.FlinkApplication {
	s.t.Helper()
	app := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns}, Spec: target.AppSpec()}
	if edit != nil {
		edit(&app.Spec)
	}
	created, err := s.c.Apps.FlinkV1beta1().FlinkApplications(s.ns).Create(s.ctx, app, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("creating %s/%s: %v", s.ns, name, err)
	}
	s.apps = append(s.apps, name)
	return created
}

// createRunning creates an application and waits until its first job runs.
func (s *scenario) createRunning(name string, edit func(*v1beta1.FlinkApplicationSpec)) *v1beta1.FlinkApplication {
	s.t.Helper()
	s.create(name, edit)
	return s.waitRunning(name, "")
}

// update changes the spec, retrying on the conflicts the operator's status writes cause.
func (s *scenario) update(name string, edit func(*v1beta1.FlinkApplicationSpec)) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := s.get(name)
		if err != nil {
			return err
		}
		edit(&app.Spec)
		_, err = s.c.Apps.FlinkV1beta1().FlinkApplications(s.ns).Update(s.ctx, app, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("updating %s/%s: %v", s.ns, name, err)
	}
}

func (s *scenario) get(name string) (*v1beta1.FlinkApplication, error) {
	return s.c.Apps.FlinkV1beta1().FlinkApplications(s.ns).Get(s.ctx, name, metav1.GetOptions{})
}

// waitFor polls the application until done holds, failing the test after the target's wait
// timeout or as soon as hopeless holds.
func (s *scenario) waitFor(name, what string, done, hopeless func(*v1beta1.FlinkApplication) bool) *v1beta1.FlinkApplication {
	s.t.Helper()
	var last *v1beta1.FlinkApplication
	s.eventually(name+" "+what, func() (bool, string) {
		app, err := s.get(name)
		if err != nil {
			return false, err.Error()
		}
		last = app
		if hopeless != nil && hopeless(app) {
			s.t.Fatalf("%s/%s can no longer reach %s: %s", s.ns, name, what, testkit.Describe(app))
		}
		return done(app), testkit.Describe(app)
	})
	return last
}

// waitRunning waits until a job runs on a cluster other than notHash (empty for a first deploy).
func (s *scenario) waitRunning(name, notHash string) *v1beta1.FlinkApplication {
	s.t.Helper()
	return s.waitFor(name, "Running", func(a *v1beta1.FlinkApplication) bool {
		st := a.Status
		return st.Phase == v1beta1.PhaseRunning && st.DeployHash != "" && st.DeployHash != notHash &&
			st.JobStatus.JobID != "" && st.JobStatus.State == v1beta1.JobRunning
	}, inPhase(v1beta1.PhaseDeployFailed))
}

func inPhase(phase v1beta1.FlinkApplicationPhase) func(*v1beta1.FlinkApplication) bool {
	return func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == phase }
}

// eventually polls check until it holds, failing the test with its last explanation after the
// target's wait timeout.
func (s *scenario) eventually(what string, check func() (ok bool, why string)) {
	s.t.Helper()
	deadline := time.Now().Add(target.WaitTimeout)
	for {
		ok, why := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: not within %s: %s", what, target.WaitTimeout, why)
		}
		time.Sleep(pollInterval)
	}
}

// waitClusterGone waits until the Deployments and Service of the application's cluster with this
// hash are deleted.
func (s *scenario) waitClusterGone(name, hash string) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("cluster %s-%s deleted", name, hash), func() (bool, string) {
		for _, d := range []string{name + "-" + hash + "-jm", name + "-" + hash + "-tm"} {
			if _, err := s.c.Kube.AppsV1().Deployments(s.ns).Get(s.ctx, d, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("Deployment %s still there (err %v)", d, err)
			}
		}
		if _, err := s.c.Kube.CoreV1().Services(s.ns).Get(s.ctx, name+"-"+hash, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Sprintf("Service %s-%s still there (err %v)", name, hash, err)
		}
		return true, ""
	})
}

// events are the Events about an application, oldest first.
func (s *scenario) events(name string) []corev1.Event {
	s.t.Helper()
	list, err := s.c.Kube.CoreV1().Events(s.ns).List(s.ctx, metav1.ListOptions{})
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

// savepointRecord is the newest entry of status.savepoints taken for purpose.
func savepointRecord(app *v1beta1.FlinkApplication, purpose v1beta1.SavepointPurpose) *v1beta1.SavepointRecord {
	var found *v1beta1.SavepointRecord
	for i := range app.Status.Savepoints {
		if r := &app.Status.Savepoints[i]; r.Trigger == purpose {
			found = r
		}
	}
	return found
}

// ready is the application's Ready condition status.
func ready(app *v1beta1.FlinkApplication) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(app.Status.Conditions, v1beta1.ConditionReady); c != nil {
		return c.Status
	}
	return metav1.ConditionUnknown
}

// plugin runs `kubectl flink ARGS` in process against the target, in the scenario's namespace.
func (s *scenario) plugin(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Run(args, &out, &errOut, func(string, string) (versioned.Interface, string, error) { return s.c.Apps, s.ns, nil })
	s.t.Logf("kubectl flink %s -> %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return code, out.String(), errOut.String()
}

// logDiagnostics logs, for a failed test, each application's state, its Events, and the operator's
// log lines about the namespace.
func (s *scenario) logDiagnostics() {
	t := s.t
	t.Logf("namespace %s kept; %s", s.ns, s.c.Describe)
	for _, name := range s.apps {
		if app, err := s.get(name); err == nil {
			t.Logf("%s: %s", name, testkit.Describe(app))
		}
		for _, e := range s.events(name) {
			t.Logf("  event %s %s: %s", e.Type, e.Reason, e.Message)
		}
	}
	if s.c.OperatorLines != nil {
		t.Logf("operator log lines about %s (last 40):\n%s", s.ns, s.c.OperatorLines(s.ns, 40))
	}
}
