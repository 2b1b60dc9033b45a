package flinksim

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// pipeline is a three-vertex job whose map is its narrowest vertex: 500 records per second per
// subtask, where the source reads 1000 and the sink writes 5000.
func pipeline(input Rate) Load {
	return Load{
		Vertices: []LoadVertex{
			{Name: "Source: Orders", Capacity: 1000, PendingRecords: true},
			{Name: "Map: Enrich", Capacity: 500},
			{Name: "Sink: Warehouse", Capacity: 5000},
		},
		Input: input,
	}
}

func (h *harness) setLoad(l Load) {
	h.t.Helper()
	if err := h.jm.SetLoad(l); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) loadStatus() LoadStatus {
	h.t.Helper()
	s, ok := h.jm.LoadStatus()
	if !ok {
		h.t.Fatal("no Load")
	}
	return s
}

// expectBacklog checks the backlog to a millionth of a record.
func (h *harness) expectBacklog(want float64) {
	h.t.Helper()
	if got := h.loadStatus().Backlog; math.Abs(got-want) > 1e-6 {
		h.t.Fatalf("at %s the backlog is %.9f records, want %.9f", h.clk.Now().Sub(epoch), got, want)
	}
}

// stateEntered is when GET /jobs/:id says the job last entered a state.
func (h *harness) stateEntered(id, state string) time.Time {
	h.t.Helper()
	return time.UnixMilli(num(at(h.mustGet("/jobs/"+id), "timestamps", state))).UTC()
}

// A step in the input beyond what the job processes grows the backlog by exactly the excess each
// second; a rescale in place that makes room drains it at exactly the new excess of capacity, once
// the records that arrived while the job restarted are added.
func TestAStepInInputGrowsTheBacklogThenARescaleDrainsIt(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: adaptiveFlinkConfig(), TaskManagers: 2}) // 4 slots
	h.setLoad(pipeline(Steps(600, Step{At: time.Minute, Rate: 1600})))
	id := h.runToRunning(map[string]any{"parallelism": 2}) // the map takes 1000/s
	h.step(time.Minute - 300*time.Millisecond)
	h.expectBacklog(0) // 600/s is within what the job takes, and it caught up at once
	if s := h.loadStatus(); s.Rate != 1600 || s.Throughput != 1000 {
		t.Fatalf("after the step: %+v, want 1600/s arriving and 1000/s read", s)
	}
	h.step(100 * time.Second)
	h.expectBacklog(600 * 100)

	h.call("PUT", "/jobs/"+id+"/resource-requirements", h.requirements(id, 1, 4))
	h.step(time.Second)
	h.expectParallelism(id, 4) // the map takes 2000/s
	down := h.stateEntered(id, stateRunning).Sub(h.stateEntered(id, stateRestarting)).Seconds()
	if down <= 0 {
		t.Fatalf("no restart: down for %vs", down)
	}
	ranFor := h.clk.Now().Sub(h.stateEntered(id, stateRunning)).Seconds()
	h.expectBacklog(600*100 + 1600*down - 400*ranFor)
	h.step(10 * time.Second)
	h.expectBacklog(600*100 + 1600*down - 400*(ranFor+10))
	h.step(200 * time.Second)
	h.expectBacklog(0)
	if s := h.loadStatus(); s.Throughput != 1600 || math.Abs(s.Arrived-s.Consumed) > 1e-6 {
		t.Fatalf("drained: %+v, want all read at 1600/s", s)
	}
}

// A job resubmitted with a new parallelism carries on from the backlog its predecessor left,
// reading as fast as its new parallelism allows.
func TestAResubmittedJobReadsOnAtItsNewParallelism(t *testing.T) {
	h := newHarness(t, Options{}) // 4 slots, the DefaultScheduler
	h.setLoad(pipeline(Constant(1200)))
	first := h.runToRunning(map[string]any{"parallelism": 1}) // the map takes 500/s
	h.step(10 * time.Second)
	before := h.loadStatus().Backlog
	h.call("PATCH", "/jobs/"+first, nil)
	h.step(time.Second) // CANCELED; nothing reads the topic
	h.expectBacklog(before + 1200*1)
	second := h.runToRunning(map[string]any{"parallelism": 3}) // the map takes 1500/s
	h.expectParallelism(second, 3)
	h.expectBacklog(before + 1200*1.3)
	h.step(10 * time.Second)
	h.expectBacklog(before + 1200*1.3 - 300*10)
	if s := h.loadStatus(); s.Throughput != 1500 {
		t.Fatalf("throughput %v, want the map's 1500/s", s.Throughput)
	}
}

