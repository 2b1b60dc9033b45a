//go:build autoscalerbench

package flinkapplication

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaling"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// The autoscaler benchmark (`make bench-autoscaler`; docs/performance.md, "Autoscaler"). The
// operator's real passes (the state machine, its status writes, the autoscaler sampling every
// sampleInterval and applying its decisions) run against a simulated multi-vertex job for hours of
// simulated time on the world's fake clock, and the run is measured from outside: the topic's
// backlog, each vertex's parallelism and busy time as Flink reports them, every change the
// autoscaler recorded, the time the job did not run, and what the operator wrote. It is behind the
// autoscalerbench build tag because a day of simulated time takes a while, and it checks nothing:
// it reports (autoscaler_bench_report_test.go).
//
// The clock moves from one event to the next, never in fixed steps: a pass when the operator asked
// for one (statusPollInterval while Running, at once after a write it must see through), and a
// probe every benchProbeEvery, which reads but never reconciles, so the operator's cadence is its
// own.

var (
	benchScenariosFlag = flag.String("as.scenarios", "step,wave", "scenarios to run, comma-separated (step, wave)")
	benchVariantsFlag  = flag.String("as.variants", "in-place,restart", "how decisions are applied, comma-separated (in-place, restart)")
	benchHoursFlag     = flag.Float64("as.hours", 0, "simulate only this many hours of each scenario; 0 runs each whole")
	benchOutFlag       = flag.String("as.out", "", "write the figures as JSON to this file")
	benchCommitFlag    = flag.String("as.commit", "", "the commit measured, recorded in the JSON")
)

// benchProbeEvery is how often the benchmark reads the job, in simulated time.
const benchProbeEvery = 30 * time.Second

// benchTimings make a rescale cost what a small job's costs in Flink: the tasks cancelled in 2 s,
// and 10 s to schedule and restore them, during which nothing is read and the backlog grows.
var benchTimings = flinksim.Timings{Cancel: 2 * time.Second, Schedule: 10 * time.Second}

// benchScenario is a load over time, cut into phases that are measured one by one.
type benchScenario struct {
	Name   string        `json:"name"`
	About  string        `json:"about"`
	Length time.Duration `json:"-"`
	Phases []benchPhase  `json:"phases"`
	input  flinksim.Rate
}

// benchPhase is a stretch of a scenario. A constant one holds one input rate, reached by a step at
// its start (but for the first).
type benchPhase struct {
	Name     string        `json:"name"`
	From     time.Duration `json:"-"`
	To       time.Duration `json:"-"`
	Constant bool          `json:"constant"`
}

// benchBaseRate is the step scenario's input outside the step, in records per second.
const benchBaseRate = 3000

func benchScenarioList() []benchScenario {
	h := time.Hour
	quarters := []benchPhase{{Name: "00-06h", From: 0, To: 6 * h}, {Name: "06-12h", From: 6 * h, To: 12 * h},
		{Name: "12-18h", From: 12 * h, To: 18 * h}, {Name: "18-24h", From: 18 * h, To: 24 * h}}
	return []benchScenario{
		{
			Name:   "step",
			About:  "3,000 records/s for 1 h, 12,000/s (×4) for 2 h, 3,000/s for 3 h",
			Length: 6 * h,
			input: flinksim.Steps(benchBaseRate, flinksim.Step{At: h, Rate: 4 * benchBaseRate},
				flinksim.Step{At: 3 * h, Rate: benchBaseRate}),
			Phases: []benchPhase{{Name: "base", From: 0, To: h, Constant: true}, {Name: "×4", From: h, To: 3 * h, Constant: true},
				{Name: "base again", From: 3 * h, To: 6 * h, Constant: true}},
		},
		{
			Name:   "wave",
			About:  "a daily wave from 1,500 records/s (at 0 h) to 10,500/s (at 12 h) and back, for 24 h",
			Length: 24 * h,
			input:  flinksim.DailyWave(6000, 4500, 12*h),
			Phases: quarters,
		},
	}
}

// benchLoad is the job: a Kafka source of 24 partitions that reports its backlog, a parse, a keyed
// window aggregate that emits one record per fifty it takes in, and a sink to a slow store, each
// with its own capacity per subtask, and ±5% noise on every per-second metric.
func benchLoad(input flinksim.Rate) flinksim.Load {
	return flinksim.Load{
		Vertices: []flinksim.LoadVertex{
			{Name: "Source: events", Capacity: 10000, Partitions: 24, PendingRecords: true},
			{Name: "Parse", Capacity: 2000},
			{Name: "Window: per-user counts", Capacity: 1000, OutputRatio: 0.02},
			{Name: "Sink: store", Capacity: 50},
		},
		Input: input,
		Noise: 0.05,
		Seed:  28,
	}
}

