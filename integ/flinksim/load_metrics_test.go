package flinksim

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// vertexMetrics asks GET /jobs/:id/vertices/:vid/subtasks/metrics with query and returns the
// answer's entries by id.
func (h *harness) vertexMetrics(id string, vertex int, query string) map[string]map[string]any {
	h.t.Helper()
	path := "/jobs/" + id + "/vertices/" + h.jobInfo(id).VertexIDs[vertex] + "/subtasks/metrics" + query
	status, body := h.call("GET", path, nil)
	if status != http.StatusOK {
		h.t.Fatalf("GET %s: %d %v", path, status, body)
	}
	out := map[string]map[string]any{}
	for _, e := range body.([]any) {
		m := e.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

// aggregated is one aggregation of one metric of a vertex.
func (h *harness) aggregated(id string, vertex int, metric, agg string) float64 {
	h.t.Helper()
	m, ok := h.vertexMetrics(id, vertex, "?get="+metric+"&agg="+agg)[metric]
	if !ok {
		h.t.Fatalf("vertex %d reports no %s", vertex, metric)
	}
	return m[agg].(float64)
}

func (h *harness) expectAggregated(id string, vertex int, metric, agg string, want float64) {
	h.t.Helper()
	if got := h.aggregated(id, vertex, metric, agg); math.Abs(got-want) > 1e-9 {
		h.t.Fatalf("vertex %d %s %s = %v, want %v", vertex, agg, metric, got, want)
	}
}

// The map takes 1000 records a second of the 1600 that arrive: it is busy all the time, the source
// half the time and backpressured the other half, the sink idle but for a tenth.
func TestTheMetricsFollowTheLoad(t *testing.T) {
	h := newHarness(t, Options{})
	h.setLoad(pipeline(Constant(1600)))
	id := h.runToRunning(map[string]any{"parallelism": 2})
	h.step(30 * time.Second)

	names := h.vertexMetrics(id, 0, "")
	for _, want := range []string{"busyTimeMsPerSecond", "backPressuredTimeMsPerSecond", "idleTimeMsPerSecond",
		"numRecordsInPerSecond", "numRecordsOutPerSecond", "numRecordsIn", "numRecordsOut",
		"Source__Orders.pendingRecords", "Source__Orders.numRecordsInPerSecond", "Source__Orders.numRecordsOutPerSecond"} {
		if _, ok := names[want]; !ok {
			t.Errorf("the source does not list %s: %v", want, names)
		}
	}
	for vertex, want := range []struct{ busy, backPressured, idle float64 }{{500, 500, 0}, {1000, 0, 0}, {100, 0, 900}} {
		h.expectAggregated(id, vertex, "busyTimeMsPerSecond", "max", want.busy)
		h.expectAggregated(id, vertex, "backPressuredTimeMsPerSecond", "avg", want.backPressured)
		h.expectAggregated(id, vertex, "idleTimeMsPerSecond", "min", want.idle)
	}
	h.expectAggregated(id, 0, "numRecordsInPerSecond", "sum", 0) // a source task takes nothing from the network
	h.expectAggregated(id, 0, "Source__Orders.numRecordsInPerSecond", "sum", 1000)
	h.expectAggregated(id, 0, "numRecordsOutPerSecond", "sum", 1000)
	h.expectAggregated(id, 1, "numRecordsInPerSecond", "sum", 1000)
	h.expectAggregated(id, 2, "numRecordsOutPerSecond", "sum", 0) // the last vertex sends nothing on
	h.expectAggregated(id, 2, "Sink__Warehouse.numRecordsOutPerSecond", "sum", 1000)
	read := h.loadStatus().Consumed
	if got := h.aggregated(id, 1, "numRecordsIn", "sum"); math.Abs(got-read) > 2 {
		t.Fatalf("the map counted %v records in, the source read %v", got, read)
	}
	backlog := h.loadStatus().Backlog
	if got := h.aggregated(id, 0, "Source__Orders.pendingRecords", "sum"); got > backlog || got < backlog-2 {
		t.Fatalf("pendingRecords add up to %v, the backlog is %v", got, backlog)
	}
}

// A source whose connector does not know its backlog does not report one.
func TestASourceWithoutPendingRecordsReportsNone(t *testing.T) {
	h := newHarness(t, Options{})
	l := pipeline(Constant(1600))
	l.Vertices[0].PendingRecords = false
	h.setLoad(l)
	id := h.runToRunning(map[string]any{"parallelism": 2})
	h.step(time.Minute)
	for name := range h.vertexMetrics(id, 0, "") {
		if strings.HasSuffix(name, ".pendingRecords") {
			t.Fatalf("the source reports %s", name)
		}
	}
}

// A source whose reader does not count what it reads (real Flink counts a source's records in only
// in SourceReaderBase) reports none read, and what it emitted as ever.
func TestASourceThatDoesNotCountItsReadsReportsNoneRead(t *testing.T) {
	h := newHarness(t, Options{})
	l := pipeline(Constant(1600))
	l.Vertices[0].UncountedReads = true
	h.setLoad(l)
	id := h.runToRunning(map[string]any{"parallelism": 2})
	h.step(30 * time.Second)
	h.expectAggregated(id, 0, "Source__Orders.numRecordsInPerSecond", "sum", 0)
	h.expectAggregated(id, 0, "Source__Orders.numRecordsOutPerSecond", "sum", 1000)
	h.expectAggregated(id, 0, "numRecordsOutPerSecond", "sum", 1000)
	h.expectAggregated(id, 1, "numRecordsInPerSecond", "sum", 1000)
}

// A Kafka source lists each partition it reads the way Flink's Kafka source names it, and keeps up
// only while its subtask with the most partitions does. It reports pendingRecords once it has read
// a record.
func TestAKafkaSourceReportsItsPartitions(t *testing.T) {
	h := newHarness(t, Options{})
	l := pipeline(Steps(0, Step{At: 10 * time.Second, Rate: 3000}))
	l.Vertices[0] = LoadVertex{Name: "Source: Kafka", Capacity: 1000, Partitions: 3, Topic: "orders.v1", PendingRecords: true}
	l.Vertices[1].Capacity = 10000
	h.setLoad(l)
	id := h.runToRunning(map[string]any{"parallelism": 2})
	h.step(5 * time.Second)
	names := h.vertexMetrics(id, 0, "")
	var partitions []string
	for name := range names {
		if strings.Contains(name, ".KafkaSourceReader.") {
			partitions = append(partitions, name)
		}
	}
	slices.Sort(partitions)
	if want := []string{
		"Source__Kafka.KafkaSourceReader.topic.orders_v1.partition.0.currentOffset",
		"Source__Kafka.KafkaSourceReader.topic.orders_v1.partition.1.currentOffset",
		"Source__Kafka.KafkaSourceReader.topic.orders_v1.partition.2.currentOffset",
	}; !slices.Equal(partitions, want) {
		t.Fatalf("partition metrics %v, want %v", partitions, want)
	}
	if _, ok := names["Source__Kafka.pendingRecords"]; ok {
		t.Fatal("pendingRecords before the source read a record")
	}
	h.step(10 * time.Second)
	// Java's "orders.v1".hashCode() starts the round robin at subtask 0: 0, 1, 0.
	if s := h.loadStatus(); s.Throughput != 1500 {
		t.Fatalf("throughput %v, want 1500/s: subtask 0 reads two partitions at 500/s each", s.Throughput)
	}
	h.expectAggregated(id, 0, "busyTimeMsPerSecond", "max", 1000)
	h.expectAggregated(id, 0, "busyTimeMsPerSecond", "min", 500)
	if got, want := h.aggregated(id, 0, "Source__Kafka.pendingRecords", "sum"), h.loadStatus().Backlog; got > want || got < want-2 {
		t.Fatalf("pendingRecords add up to %v, the backlog is %v", got, want)
	}
	offsets := h.vertexMetrics(id, 0, "?get="+strings.Join(partitions, ",")+"&agg=max")
	if got, want := offsets[partitions[2]]["max"].(float64), math.Floor(h.loadStatus().Consumed/3); got != want {
		t.Fatalf("partition 2 is at offset %v, want %v", got, want)
	}

	s, _ := l.compile()
	for p, want := range map[int][]int{2: {0, 1, 0}, 3: {1, 2, 0}, 4: {0, 1, 2}} {
		if got := s.partitionOwners(p); !slices.Equal(got, want) {
			t.Errorf("with %d subtasks the partitions go to %v, want %v", p, got, want)
		}
	}
	if got := s.capacityAt(0, 4); got != 3000 {
		t.Errorf("with a subtask for each partition and one idle, the source reads %v/s, want 3000", got)
	}
}

// Flink's AggregatingSubtasksMetricsHandler answers from its metric store, never with a 404: no
// metrics for what it does not know, and none at all as soon as one asked for is unknown.
func TestSubtaskMetricsAnswerLikeFlink(t *testing.T) {
	h := newHarness(t, Options{FlinkVersion: "1.20"})
	h.setLoad(pipeline(Constant(100)))
	id := h.runToRunning(map[string]any{"parallelism": 2})
	h.step(time.Second)
	vertex := h.jobInfo(id).VertexIDs[1]
	base := "/v1/jobs/" + id + "/vertices/" + vertex + "/subtasks/metrics"

	all := h.vertexMetrics(id, 1, "?get=busyTimeMsPerSecond")["busyTimeMsPerSecond"]
	if got := sortedAnyKeys(all); !slices.Equal(got, []string{"avg", "id", "max", "min", "skew", "sum"}) {
		t.Fatalf("without agg: %v, want every aggregation", got)
	}
	some := h.vertexMetrics(id, 1, "?get=busyTimeMsPerSecond,idleTimeMsPerSecond&agg=MAX,sum")
	for _, m := range some {
		if got := sortedAnyKeys(m); !slices.Equal(got, []string{"id", "max", "sum"}) {
			t.Fatalf("agg=MAX,sum: %v", got)
		}
	}
	if len(some) != 2 {
		t.Fatalf("two metrics asked, %d answered", len(some))
	}
	for _, q := range []string{
		"?get=busyTimeMsPerSecond,noSuchMetric",
	} {
		if got := h.vertexMetrics(id, 1, q); len(got) != 0 {
			t.Fatalf("%s: %v, want nothing", q, got)
		}
	}
	for _, path := range []string{
		"/jobs/" + strings.Repeat("ab", 16) + "/vertices/" + vertex + "/subtasks/metrics",
		"/jobs/" + id + "/vertices/" + strings.Repeat("cd", 16) + "/subtasks/metrics?get=busyTimeMsPerSecond",
	} {
		if status, body := h.call("GET", path, nil); status != http.StatusOK || len(body.([]any)) != 0 {
			t.Fatalf("GET %s: %d %v, want 200 []", path, status, body)
		}
	}
	if status, body := h.call("GET", base+"?get=busyTimeMsPerSecond&agg=median", nil); status != http.StatusBadRequest ||
		!strings.Contains(errorText(body.(map[string]any)), `Cannot resolve query parameter (agg) from value "median".`) {
		t.Fatalf("agg=median: %d %v", status, body)
	}
	if status, _ := h.call("GET", "/jobs/"+id+"/vertices/nope/subtasks/metrics", nil); status != http.StatusBadRequest {
		t.Fatalf("a vertex id that is no id: %d", status)
	}
	one := h.vertexMetrics(id, 1, "?get=numRecordsIn&agg=sum&subtasks=1,x,7-9")["numRecordsIn"]["sum"].(float64)
	both := h.vertexMetrics(id, 1, "?get=numRecordsIn&agg=sum&subtasks=0-1")["numRecordsIn"]["sum"].(float64)
	if one <= 0 || math.Abs(both-2*one) > 1 {
		t.Fatalf("subtask 1 counted %v records in, subtasks 0 and 1 %v", one, both)
	}

	h.call("PATCH", "/jobs/"+id, nil)
	if got := h.vertexMetrics(id, 1, ""); len(got) != 0 {
		t.Fatalf("the tasks are cancelling, yet the store lists %v", got)
	}
}

// Skew came with 1.19: an older release refuses it.
func TestSkewIsNoAggregationBefore119(t *testing.T) {
	h := newHarness(t, Options{FlinkVersion: "1.18"})
	id := h.runToRunning(nil)
	path := "/jobs/" + id + "/vertices/" + h.jobInfo(id).VertexIDs[0] + "/subtasks/metrics?get=busyTimeMsPerSecond"
	if status, _ := h.call("GET", path+"&agg=skew", nil); status != http.StatusBadRequest {
		t.Fatalf("agg=skew on 1.18: %d", status)
	}
	if got := sortedAnyKeys(h.vertexMetrics(id, 0, "?get=busyTimeMsPerSecond")["busyTimeMsPerSecond"]); slices.Contains(got, "skew") {
		t.Fatalf("1.18 aggregates %v", got)
	}
}

// Noise strays each per-second metric within its bound, the same for the same seed at the same
// time however often it is read, and differently for another seed.
func TestNoiseStaysWithinItsBoundAndRepeatsPerSeed(t *testing.T) {
	noisy := func(seed int64) (*harness, string) {
		h := newHarness(t, Options{})
		l := pipeline(Constant(600))
		l.Noise, l.Seed = 0.1, seed
		h.setLoad(l)
		id := h.runToRunning(map[string]any{"parallelism": 2})
		h.step(time.Second) // past the catching up with what arrived before the job ran
		return h, id
	}
	a, idA := noisy(7)
	b, idB := noisy(7)
	c, idC := noisy(8)
	// Per subtask: the source busy 300ms a second, the map 600, the sink 60; 300 records a second in.
	model := map[string][3]float64{
		"busyTimeMsPerSecond":          {300, 600, 60},
		"idleTimeMsPerSecond":          {700, 400, 940},
		"backPressuredTimeMsPerSecond": {0, 0, 0},
		"numRecordsOutPerSecond":       {300, 300, 0},
	}
	strayed, differs := false, false
	seen := map[float64]bool{} // what the map's busy time was, second after second
	for i := range 120 {
		a.step(250 * time.Millisecond)
		if i%3 == 0 {
			b.step(750 * time.Millisecond) // b reads a third as often
			c.step(750 * time.Millisecond)
		}
		for metric, want := range model {
			for v := range 3 {
				got := a.aggregated(idA, v, metric, "max")
				if math.Abs(got-want[v]) > 0.1*want[v]+1e-9 {
					t.Fatalf("%s of vertex %d is %v, more than 10%% from %v", metric, v, got, want[v])
				}
				strayed = strayed || got != want[v]
				if metric == "busyTimeMsPerSecond" && v == 1 {
					seen[got] = true
				}
				if i%3 == 2 {
					if other := b.aggregated(idB, v, metric, "max"); other != got {
						t.Fatalf("the same seed at %s: %v and %v", a.clk.Now().Sub(epoch), got, other)
					}
					differs = differs || c.aggregated(idC, v, metric, "max") != got
				}
			}
		}
	}
	if !strayed || !differs || len(seen) < 20 {
		t.Fatalf("strayed from the model: %v; differs with another seed: %v; %d values in 30 seconds",
			strayed, differs, len(seen))
	}
}

// Without a Load a job keeps its two vertices, which report the metrics of a job with nothing to do.
func TestAJobWithoutALoadIsIdle(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(map[string]any{"parallelism": 2})
	if got := h.jobInfo(id).VertexNames; !slices.Equal(got, defaultVertexNames) {
		t.Fatalf("vertices %v", got)
	}
	if got := at(h.mustGet("/jobs/"+id+"/plan"), "plan", "nodes", 0, "inputs", 0, "ship_strategy"); got != "FORWARD" {
		t.Fatalf("the sink reads its source %v", got)
	}
	h.expectAggregated(id, 0, "busyTimeMsPerSecond", "max", 0)
	h.expectAggregated(id, 1, "idleTimeMsPerSecond", "min", 1000)
	if _, ok := h.jm.LoadStatus(); ok {
		t.Fatal("a Load nobody set")
	}
}

// A Load's vertices are the job's in every answer that lists them, each at its own parallelism.
func TestALoadsVerticesAreTheJobs(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: adaptiveFlinkConfig(), TaskManagers: 3}) // 6 slots
	h.setLoad(Load{Vertices: []LoadVertex{
		{Name: "Source: A", Capacity: 1}, {Name: "Map: B", Capacity: 1},
		{Name: "Join", Capacity: 1, Inputs: []int{0, 1}},
	}})
	id := h.runToRunning(map[string]any{"parallelism": 2})
	info := h.jobInfo(id)
	body := h.requirements(id, 1, 2)
	body[info.VertexIDs[2]] = map[string]any{"parallelism": map[string]any{"lowerBound": 1, "upperBound": 5}}
	h.call("PUT", "/jobs/"+id+"/resource-requirements", body)
	h.step(31 * time.Second)
	details := h.mustGet("/jobs/" + id)
	for v, want := range []int64{2, 2, 5} {
		if got := num(at(details, "vertices", v, "parallelism")); got != want || at(details, "vertices", v, "name") != info.VertexNames[v] {
			t.Fatalf("vertex %d: %v, want parallelism %d", v, at(details, "vertices", v), want)
		}
	}
	join := at(details, "plan", "nodes", 0)
	if at(join, "id") != info.VertexIDs[2] || at(join, "inputs", 1, "id") != info.VertexIDs[1] || at(join, "inputs", 0, "ship_strategy") != "HASH" {
		t.Fatalf("the join's plan node %v", join)
	}
	if got := num(at(h.mustGet("/overview"), "slots-available")); got != 1 {
		t.Fatalf("%d slots free, want 1: the job holds its widest vertex's 5", got)
	}
}