// A restart costs the records that arrive while the job is down: the backlog grows by them, and
// then drains at the room the job has.
func TestARestartCostsTheRecordsThatArriveMeanwhile(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: checkpointConfig(), Timings: Timings{Restart: 5 * time.Second}})
	h.setLoad(pipeline(Constant(800)))
	id := h.runToRunning(map[string]any{"parallelism": 2}) // the map takes 1000/s
	h.step(time.Minute)
	h.expectBacklog(0)
	if !h.jm.FailTasksNow(id) {
		t.Fatal("no failover")
	}
	h.step(3 * time.Second)
	h.expectState(id, stateRestarting)
	h.expectBacklog(800 * 3)
	h.step(2 * time.Second)
	h.expectState(id, stateRunning)
	h.expectBacklog(800 * 5)
	redeployed := h.loadStatus().Consumed
	h.step(10 * time.Second)
	h.expectBacklog(800*5 - 200*10)
	// The tasks count anew from their new deployment, as Flink's counters do.
	if got, want := h.aggregated(id, 1, "numRecordsIn", "sum"), h.loadStatus().Consumed-redeployed; math.Abs(got-want) > 2 {
		t.Fatalf("the map counted %v records in since it was redeployed, want %v", got, want)
	}
	h.step(10 * time.Second)
	h.expectBacklog(0)
	if s := h.loadStatus(); math.Abs(s.Arrived-800*85.3) > 1e-6 || math.Abs(s.Consumed-s.Arrived) > 1e-6 {
		t.Fatalf("%+v: every record that arrived in 85.3s, read", s)
	}
}

// A daily wave brings its mean times a day's seconds in a day, whatever its phase, and the model
// counts the same whether it is read every few minutes or once.
func TestADailyWaveIntegratesOverADay(t *testing.T) {
	wave := DailyWave(1000, 400, 15*time.Hour)
	if got, want := wave.Records(0, 24*time.Hour), 1000.0*86400; math.Abs(got-want) > 1e-6*want {
		t.Fatalf("a day of the wave: %v records, want %v", got, want)
	}
	if got, want := wave.Records(3*time.Hour, 27*time.Hour), 1000.0*86400; math.Abs(got-want) > 1e-6*want {
		t.Fatalf("a day from 3am: %v records, want %v", got, want)
	}
	// The half of the day around the peak brings the mean's half plus amplitude × a day / π.
	if got, want := wave.Records(9*time.Hour, 21*time.Hour), 1000.0*43200+400*86400/math.Pi; math.Abs(got-want) > 1e-6*want {
		t.Fatalf("the busy half of the day: %v records, want %v", got, want)
	}
	if got := wave.At(15 * time.Hour); got != 1400 {
		t.Fatalf("at its peak the wave is %v, want 1400", got)
	}

	// The map takes 1000/s: above the mean the backlog grows, below it drains. A wave is straight
	// between the points of its grid, so where the reads cut it does not matter.
	l := pipeline(wave)
	often, once := newHarness(t, Options{}), newHarness(t, Options{})
	often.setLoad(l)
	once.setLoad(l)
	often.runToRunning(map[string]any{"parallelism": 2})
	once.runToRunning(map[string]any{"parallelism": 2})
	for range 86400 / 433 {
		often.step(433 * time.Second) // off the wave's grid of a minute
		often.loadStatus()
	}
	once.step(often.clk.Now().Sub(once.clk.Now()))
	a, b := often.loadStatus(), once.loadStatus()
	if math.Abs(a.Backlog-b.Backlog) > 1e-4 || math.Abs(a.Arrived-b.Arrived) > 1e-4 {
		t.Fatalf("read every 433 seconds: %+v; read once: %+v", a, b)
	}
	if a.Backlog < 1e6 || a.Consumed == 0 {
		t.Fatalf("%+v: the wave's peak should have left a backlog", a)
	}
}