// benchVariant is how the autoscaler's decisions reach the job.
type benchVariant struct {
	Name      string `json:"name"`
	About     string `json:"about"`
	configure func(*v1beta1.FlinkApplication)
}

// benchVariantList are the ways to apply; another is one entry more.
var benchVariantList = []benchVariant{
	{Name: "in-place", About: "the adaptive scheduler rescales the job in place (jobmanager.scheduler: adaptive)",
		configure: func(a *v1beta1.FlinkApplication) { a.Spec.FlinkConfig[flink.SchedulerKey] = "adaptive" }},
	{Name: "restart", About: "Flink's default scheduler: the job is stopped per upgradeMode and submitted again with a parallelism per vertex",
		configure: func(a *v1beta1.FlinkApplication) { delete(a.Spec.FlinkConfig, flink.SchedulerKey) }},
}

// benchApp is the application: parallelism 4 everywhere to start with, two slots per TaskManager,
// a checkpoint a minute, and the autoscaler in mode Apply with the operator's defaults.
func benchApp(v benchVariant) *v1beta1.FlinkApplication {
	app := wordcount("bench")
	app.Spec.Parallelism = 4
	app.Spec.FlinkConfig["execution.checkpointing.interval"] = "1m"
	app.Spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerApply}
	v.configure(app)
	return app
}

func TestAutoscalerBenchmark(t *testing.T) {
	scenarios := pick(t, "scenario", *benchScenariosFlag, benchScenarioList(), func(s benchScenario) string { return s.Name })
	variants := pick(t, "variant", *benchVariantsFlag, benchVariantList, func(v benchVariant) string { return v.Name })
	report := benchReport{Commit: *benchCommitFlag, GoVersion: goruntime.Version()}
	for _, sc := range scenarios {
		if *benchHoursFlag > 0 {
			sc = sc.clip(time.Duration(*benchHoursFlag * float64(time.Hour)))
		}
		for _, v := range variants {
			t.Run(sc.Name+"/"+v.Name, func(t *testing.T) {
				started := time.Now()
				r := newBenchRun(t, sc, v)
				r.run()
				res := r.result()
				res.WallSeconds = time.Since(started).Seconds()
				report.Runs = append(report.Runs, res)
				report.Settings = r.settings()
			})
		}
	}
	printBenchReport(os.Stdout, report)
	if *benchOutFlag != "" {
		out, err := json.MarshalIndent(report, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(*benchOutFlag, append(out, '\n'), 0o644))
		fmt.Printf("\nwrote %s\n", *benchOutFlag)
	}
}

// pick keeps the items a comma-separated flag names, in its order.
func pick[T any](t *testing.T, what, names string, all []T, name func(T) string) []T {
	var out []T
	for _, n := range strings.Split(names, ",") {
		i := slices.IndexFunc(all, func(x T) bool { return name(x) == strings.TrimSpace(n) })
		if i < 0 {
			t.Fatalf("no %s %q", what, n)
		}
		out = append(out, all[i])
	}
	return out
}

// clip shortens a scenario to length, and its phases with it.
func (s benchScenario) clip(length time.Duration) benchScenario {
	if length >= s.Length {
		return s
	}
	s.Length = length
	var phases []benchPhase
	for _, p := range s.Phases {
		if p.From < length {
			p.To = min(p.To, length)
			phases = append(phases, p)
		}
	}
	s.Phases = phases
	return s
}

// benchRun is one scenario under one variant, as it goes.
type benchRun struct {
	t    *testing.T
	w    *world
	sc   benchScenario
	v    benchVariant
	cfg  autoscaler.Config
	name string
	// origin is when the load started: when the first JobManager did, offset 0 of the input.
	origin time.Time
	// flink reads the probes' metrics with a client of its own, so the operator's REST figures are
	// its own.
	flink      client.API
	probeCalls int64
	// metricCalls counts the requests for vertex metrics, the autoscaler's and the probes'.
	metricCalls atomic.Int64

	vertexIDs, vertexNames []string
	points                 []benchPoint
	changes                []benchChange
	seen                   map[string]bool
	// targetSince is when the target being applied was first seen; applies are those done.
	targetSince time.Time
	applies     []float64
	events      map[string]int
	passes      int
	// shown are the decisions status.autoscaler showed, each when it first did.
	shown []benchShown

	statusWrites, writes atomic.Int64
	// touched counts the status writes that changed each of status's fields.
	mu      sync.Mutex
	touched map[string]int
}

