package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The autoscaler on the local cluster in mode Apply (issue 28): a job on the adaptive scheduler is
// rescaled in place, its TaskManagers following its widest vertex, when its load steps up and
// back down; and a rescale the cluster has no room for goes back to the parallelism that ran
// stable. The windows are seconds long so that each test takes about a minute: the operator
// samples every 2 s here (localenv), and a decision needs stabilizationInterval + metricsWindow
// after the job (re)started.

// ordersLoad is a job whose Map takes 100 records a second per subtask; its source and sink take
// far more, and idle.
func ordersLoad(input float64) flinksim.Load {
	return flinksim.Load{
		Vertices: []flinksim.LoadVertex{
			{Name: "Source: orders", Capacity: 5000, Partitions: 12, PendingRecords: true},
			{Name: "Map", Capacity: 100},
			{Name: "Sink: store", Capacity: 5000},
		},
		Input: flinksim.Constant(input),
	}
}

// autoscaleInPlace runs the job on the adaptive scheduler with the autoscaler in mode Apply.
func autoscaleInPlace(spec *v1beta1.FlinkApplicationSpec, stabilization time.Duration) {
	spec.FlinkConfig[flink.SchedulerKey] = "adaptive"
	// Flink's adaptive scheduler rescales a job no sooner than scaling-interval.min (30 s) after it
	// started running, longer than this test's stabilization interval: it would hold every rescale.
	spec.FlinkConfig["jobmanager.adaptive-scheduler.scaling-interval.min"] = "1s"
	spec.Autoscaler = &v1beta1.AutoscalerSpec{
		Mode:                  v1beta1.AutoscalerApply,
		StabilizationInterval: &metav1.Duration{Duration: stabilization},
		// At most a fifth of the window may pass without a sample: 3 s, against samples every 2 s.
		MetricsWindow:  &metav1.Duration{Duration: 15 * time.Second},
		ScaleDownDelay: &metav1.Duration{Duration: 10 * time.Second},
		// The idle source and sink would scale down to 2 (by at most half at a time) beside Map,
		// a change of their own each: held at 3, only the bottleneck moves.
		Vertices: []v1beta1.VertexLimits{{Vertex: "Source: orders", Min: 3}, {Vertex: "Sink: store", Min: 3}},
	}
}

// A step of the input scales the job's bottleneck up and, once the input steps back, down again,
// in place: the same Flink job throughout, rescaled twice by its adaptive scheduler and never
// restarted, with as many TaskManagers as its widest vertex needs at each step. The scale-down
// waits for scaleDownDelay and nothing else changes: two changes in all.
func TestALoadStepScalesTheJobUpAndBackDownInPlace(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	// 200/s keeps Map's 3 subtasks busy 67% of the time: within 70% ± 10, nothing to change.
	if err := env.Fleet.SetLoad(s.ns, "orders", ordersLoad(200)); err != nil {
		t.Fatal(err)
	}
	// A stabilization interval longer than the moment the step below takes after Running, so
	// that the first window sees only the stepped input.
	app := s.createRunning("orders", func(spec *v1beta1.FlinkApplicationSpec) { autoscaleInPlace(spec, 10*time.Second) })
	jobID := app.Status.JobStatus.JobID
	jm := s.jobManager(app)

	// The step up: 380/s is 127% of what Map takes at 3; 6 subtasks take it at 63%.
	s.setInput("orders", 380)
	up := s.waitAutoscaled("orders", 1)
	s.assertScaledInPlace(up, jm, jobID, 6)

	// The step down: at 6 subtasks 200/s is 33%; 3 take it at 67% again.
	s.setInput("orders", 200)
	down := s.waitAutoscaled("orders", 2)
	s.assertScaledInPlace(down, jm, jobID, 3)

	changes := down.Status.Autoscaler.Changes
	if got := describeChanges(changes, s.onlyJob(jm)); got != "Scaled Map 3→6; Scaled Map 6→3" {
		t.Errorf("changes %q, want Map scaled 3→6 then 6→3 and nothing else", got)
	}
	if job := s.onlyJob(jm); job.Rescales != 2 || job.Restarts != 0 {
		t.Errorf("Flink rescaled the job %d times and restarted it %d times, want 2 rescales and no restart", job.Rescales, job.Restarts)
	}
	if jobs := s.timeline("orders"); len(jobs) != 1 {
		t.Errorf("Flink ran %d jobs, want the one job rescaled in place", len(jobs))
	}
	s.eventually("two Autoscaled Events", func() (bool, string) {
		return countEvents(s.events("orders"), "Autoscaled") == 2, fmt.Sprintf("%d so far", countEvents(s.events("orders"), "Autoscaled"))
	})
	for _, e := range s.events("orders") {
		// The autoscaler's Warnings are its way back and a rescale it gave up on.
		if e.Type == corev1.EventTypeWarning && (e.Reason == "ScalingReport" || e.Reason == "ScalingAbandoned") {
			t.Errorf("a Warning about rescales that worked: %s %s", e.Reason, e.Message)
		}
	}
}