// Where the input crosses what the job takes within a ramp, the backlog starts exactly there: the
// model finds the crossing rather than sampling around it.
func TestTheBacklogDoesNotDependOnHowOftenItIsRead(t *testing.T) {
	l := pipeline(Sum(Constant(200), Ramp(10*time.Second, 110*time.Second, 0, 1600), Steps(0, Step{At: 150 * time.Second, Rate: -1900})))
	often, once := newHarness(t, Options{}), newHarness(t, Options{})
	often.setLoad(l)
	once.setLoad(l)
	often.runToRunning(map[string]any{"parallelism": 2}) // the map takes 1000/s
	once.runToRunning(map[string]any{"parallelism": 2})
	for range 2000 {
		often.step(97 * time.Millisecond)
		often.loadStatus()
	}
	once.step(often.clk.Now().Sub(once.clk.Now()))
	a, b := often.loadStatus(), once.loadStatus()
	if math.Abs(a.Backlog-b.Backlog) > 1e-6 || math.Abs(a.Consumed-b.Consumed) > 1e-6 {
		t.Fatalf("read every 97ms: %+v; read once: %+v", a, b)
	}
	// The rate passes 1000/s at 60s, reaches 1800/s at 110s, stays until 150s, and then nothing
	// arrives (the sum is below zero): 800×50/2 + 800×40 records waited at 150s, and the job reads
	// 1000/s of them.
	want := 800.0*50/2 + 800*40 - 1000*(often.clk.Now().Sub(epoch).Seconds()-150)
	if math.Abs(a.Backlog-want) > 1e-6 {
		t.Fatalf("backlog %v at 194s, want %v", a.Backlog, want)
	}
}

// Where a sum of rates is below zero nothing arrives, from the very point it crosses zero.
func TestARateBelowZeroBringsNothing(t *testing.T) {
	r := Sum(Constant(500), Ramp(0, 100*time.Second, 0, -1000))
	if got := r.Records(0, 200*time.Second); math.Abs(got-500*50/2) > 1e-9 {
		t.Fatalf("%v records, want the 12500 of the first 50 seconds", got)
	}
	if r.At(75*time.Second) != 0 || r.At(25*time.Second) != 250 {
		t.Fatalf("at 25s %v, at 75s %v", r.At(25*time.Second), r.At(75*time.Second))
	}
}

func TestLoadsThatCannotBe(t *testing.T) {
	ok := LoadVertex{Name: "Source", Capacity: 1}
	for name, tc := range map[string]struct {
		load Load
		want string
	}{
		"no capacity":         {Load{Vertices: []LoadVertex{{Name: "Source"}}}, "capacity"},
		"no name":             {Load{Vertices: []LoadVertex{{Capacity: 1}}}, "no name"},
		"a second source":     {Load{Vertices: []LoadVertex{ok, {Name: "Other", Capacity: 1, Inputs: []int{}}}}, "only the first vertex"},
		"an input after it":   {Load{Vertices: []LoadVertex{ok, {Name: "Map", Capacity: 1, Inputs: []int{1}}}}, "not a vertex before it"},
		"partitions on a map": {Load{Vertices: []LoadVertex{ok, {Name: "Map", Capacity: 1, Partitions: 2}}}, "only the source reads"},
		"noise past 1":        {Load{Vertices: []LoadVertex{ok}, Noise: 1}, "noise"},
		"a NaN rate":          {Load{Vertices: []LoadVertex{ok}, Input: Sum(Constant(1), Constant(math.NaN()))}, "finite"},
		"a ramp backwards":    {Load{Vertices: []LoadVertex{ok}, Input: Ramp(time.Minute, 0, 0, 1)}, "before it starts"},
	} {
		if _, err := tc.load.compile(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one about %q", name, err, tc.want)
		}
	}
}