// benchPoint is one probe of the job.
type benchPoint struct {
	At          float64   `json:"t"` // seconds from the start of the load
	Input       float64   `json:"input"`
	Throughput  float64   `json:"throughput"`
	Backlog     float64   `json:"backlog"`
	Running     bool      `json:"running"`
	Parallelism []int     `json:"parallelism"`
	Busy        []float64 `json:"busy,omitempty"` // each vertex's mean busy fraction of its subtasks
}

// benchChange is a change of parallelism the autoscaler recorded.
type benchChange struct {
	At       float64          `json:"t"`
	Kind     string           `json:"kind"`
	Vertices []benchVertexMov `json:"vertices"`
	Reason   string           `json:"reason"`
}

// benchShown is a decision status.autoscaler showed, in words.
type benchShown struct {
	At     float64 `json:"t"`
	Reason string  `json:"reason"`
}

type benchVertexMov struct {
	Vertex string `json:"vertex"`
	From   int    `json:"from"`
	To     int    `json:"to"`
}

func newBenchRun(t *testing.T, sc benchScenario, v benchVariant) *benchRun {
	w := newWorld(t)
	w.timings = benchTimings
	r := &benchRun{t: t, w: w, sc: sc, v: v, name: "bench", seen: map[string]bool{}, events: map[string]int{},
		touched: map[string]int{},
		flink:   client.New(client.DefaultConfig(), prometheus.NewRegistry())}
	w.loads[r.name] = benchLoad(sc.input)
	route := w.server.Config.Handler
	w.server.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/subtasks/metrics") {
			r.metricCalls.Add(1)
		}
		route.ServeHTTP(rw, req)
	})
	w.apps.PrependReactor("*", "flinkapplications", func(a k8stesting.Action) (bool, runtime.Object, error) {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			r.writes.Add(1)
			if a.GetSubresource() == "status" {
				r.statusWrites.Add(1)
			}
		}
		if p, ok := a.(k8stesting.PatchAction); ok && a.GetSubresource() == "status" {
			r.notePatch(p.GetPatch())
		}
		return false, nil, nil
	})
	app := benchApp(v)
	cfg, err := autoscaling.Config(app.Spec.Autoscaler, w.env.Config.Autoscaler, w.env.Config.ReadinessTimeout.Duration)
	require.NoError(t, err)
	r.cfg = cfg
	w.create(app)
	return r
}

// run plays the scenario to its end.
func (r *benchRun) run() {
	w := r.w
	nextPass, nextProbe := w.clock.Now(), time.Time{}
	giveUp := w.clock.Now().Add(time.Hour)
	for {
		now := w.clock.Now()
		if r.origin.IsZero() && now.After(giveUp) {
			r.t.Fatalf("no JobManager within a simulated hour: phase %s", w.get(r.name).Status.Phase)
		}
		if !r.origin.IsZero() && !now.Before(r.origin.Add(r.sc.Length)) {
			return
		}
		if !now.Before(nextPass) {
			nextPass = now.Add(r.pass())
		}
		if !r.origin.IsZero() && nextProbe.IsZero() {
			nextProbe = r.origin
		}
		if !nextProbe.IsZero() && !now.Before(nextProbe) {
			w.settle()
			r.probe()
			nextProbe = nextProbe.Add(benchProbeEvery)
		}
		next := nextPass
		if !nextProbe.IsZero() && nextProbe.Before(next) {
			next = nextProbe
		}
		if next.After(now) {
			w.clock.SetTime(next)
		}
	}
}

// pass is one operator pass, with the kubelet's part before it; it returns when the operator asked
// to look again.
func (r *benchRun) pass() time.Duration {
	w := r.w
	w.settle()
	if r.origin.IsZero() {
		r.noteOrigin()
	}
	r.passes++
	after, err := w.env.Reconcile(context.Background(), ns, r.name)
	for _, e := range w.events() {
		r.events[strings.Fields(e)[1]]++
	}
	r.observe()
	if err != nil || after <= 0 {
		// The controller's queue would retry with a backoff; a second is near enough.
		return time.Second
	}
	return after
}

// noteOrigin notes when the application's first JobManager started, which started the load.
func (r *benchRun) noteOrigin() {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	for svc := range r.w.jms {
		if strings.HasPrefix(svc, r.name+"-") {
			r.origin = r.w.clock.Now()
		}
	}
}

