package migrate

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/cli/convert"
	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
)

// world is the two API servers a migration talks to, the Apache operator acting on one, and a
// clock that moves only when the migration waits.
type world struct {
	t       *testing.T
	apache  *fakeApache
	fsm     *appfake.Clientset
	faults  *faults
	clock   *fakeClock
	out     bytes.Buffer
	creates int // flinkfsm objects created (a create whose answer was lost counts)
	convert func([]byte) ([]byte, []string, error)
}

func newWorld(t *testing.T, obj *unstructured.Unstructured, fsmObjects ...runtime.Object) *world {
	w := &world{t: t, faults: &faults{}, clock: &fakeClock{now: time.Date(2026, 1, 1, 12, 5, 0, 0, time.UTC)}, convert: fakeConvert}
	w.apache = newFakeApache(t, obj, w.faults)
	w.fsm = appfake.NewSimpleClientset(fsmObjects...)
	w.fsm.PrependReactor("create", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		apply, err := w.faults.write()
		if !apply {
			return true, nil, err
		}
		create := action.(k8stesting.CreateAction)
		if cerr := w.fsm.Tracker().Create(create.GetResource(), create.GetObject(), create.GetNamespace()); cerr != nil {
			return true, nil, cerr
		}
		w.creates++
		return true, create.GetObject(), err
	})
	return w
}

func (w *world) migrator() *Migrator {
	return &Migrator{Apache: w.apache.client, Flinkfsm: w.fsm, Convert: w.convert, Clock: w.clock, Out: &w.out, Poll: 2 * time.Second}
}

func (w *world) request() Request {
	return Request{Kind: w.apache.kind, Namespace: namespace, Name: w.apache.name, Timeout: 10 * time.Minute}
}

func (w *world) run(req Request) error {
	w.t.Helper()
	w.out.Reset()
	err := w.migrator().Run(context.Background(), req)
	w.t.Logf("run output:\n%s", w.out.String())
	return err
}

// record is the migration's record on the Apache object; nil when it has none.
func (w *world) record() *record {
	r, err := recordOf(apacheObject{kind: w.apache.kind, u: w.apache.object()})
	require.NoError(w.t, err)
	return r
}

// application is the FlinkApplication created; nil when there is none.
func (w *world) application(name string) *v1beta1.FlinkApplication {
	app, err := w.fsm.FlinkV1beta1().FlinkApplications(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return app
}

func (w *world) sessionJob(name string) *v1beta1.FlinkSessionJob {
	job, err := w.fsm.FlinkV1beta1().FlinkSessionJobs(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return job
}

// reason is the Reason of a migration's error.
func reason(t *testing.T, err error) Reason {
	t.Helper()
	e, ok := err.(*Error)
	require.True(t, ok, "a migration error, not %T: %v", err, err)
	return e.Reason
}

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	return ctx.Err()
}

// fakeConvert converts as convert.Convert does, but application-mode FlinkDeployments, which it
// converts to a FlinkApplication carrying only what the tests look at (the image, the parallelism,
// the upgrade mode and the savepoint the job started from): the migration's tests do not follow the
// converter's choices.
func fakeConvert(in []byte) ([]byte, []string, error) {
	var doc map[string]interface{}
	if err := yaml.Unmarshal(in, &doc); err != nil {
		return nil, nil, err
	}
	if doc["kind"] != FlinkDeployment.Name {
		return realConvert(in)
	}
	u := unstructured.Unstructured{Object: doc}
	if _, found, _ := unstructured.NestedFieldNoCopy(doc, "status"); found {
		return nil, nil, fmt.Errorf("the converter was given the Apache object's status")
	}
	image, _, _ := unstructured.NestedString(doc, "spec", "image")
	parallelism, _, _ := unstructured.NestedInt64(doc, "spec", "job", "parallelism")
	mode, _, _ := unstructured.NestedString(doc, "spec", "job", "upgradeMode")
	state, _, _ := unstructured.NestedString(doc, "spec", "job", "state")
	initial, _, _ := unstructured.NestedString(doc, "spec", "job", "initialSavepointPath")
	app := &v1beta1.FlinkApplication{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.SchemeGroupVersion.String(), Kind: v1beta1.FlinkApplicationKind},
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), Labels: u.GetLabels(), Annotations: u.GetAnnotations()},
	}
	app.Spec.Image = image
	app.Spec.Parallelism = int32(parallelism)
	app.Spec.SavepointPath = initial
	app.Spec.UpgradeMode = map[string]v1beta1.UpgradeMode{upgradeSavepoint: v1beta1.UpgradeModeSavepoint,
		upgradeLastState: v1beta1.UpgradeModeLastState, upgradeStateless: v1beta1.UpgradeModeStateless}[strings.ToLower(mode)]
	if state == jobSuspended {
		app.Spec.State = v1beta1.JobStateSuspended
	}
	out, err := yaml.Marshal(app)
	if err != nil {
		return nil, nil, err
	}
	warnings := []string{"FlinkDeployment/" + u.GetName() + ": spec.jobManager.resource.cpu: flinkfsm sets requests, not limits"}
	if len(u.GetFinalizers()) > 0 {
		warnings = append(warnings, "FlinkDeployment/"+u.GetName()+": metadata.finalizers: the Apache operator's finalizers")
	}
	return append([]byte("---\n"), out...), warnings, nil
}

// realConvert is convert.Convert, its warnings as text.
func realConvert(in []byte) ([]byte, []string, error) {
	out, report, err := convert.Convert(in)
	var warnings []string
	for _, w := range report.Warnings {
		warnings = append(warnings, w.String())
	}
	return out, warnings, err
}

// sessionCluster is the FlinkSessionCluster a converted FlinkSessionJob of "session" runs on.
func sessionCluster() *v1beta1.FlinkSessionCluster {
	return &v1beta1.FlinkSessionCluster{ObjectMeta: metav1.ObjectMeta{Name: "session", Namespace: namespace}}
}