// A fan-out feeds each consumer the whole output; a join takes in what all its inputs send. The
// limit on what the source reads is set by the vertex with the least room for its share.
func TestADAGSplitsAndJoinsTheFlow(t *testing.T) {
	s, err := Load{Vertices: []LoadVertex{
		{Name: "Source", Capacity: 1000},
		{Name: "Explode", Capacity: 1000, OutputRatio: 3},
		{Name: "Filter", Capacity: 1000, Inputs: []int{0}, OutputRatio: 0.5},
		{Name: "Join", Capacity: 1000, Inputs: []int{1, 2}},
	}}.compile()
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{1, 1, 1, 3.5}; !equalFloats(s.gain, want) {
		t.Fatalf("gains %v, want %v", s.gain, want)
	}
	if got := s.limit([]int{4, 4, 4, 7}); got != 2000 {
		t.Fatalf("limit %v, want the join's 7000/3.5", got)
	}
	if !s.upstreamOf[0][3] || !s.upstreamOf[2][3] || s.upstreamOf[1][2] || s.upstreamOf[3][0] {
		t.Fatalf("upstream %v", s.upstreamOf)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12 {
			return false
		}
	}
	return true
}

// An app's topic outlives its JobManager: the cluster's next JobManager finds the records that
// arrived while none ran waiting, and the jobs it recovers with HA read on from where the last
// one left the topic.
func TestAFleetAppsTopicOutlivesItsJobManager(t *testing.T) {
	e := newFleetEnv(t)
	if err := e.f.SetLoad(testNS, "app", Load{Vertices: []LoadVertex{{Name: "Source"}}}); err == nil {
		t.Fatal("a Load without capacity was taken")
	}
	if err := e.f.SetLoad(testNS, "app", pipeline(Constant(100))); err != nil {
		t.Fatal(err)
	}
	svc := "app-h1"
	withHA := func(p *corev1.Pod) *corev1.Pod {
		p.Spec.Containers[1].Env = []corev1.EnvVar{{Name: flinkPropertiesEnv, Value: testProps + "\nhigh-availability.type: kubernetes"}}
		return p
	}
	e.create(withHA(pod("app", "h1", RoleJobManager, "app-h1-jm-a", "flink:1.20", true)))
	e.create(withHA(pod("app", "h1", RoleTaskManager, "app-h1-tm", "flink:1.20", true)))
	e.waitUp(svc, 1)
	started := e.clk.Now()
	if status, _, _ := e.request("POST", "/"+testNS+"/"+svc+"/jars/x.jar/run", ""); status != 200 {
		t.Fatalf("run: %d", status)
	}
	e.clk.Step(10 * time.Second)
	before, _ := e.f.JobManager(testNS, svc).LoadStatus()
	if before.Backlog != 0 || before.Consumed == 0 {
		t.Fatalf("the job did not read the topic: %+v", before)
	}

	e.delete("app-h1-jm-a")
	e.waitDown(svc)
	e.clk.Step(5 * time.Second)
	e.create(withHA(pod("app", "h1", RoleJobManager, "app-h1-jm-b", "flink:1.20", true)))
	e.waitUp(svc, 1)
	jm := e.f.JobManager(testNS, svc)
	after, ok := jm.LoadStatus()
	if !ok || after.Consumed != before.Consumed || math.Abs(after.Backlog-500) > 1e-6 ||
		math.Abs(after.Arrived-100*e.clk.Now().Sub(started).Seconds()) > 1e-6 {
		t.Fatalf("after the JobManager's replacement: %+v, before: %+v", after, before)
	}
	e.clk.Step(5 * time.Second)
	if jobs := jm.Jobs(); len(jobs) != 1 || jobs[0].State != stateRunning || len(jobs[0].VertexIDs) != 3 {
		t.Fatalf("recovered %+v", jobs)
	}
	if s, _ := jm.LoadStatus(); s.Backlog != 0 || s.Consumed != s.Arrived {
		t.Fatalf("the recovered job did not catch up: %+v", s)
	}
}

// A JobManager with HA recovers its jobs with the Load it is given as it starts.
func TestJobsRecoveredWithHARunTheLoad(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: haConfig()})
	l := pipeline(Constant(100))
	h.setLoad(l)
	id := h.runToRunning(map[string]any{"parallelism": 2})
	h.step(time.Minute)
	h.jm.Stop()
	next := NewJobManager(Options{Clock: h.clk, FlinkConfig: haConfig(), Storage: h.jm.Storage(), TaskManagers: 2})
	if err := next.SetLoad(l); err != nil {
		t.Fatal(err)
	}
	h.step(time.Second)
	jobs := next.Jobs()
	if len(jobs) != 1 || jobs[0].ID != id || !slices.Equal(jobs[0].VertexNames, []string{"Source: Orders", "Map: Enrich", "Sink: Warehouse"}) {
		t.Fatalf("recovered %+v", jobs)
	}
	if s, _ := next.LoadStatus(); s.Consumed == 0 || s.Throughput != 100 {
		t.Fatalf("the recovered job does not read the topic: %+v", s)
	}
}