// observe records the changes the autoscaler made since the last pass and how long each target
// took to apply. Status keeps the last ten changes; a pass adds one at most.
func (r *benchRun) observe() {
	app := r.w.get(r.name)
	r.checkOneCluster()
	as := app.Status.Autoscaler
	if as == nil {
		return
	}
	if n := len(r.shown); n == 0 || r.shown[n-1].Reason != as.Reason {
		r.shown = append(r.shown, benchShown{At: r.offset(r.w.clock.Now()), Reason: as.Reason})
	}
	names := map[string]string{}
	for _, v := range as.Vertices {
		names[v.ID] = nameOr(v.Name, v.ID)
	}
	for _, c := range as.Changes {
		key := c.Time.String() + c.Kind + fmt.Sprint(c.Vertices)
		if r.seen[key] || c.Kind == string(autoscaler.Recommended) {
			continue
		}
		r.seen[key] = true
		bc := benchChange{At: r.offset(c.Time.Time), Kind: c.Kind, Reason: c.Reason}
		for _, v := range c.Vertices {
			bc.Vertices = append(bc.Vertices, benchVertexMov{Vertex: nameOr(names[v.ID], v.ID), From: int(v.From), To: int(v.To)})
		}
		r.changes = append(r.changes, bc)
	}
	now := r.w.clock.Now()
	switch {
	case as.Target != nil && r.targetSince.IsZero():
		r.targetSince = now
	case as.Target == nil && !r.targetSince.IsZero():
		r.applies = append(r.applies, now.Sub(r.targetSince).Seconds())
		r.targetSince = time.Time{}
	}
}

// checkOneCluster stops a run whose application started a second cluster: the world gives every
// JobManager a topic of its own, so the backlog would start again from nothing and the figures
// would say nothing (a Fleet hands the topic over; the world does not).
func (r *benchRun) checkOneCluster() {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	n := 0
	for svc := range r.w.jms {
		if strings.HasPrefix(svc, r.name+"-") {
			n++
		}
	}
	if n > 1 {
		r.t.Fatalf("variant %s started a second cluster, whose topic would start empty: not measurable in the world", r.v.Name)
	}
}

// notePatch counts the fields of status a merge patch of it changes.
func (r *benchRun) notePatch(patch []byte) {
	var doc struct {
		Status map[string]json.RawMessage `json:"status"`
	}
	if json.Unmarshal(patch, &doc) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for field := range doc.Status {
		r.touched[field]++
	}
}

// probe reads where the topic stands, the job's parallelism and each vertex's busy time. It asks
// the application's JobManager, not status, which names no job while a restart submits the next.
func (r *benchRun) probe() {
	p := benchPoint{At: r.offset(r.w.clock.Now())}
	svc, jm := r.jobManager()
	if jm == nil {
		r.t.Fatalf("no JobManager at %s", benchClock(p.At))
	}
	ls, ok := jm.LoadStatus()
	require.True(r.t, ok, "the JobManager has the load")
	p.Input, p.Throughput, p.Backlog = ls.Rate, ls.Throughput, ls.Backlog
	var job *flinksim.JobInfo
	jobs := jm.Jobs()
	for i := range jobs {
		// The newest job that has not ended: the one running, or the one a restart submitted.
		if j := &jobs[i]; !flinksimEnded(j.State) && (job == nil || j.SubmittedAt.After(job.SubmittedAt)) {
			job = j
		}
	}
	if job != nil {
		if r.vertexIDs == nil {
			r.vertexIDs, r.vertexNames = job.VertexIDs, job.VertexNames
		}
		p.Running, p.Parallelism = job.TasksRunning, job.VertexParallelism
	}
	if p.Running {
		url := r.w.env.FlinkURL(ns, svc, 0)
		for _, vid := range job.VertexIDs {
			r.probeCalls++
			m, err := r.flink.VertexMetrics(context.Background(), url, job.ID, vid, []string{client.MetricBusyTime})
			require.NoError(r.t, err)
			p.Busy = append(p.Busy, m[client.MetricBusyTime].Avg/1000)
		}
	}
	r.points = append(r.points, p)
}

// jobManager is the application's JobManager (checkOneCluster keeps it to one) and its service.
func (r *benchRun) jobManager() (string, *flinksim.JobManager) {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	for svc, jm := range r.w.jms {
		if strings.HasPrefix(svc, r.name+"-") {
			return svc, jm
		}
	}
	return "", nil
}

// flinksimEnded tells whether a job state is one a job never leaves.
func flinksimEnded(state string) bool {
	switch state {
	case "FINISHED", "CANCELED", "FAILED":
		return true
	}
	return false
}

// offset is t in seconds from the start of the load.
func (r *benchRun) offset(t time.Time) float64 { return t.Sub(r.origin).Seconds() }