// A rescale that cannot run within readinessTimeout goes back, in place, to the parallelism that
// ran stable: here the namespace's ResourceQuota has no room for the third TaskManager that Map's
// 6 subtasks need, so the adaptive scheduler waits for them (resource-stabilization-timeout, 10 s)
// and then runs Map at the 4 slots it has, short of the target.
// The way back is a WentBack change with a cool-down, announced by a Warning. readinessTimeout is
// the application's (spec.readinessTimeoutSeconds), shortened to 15 s for the test.
func TestARescaleWithoutRoomGoesBackInPlace(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	// 380/s from the start: Map needs 6 subtasks from the first window on.
	if err := env.Fleet.SetLoad(s.ns, "orders", ordersLoad(380)); err != nil {
		t.Fatal(err)
	}
	const coolDown = 10 * time.Minute
	app := s.createRunning("orders", func(spec *v1beta1.FlinkApplicationSpec) {
		autoscaleInPlace(spec, 5*time.Second)
		readiness := int32(15)
		spec.ReadinessTimeoutSeconds = &readiness
		spec.Autoscaler.CoolDown = &metav1.Duration{Duration: coolDown}
	})
	jobID := app.Status.JobStatus.JobID
	jm := s.jobManager(app)
	// The JobManager and the two TaskManagers the job runs on, and no more.
	s.limitPods(3)

	back := s.waitFor("orders", "a way back", func(a *v1beta1.FlinkApplication) bool {
		as := a.Status.Autoscaler
		return as != nil && as.Target == nil && len(as.Changes) > 0 && as.Changes[len(as.Changes)-1].Kind == "WentBack"
	}, inPhase(v1beta1.PhaseDeployFailed))
	as := back.Status.Autoscaler
	job := s.onlyJob(jm)
	if got := describeChanges(as.Changes, job); got != "Scaled Map 3→6; WentBack Map 6→3" {
		t.Errorf("changes %q, want Map scaled 3→6, then back 6→3", got)
	}
	wentBack := as.Changes[len(as.Changes)-1].Time.Time
	if as.HoldUntil == nil || as.HoldUntil.Sub(wentBack.Add(coolDown)).Abs() > 2*time.Second {
		t.Errorf("holdUntil %v, want the way back (%s) plus the cool-down (%s)", as.HoldUntil, wentBack.Format(time.TimeOnly), coolDown)
	}
	s.assertScaledInPlace(back, jm, jobID, 3)
	if job.Restarts != 0 || job.Rescales < 1 {
		t.Errorf("Flink rescaled the job %d times and restarted it %d times, want rescales in place only", job.Rescales, job.Restarts)
	}
	s.eventually("a Warning ScalingReport of the way back", func() (bool, string) {
		var seen []string
		for _, e := range s.events("orders") {
			if e.Type == corev1.EventTypeWarning && e.Reason == "ScalingReport" && strings.Contains(e.Message, "goes back") {
				return true, ""
			}
			seen = append(seen, e.Type+" "+e.Reason)
		}
		return false, "events: " + strings.Join(seen, ", ")
	})
}