// A job submitted with pipeline.jobvertex-parallelism-overrides runs each named vertex at its
// override and the rest at the job's parallelism; an id the job graph does not have is ignored.
func TestAJobRunsItsVerticesAtTheOverridesItWasSubmittedWith(t *testing.T) {
	h := newHarness(t, Options{TaskManagers: 4}) // 8 slots
	h.setLoad(Load{Vertices: []LoadVertex{{Name: "Source: A", Capacity: 1}, {Name: "Map: B", Capacity: 1}, {Name: "Sink: C", Capacity: 1}}})
	first := h.runToRunning(map[string]any{"parallelism": 2})
	ids := h.jobInfo(first).VertexIDs
	h.call("PATCH", "/jobs/"+first+"?mode=cancel", nil)
	h.step(time.Second)
	second := h.runToRunning(map[string]any{"parallelism": 2, "flinkConfiguration": map[string]string{
		ParallelismOverridesKey: ids[1] + ":5, " + ids[2] + ":1,0123456789abcdef:7"}})
	details := h.mustGet("/jobs/" + second)
	for v, want := range []int64{2, 5, 1} {
		if got := num(at(details, "vertices", v, "parallelism")); got != want {
			t.Fatalf("vertex %d runs at %d, want %d", v, got, want)
		}
	}
}