// A step of the input set on a running job keeps the topic and its reader: the backlog grows by the
// excess over what the job takes from the moment of the step, and drains once the input steps back
// below it, with the same job reading throughout. That is how an autoscaler test steps its load at
// a moment it chooses, rather than at a fixed offset it must guess.
func TestAnInputSetOnARunningJobStepsItsTopic(t *testing.T) {
	h := newHarness(t, Options{})
	if err := h.jm.SetInput(Constant(100)); err == nil {
		t.Fatal("an input was set without a Load")
	}
	h.setLoad(pipeline(Constant(600)))
	id := h.runToRunning(map[string]any{"parallelism": 2}) // the map takes 1000/s
	h.step(10 * time.Second)
	h.expectBacklog(0)
	if err := h.jm.SetInput(Constant(math.Inf(1))); err == nil {
		t.Fatal("an invalid input was taken")
	}
	if err := h.jm.SetInput(Constant(1600)); err != nil {
		t.Fatal(err)
	}
	h.step(10 * time.Second)
	h.expectBacklog(600 * 10)
	if s := h.loadStatus(); s.Rate != 1600 || s.Throughput != 1000 {
		t.Fatalf("after the step up: %+v, want 1600/s arriving and 1000/s read", s)
	}
	if err := h.jm.SetInput(Constant(400)); err != nil {
		t.Fatal(err)
	}
	h.step(5 * time.Second)
	h.expectBacklog(600*10 - 600*5)
	h.step(10 * time.Second)
	h.expectBacklog(0)
	if jobs := h.jm.Jobs(); len(jobs) != 1 || jobs[0].ID != id || jobs[0].State != stateRunning {
		t.Fatalf("jobs %+v, want %s running throughout", jobs, id)
	}
}

// A Fleet sets an app's input on the JobManager that runs its jobs, and refuses an app without a
// Load.
func TestAFleetStepsAnAppsInput(t *testing.T) {
	e := newFleetEnv(t)
	if err := e.f.SetInput(testNS, "app", Constant(100)); err == nil {
		t.Fatal("an input was set for an app without a Load")
	}
	if err := e.f.SetLoad(testNS, "app", pipeline(Constant(100))); err != nil {
		t.Fatal(err)
	}
	e.create(pod("app", "h1", RoleJobManager, "app-h1-jm", "flink:1.20", true))
	e.create(pod("app", "h1", RoleTaskManager, "app-h1-tm", "flink:1.20", true))
	e.waitUp("app-h1", 1)
	if err := e.f.SetInput(testNS, "app", Constant(250)); err != nil {
		t.Fatal(err)
	}
	before, ok := e.f.JobManager(testNS, "app-h1").LoadStatus()
	if !ok || before.Rate != 250 {
		t.Fatalf("load status %+v (%v), want 250/s arriving", before, ok)
	}

	// Set while no JobManager runs, the input changes from that moment in the topic it left.
	e.delete("app-h1-jm")
	e.waitDown("app-h1")
	e.clk.Step(5 * time.Second)
	if err := e.f.SetInput(testNS, "app", Constant(1000)); err != nil {
		t.Fatal(err)
	}
	e.clk.Step(5 * time.Second)
	e.create(pod("app", "h1", RoleJobManager, "app-h1-jm-b", "flink:1.20", true))
	e.waitUp("app-h1", 1)
	after, ok := e.f.JobManager(testNS, "app-h1").LoadStatus()
	if want := before.Arrived + 250*5 + 1000*5; !ok || after.Rate != 1000 || math.Abs(after.Arrived-want) > 1e-6 {
		t.Fatalf("after the next JobManager took over: %+v, want 1000/s arriving and %v arrived", after, want)
	}
}