// setInput steps the input of the application's Load, its topic and the job reading it kept.
func (s *scenario) setInput(name string, perSecond float64) {
	s.t.Helper()
	if err := env.Fleet.SetInput(s.ns, name, flinksim.Constant(perSecond)); err != nil {
		s.t.Fatal(err)
	}
}

// waitAutoscaled waits until the autoscaler has made n changes and carried the last one through.
func (s *scenario) waitAutoscaled(name string, n int) *v1beta1.FlinkApplication {
	s.t.Helper()
	return s.waitFor(name, fmt.Sprintf("%d changes by the autoscaler, carried through", n), func(a *v1beta1.FlinkApplication) bool {
		as := a.Status.Autoscaler
		return as != nil && as.Target == nil && len(as.Changes) == n
	}, func(a *v1beta1.FlinkApplication) bool {
		as := a.Status.Autoscaler
		return a.Status.Phase == v1beta1.PhaseDeployFailed || (as != nil && len(as.Changes) > n)
	})
}

// assertScaledInPlace checks that the application's job is still jobID, running Map at mapParallelism
// in Flink with the others at 3, on as many TaskManagers as Map's subtasks need at 2 slots each.
func (s *scenario) assertScaledInPlace(app *v1beta1.FlinkApplication, jm *flinksim.JobManager, jobID string, mapParallelism int) {
	s.t.Helper()
	if app.Status.JobStatus.JobID != jobID {
		s.t.Errorf("status names job %s, want %s kept in place", app.Status.JobStatus.JobID, jobID)
	}
	job := s.onlyJob(jm)
	p := map[string]int{}
	for i, name := range job.VertexNames {
		p[name] = job.VertexParallelism[i]
	}
	if job.ID != jobID || job.State != "RUNNING" || !job.TasksRunning ||
		p["Map"] != mapParallelism || p["Source: orders"] != 3 || p["Sink: store"] != 3 {
		s.t.Errorf("Flink runs job %s %s (tasks running %v) at %v; want job %s running Map at %d, the others at 3",
			job.ID, job.State, job.TasksRunning, p, jobID, mapParallelism)
	}
	tm, err := env.Kube.AppsV1().Deployments(s.ns).Get(s.ctx, flink.TaskManagerName(app, app.Status.DeployHash), metav1.GetOptions{})
	if want := int32((mapParallelism + 1) / 2); err != nil || tm.Spec.Replicas == nil || *tm.Spec.Replicas != want {
		s.t.Errorf("TaskManager Deployment replicas %v (err %v), want %d for Map's %d subtasks", tm.Spec.Replicas, err, want, mapParallelism)
	}
}

// describeChanges is the autoscaler's changes in words, each vertex by its name in Flink.
func describeChanges(changes []v1beta1.ScalingChange, job flinksim.JobInfo) string {
	names := map[string]string{}
	for i, id := range job.VertexIDs {
		names[id] = job.VertexNames[i]
	}
	var out []string
	for _, c := range changes {
		line := c.Kind
		for _, v := range c.Vertices {
			line += fmt.Sprintf(" %s %d→%d", names[v.ID], v.From, v.To)
		}
		out = append(out, line)
	}
	return strings.Join(out, "; ")
}

func countEvents(events []corev1.Event, reason string) int {
	n := 0
	for _, e := range events {
		if e.Reason == reason {
			n += max(int(e.Count), 1)
		}
	}
	return n
}

// limitPods gives the test's namespace a ResourceQuota of n pods, and waits until the quota
// controller has counted the pods there: until then the API server cannot judge a new pod by it.
func (s *scenario) limitPods(n int) {
	s.t.Helper()
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: s.ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(int64(n), resource.DecimalSI)}},
	}
	if _, err := env.Kube.CoreV1().ResourceQuotas(s.ns).Create(s.ctx, quota, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("creating a ResourceQuota: %v", err)
	}
	s.eventually("the ResourceQuota counted", func() (bool, string) {
		q, err := env.Kube.CoreV1().ResourceQuotas(s.ns).Get(s.ctx, quota.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		used, ok := q.Status.Used[corev1.ResourcePods]
		return ok && used.Value() == int64(n), fmt.Sprintf("status %+v", q.Status)
	})
}
