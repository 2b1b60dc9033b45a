package operator

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	testclock "k8s.io/utils/clock/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flinkapplication"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// restingApp is an application as a steady fleet leaves it: Running, its spec acted on, its job Green.
func restingApp(name string) *v1beta1.FlinkApplication {
	app := appNamed(name)
	app.Generation = 1
	app.Status.Phase = v1beta1.PhaseRunning
	app.Status.ObservedGeneration = 1
	app.Status.JobStatus.State, app.Status.JobStatus.Health = v1beta1.JobRunning, v1beta1.Green
	return app
}

// A new leader, or a restarted operator, finds the fleet in its first lists. What needs it goes
// first; the applications at rest are spread over one statusPollInterval instead of all taken at
// once, none later than its poll would have come.
func TestATakeoverSpreadsTheFirstPassesOfApplicationsAtRest(t *testing.T) {
	clk := testclock.NewFakeClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	poll := 10 * time.Second
	var objs []runtime.Object
	var resting []string
	for _, name := range []string{"r1", "r2", "r3", "r4", "r5", "r6"} {
		objs = append(objs, restingApp(name))
		resting = append(resting, name)
	}
	updating := restingApp("updating")
	updating.Status.Phase = v1beta1.PhaseUpdating
	changed := restingApp("changed")
	changed.Generation = 2
	deleted := restingApp("deleted")
	deleted.DeletionTimestamp, deleted.Finalizers = &metav1.Time{Time: clk.Now()}, []string{"flink.k8s.io/finalizer"}
	failed := restingApp("failed")
	failed.Status.JobStatus.State, failed.Status.JobStatus.Health = v1beta1.JobFailed, v1beta1.Red
	asked := restingApp("asked")
	snapshot := &v1beta1.FlinkSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "asked-now", Namespace: ns},
		Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: v1beta1.FlinkApplicationKind, Name: "asked"}, Type: v1beta1.SnapshotSavepoint}}
	objs = append(objs, updating, changed, deleted, failed, asked, snapshot)
	urgent := []string{"updating", "changed", "deleted", "failed", "asked"}

	cfg := config.Default()
	cfg.StatusPollInterval.Duration = poll
	c := queueOnlyController(t, appfake.NewSimpleClientset(objs...), clk, cfg)

	// taken drains what is ready in the queue, waiting until nothing more comes for a moment.
	taken := func() []string {
		var names []string
		for quiet := time.Now().Add(200 * time.Millisecond); time.Now().Before(quiet); {
			if c.queue.Len() == 0 {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			key, _ := c.queue.Get()
			c.queue.Done(key)
			c.queue.Forget(key)
			if key.Kind == v1beta1.FlinkApplicationKind {
				names = append(names, key.Name)
			}
			quiet = time.Now().Add(200 * time.Millisecond)
		}
		return names
	}
	first := taken()
	for _, name := range urgent {
		assert.Contains(t, first, name, "what needs the operator goes first")
	}
	at := map[string]time.Duration{}
	for _, name := range first {
		at[name] = 0
	}
	step := poll / 10
	perStep := map[time.Duration]int{}
	for elapsed := step; elapsed <= poll+step; elapsed += step {
		clk.Step(step)
		for _, name := range taken() {
			if _, seen := at[name]; !seen {
				at[name] = elapsed
				perStep[elapsed]++
			}
		}
	}
	for _, name := range resting {
		when, ok := at[name]
		require.True(t, ok, "%s is looked at", name)
		assert.Less(t, when, poll+step, "%s within one statusPollInterval", name)
	}
	atOnce := 0
	for _, name := range first {
		for _, r := range resting {
			if name == r {
				atOnce++
			}
		}
	}
	assert.LessOrEqual(t, atOnce, 1, "applications at rest are not all taken at once: %v", first)
	for elapsed, n := range perStep {
		assert.LessOrEqual(t, n, 1, "at most one of six applications at rest in each tenth of the interval (at %s)", elapsed)
	}
	t.Logf("first passes after the start: %v", at)
}

// queueOnlyController runs a controller over fake clients without workers, so that the test
// reads its queue, and returns once its caches have synced and the start has queued its keys.
func queueOnlyController(t *testing.T, apps *appfake.Clientset, clk clock.WithTicker, cfg *config.Config) *Controller {
	env := &flinkapplication.Environment{Environment: kindpass.Environment{
		Kube: kubefake.NewClientset(), Apps: apps, Clock: clk, Recorder: record.NewFakeRecorder(100),
		Config: cfg, Metrics: kindpass.NewMetrics(prometheus.NewRegistry()),
		Flink: client.New(client.DefaultConfig(), prometheus.NewRegistry()),
	}}
	c := NewController(env)
	c.workers = 0
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Run(ctx) }()
	require.Eventually(t, func() bool { return c.queue.Len() > 0 }, 10*time.Second, 5*time.Millisecond, "the caches sync")
	return c
}
