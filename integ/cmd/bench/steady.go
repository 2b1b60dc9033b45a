package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

type steadyResult struct {
	WindowSeconds float64 `json:"windowSeconds"`
	SettleSeconds float64 `json:"settleSeconds"`
	// Fleet is the N applications of (b), without those that checkpoint when -checkpointing-fraction
	// makes a share of them checkpoint (FleetCheckpointing); Checkpointing is the few applications
	// that checkpoint every 10 s, measured beside them (see checkpointingApps).
	Fleet              groupFigures  `json:"fleet"`
	FleetCheckpointing *groupFigures `json:"fleetCheckpointing,omitempty"`
	Checkpointing      *groupFigures `json:"checkpointing,omitempty"`
	// Savepointing is the applications with periodic savepoints (see savepointingApps), measured
	// over a window of their own that holds the usual one and at least one interval;
	// PeriodicSavepoints, what their savepoints cost in writes.
	Savepointing       *groupFigures     `json:"savepointing,omitempty"`
	PeriodicSavepoints *savepointFigures `json:"periodicSavepoints,omitempty"`
	// Reconciles and the latency quantiles come from the operator's flinkfsm_reconcile_duration_seconds
	// histogram, over every group in the usual window (its bucket bounds limit their precision, as
	// with Prometheus' histogram_quantile).
	Reconciles        uint64  `json:"reconciles"`
	ReconcileP50Milli float64 `json:"reconcileP50Ms"`
	ReconcileP90Milli float64 `json:"reconcileP90Ms"`
	ReconcileP99Milli float64 `json:"reconcileP99Ms"`
	// FlinkCalls and their quantiles come from the operator's flinkfsm_flink_request_duration_seconds
	// in the same window: how long a pass waits on each JobManager call, to tell slow passes that
	// wait on Flink from those that wait on the operator itself.
	FlinkCalls        uint64  `json:"flinkCalls"`
	FlinkCallP50Milli float64 `json:"flinkCallP50Ms"`
	FlinkCallP90Milli float64 `json:"flinkCallP90Ms"`
	FlinkCallP99Milli float64 `json:"flinkCallP99Ms"`
	// QueuedP50Milli and QueuedP99Milli are how long keys waited in the workqueue for a worker in
	// the same window (flinkfsm_workqueue_queue_duration_seconds, buckets 1, 4, 16, 64, 256 ms, ...):
	// a pass is short either because the operator does little or because keys wait before it, and
	// only this tells the two apart.
	QueuedP50Milli float64 `json:"queuedP50Ms"`
	QueuedP99Milli float64 `json:"queuedP99Ms"`
	// Lanes are the same waits past when each key was due, by the queue's lane
	// (flinkfsm_queue_wait_seconds): "needed" (an event asked, or a phase under way) and "resting"
	// (the polls of objects at rest), which the first must not wait behind.
	Lanes map[string]laneWait `json:"lanes,omitempty"`
	// Creates are applications created one at a time after the window, while the fleet polls.
	Creates *createProbe `json:"creates,omitempty"`
	// GCCycles are the garbage collections of the operator and of the API server in the window:
	// on two cores each one's marking takes the processors the other's goroutines wait for.
	GCCycles map[string]uint64 `json:"gcCycles,omitempty"`
	// OperatorNiceness is the operator's niceness as the kernel had it at the window's end
	// (-operator-nice, or a variant's nice=N; nice(1) without the privilege leaves it at 0).
	OperatorNiceness *int `json:"operatorNiceness,omitempty"`
	// ServedP50Milli and the rest are the simulator's own time for the same calls, from the request
	// read to the answer written: what a Flink call took beyond it, it waited for a core on either
	// side or in the network.
	ServedP50Milli float64 `json:"servedP50Ms"`
	ServedP90Milli float64 `json:"servedP90Ms"`
	ServedP99Milli float64 `json:"servedP99Ms"`
	// CPUProfile is where the operator's CPU profile of the window was saved, when the run set
	// profiling=true (-set profiling=true).
	CPUProfile string `json:"cpuProfile,omitempty"`
	Memory     memory `json:"memory"`
	// Processes is every process of the environment at the end of the usual window, with the CPU
	// each spent in it: what the steady state of this many applications costs the machine.
	Processes environmentFigures `json:"processes"`
	// APIWritesPerSecond are everyone's writes to the API server in the usual window, per second, by
	// verb and resource: the checkpoint records in status (PATCH flinkapplications/status) beside
	// the checkpoint book's pages (PATCH configmaps).
	APIWritesPerSecond map[string]float64 `json:"apiWritesPerSecond,omitempty"`
}

// laneWait is how long the keys of one lane of the operator's queue waited for a worker.
type laneWait struct {
	Taken uint64  `json:"taken"`
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMsBound"` // the upper bound of the highest bucket with any
}

// groupFigures are the steady-state figures of one group of applications.
type groupFigures struct {
	Apps int `json:"apps"`
	// StatusWrites counts every new resourceVersion of the group's applications in the window;
	// WrittenFields, how often each status field changed in those writes.
	StatusWrites           int            `json:"statusWrites"`
	WrittenFields          map[string]int `json:"writtenFields"`
	StatusWritesPerAppHour float64        `json:"statusWritesPerAppPerHour"`
	// MostWritesInASecond and SecondsWithWrites say how the writes spread over the window: the most
	// in one second, and the share of its seconds that saw any.
	MostWritesInASecond   int     `json:"mostWritesInASecond"`
	SecondsWithWrites     float64 `json:"secondsWithWrites"`
	RESTCalls             int64   `json:"restCalls"`
	RESTCallsPerAppMinute float64 `json:"restCallsPerAppPerMinute"`
	MaxRESTCallsPerAppMin float64 `json:"maxRestCallsPerAppPerMinute"`
	// RESTCallsByEndpoint is calls per application per minute, by endpoint.
	RESTCallsByEndpoint map[string]float64 `json:"restCallsPerAppPerMinuteByEndpoint"`
	// NotRunningAtEnd counts applications that were not Running when the window closed.
	NotRunningAtEnd int `json:"notRunningAtEnd"`
}

// group is applications measured together, "<namespace>/<name>". shared says that other
// applications live in their namespaces too, so that the REST calls by endpoint are counted by
// service.
type group struct {
	keys   []string
	shared bool
}

// namespaces are the namespaces of keys, in the order they first appear.
func namespaces(keys []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		ns, _, _ := strings.Cut(k, "/")
		if !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	return out
}

type groupSnapshot struct {
	calls     map[string]int64
	endpoints map[string]int64
}

func (b *bench) snapshot(g group) groupSnapshot { return b.snapshotOf(b.env.Fleet, g) }

// requestCounts is the simulator's counts of calls, as they stand (its Fleet) or as they stood at
// the end of a window (flinksim.RequestCounts).
type requestCounts interface {
	Requests() map[string]int64
	RequestsByEndpointOf(namespace string, keep func(service string) bool) map[string]int64
	RequestsByService(namespace string) map[string]map[string]int64
}

// snapshotOf is snapshot read from counts.
func (b *bench) snapshotOf(counts requestCounts, g group) groupSnapshot {
	var keep func(service string) bool
	if g.shared {
		// Application names are unique across the fleet's namespaces.
		mine := make(map[string]bool, len(g.keys))
		for _, k := range g.keys {
			_, name, _ := strings.Cut(k, "/")
			mine[name] = true
		}
		keep = func(service string) bool { return mine[appOfService(service)] }
	}
	endpoints := map[string]int64{}
	for _, ns := range namespaces(g.keys) {
		for ep, n := range counts.RequestsByEndpointOf(ns, keep) {
			endpoints[ep] += n
		}
	}
	return groupSnapshot{calls: callsByAppOf(counts, g.keys), endpoints: endpoints}
}

func (b *bench) figures(g group, before, after groupSnapshot, from, to time.Time) groupFigures {
	minutes, n := to.Sub(from).Minutes(), float64(len(g.keys))
	f := groupFigures{Apps: len(g.keys), RESTCallsByEndpoint: map[string]float64{}}
	f.StatusWrites, f.WrittenFields = b.rec.writesBetween(g.keys, from, to)
	f.StatusWritesPerAppHour = float64(f.StatusWrites) / n / to.Sub(from).Hours()
	f.MostWritesInASecond, f.SecondsWithWrites = b.rec.writesPerSecond(g.keys, from, to)
	for app, c := range after.calls {
		d := c - before.calls[app]
		f.RESTCalls += d
		f.MaxRESTCallsPerAppMin = math.Max(f.MaxRESTCallsPerAppMin, float64(d)/minutes)
	}
	f.RESTCallsPerAppMinute = float64(f.RESTCalls) / n / minutes
	for ep, c := range after.endpoints {
		if d := c - before.endpoints[ep]; d > 0 {
			f.RESTCallsByEndpoint[ep] = math.Round(100*float64(d)/n/minutes) / 100
		}
	}
	for _, k := range g.keys {
		if !isRunning(b.rec.latest(k), "") {
			f.NotRunningAtEnd++
		}
	}
	return f
}

// steady lets the applications settle, then measures them for window: status writes, REST calls
// and reconcile latency of applications that only run. The savepointing group, if any, is measured
// on until its own window ends, after every other figure is taken.
func (b *bench) steady(ctx context.Context, fleet group, fleetCheckpointing, checkpointing *group, sp *savepointing, settle, window time.Duration) (*steadyResult, error) {
	res := &steadyResult{WindowSeconds: window.Seconds(), SettleSeconds: settle.Seconds()}
	groups := []group{fleet}
	for _, g := range []*group{fleetCheckpointing, checkpointing} {
		if g != nil {
			groups = append(groups, *g)
		}
	}
	b.logf("(c) letting the applications settle for %s, then measuring for %s", settle, window)
	if err := sleep(ctx, settle); err != nil {
		return nil, err
	}
	s0 := servedHistogram(b.env.Fleet.ServedTimes())
	op0, err := b.passesAndCalls(ctx)
	if err != nil {
		return nil, err
	}
	var before []groupSnapshot
	for _, g := range groups {
		before = append(before, b.snapshot(g))
	}
	var spBefore groupSnapshot
	if sp != nil {
		spBefore = b.snapshot(sp.group)
	}
	apiBefore, err := b.apiServerMetrics(ctx)
	if err != nil {
		return nil, err
	}
	requestsBefore := apiBefore.requests
	procsBefore := b.sampleEnvironment()
	from := time.Now()
	profiled := b.profileCPU(ctx, window)
	if err := sleep(ctx, window); err != nil {
		return nil, err
	}
	res.CPUProfile = <-profiled
	to := time.Now()
	res.Processes = b.sampleEnvironment().since(procsBefore).over(to.Sub(from))
	res.GCCycles = map[string]uint64{}
	if apiWindow, err := b.apiServerMetrics(ctx); err == nil {
		res.APIWritesPerSecond = writesPerSecond(requestsBefore, apiWindow.requests, to.Sub(from))
		res.GCCycles["kube-apiserver"] = apiWindow.gcCycles - apiBefore.gcCycles
	}
	var figs []groupFigures
	for i, g := range groups {
		figs = append(figs, b.figures(g, before[i], b.snapshot(g), from, to))
	}
	op1, err := b.passesAndCalls(ctx)
	if err != nil {
		return nil, err
	}
	served := servedHistogram(b.env.Fleet.ServedTimes()).minus(s0)
	res.Fleet, figs = figs[0], figs[1:]
	if fleetCheckpointing != nil {
		res.FleetCheckpointing, figs = &figs[0], figs[1:]
	}
	if checkpointing != nil {
		res.Checkpointing = &figs[0]
	}
	delta := op1.passes.minus(op0.passes)
	res.Reconciles = delta.count
	res.ReconcileP50Milli = 1000 * delta.quantile(0.50)
	res.ReconcileP90Milli = 1000 * delta.quantile(0.90)
	res.ReconcileP99Milli = 1000 * delta.quantile(0.99)
	calls := op1.calls.minus(op0.calls)
	res.FlinkCalls = calls.count
	res.FlinkCallP50Milli = 1000 * calls.quantile(0.50)
	res.FlinkCallP90Milli = 1000 * calls.quantile(0.90)
	res.FlinkCallP99Milli = 1000 * calls.quantile(0.99)
	queued := op1.queued.minus(op0.queued)
	for name, h := range op1.lanes {
		d := h.minus(op0.lanes[name])
		if d.count == 0 {
			continue
		}
		if res.Lanes == nil {
			res.Lanes = map[string]laneWait{}
		}
		res.Lanes[name] = laneWait{Taken: d.count, P50Ms: 1000 * d.quantile(0.50), P99Ms: 1000 * d.quantile(0.99), MaxMs: 1000 * d.quantile(1)}
	}
	res.GCCycles["operator"] = op1.gcCycles - op0.gcCycles
	res.QueuedP50Milli = 1000 * queued.quantile(0.50)
	res.QueuedP99Milli = 1000 * queued.quantile(0.99)
	res.ServedP50Milli = 1000 * served.quantile(0.50)
	res.ServedP90Milli = 1000 * served.quantile(0.90)
	res.ServedP99Milli = 1000 * served.quantile(0.99)
	res.Memory = b.memory(ctx)
	if n, ok := b.env.OperatorNiceness(); ok {
		res.OperatorNiceness = &n
	}
	nice := "unknown"
	if res.OperatorNiceness != nil {
		nice = strconv.Itoa(*res.OperatorNiceness)
	}
	b.logf("(c) %.1f status writes per app per hour, %.2f REST calls per app per minute, reconcile p50 %.1f ms p99 %.1f ms; RSS %.0f MiB; the operator at nice %s",
		res.Fleet.StatusWritesPerAppHour, res.Fleet.RESTCallsPerAppMinute, res.ReconcileP50Milli, res.ReconcileP99Milli, res.Memory.RSSMiB, nice)
	b.logf("(c) keys waited for a worker p50 %.1f ms, p99 %.1f ms; garbage collections in the window: operator %d, API server %d",
		res.QueuedP50Milli, res.QueuedP99Milli, res.GCCycles["operator"], res.GCCycles["kube-apiserver"])
	for _, name := range []string{"needed", "resting"} {
		if w, ok := res.Lanes[name]; ok {
			b.logf("(c) the %s lane: %d keys taken, waited past their due time p50 %.1f ms, p99 %.1f ms, at most %.0f ms",
				name, w.Taken, w.P50Ms, w.P99Ms, w.MaxMs)
		}
	}
	b.logf("(c) %d Flink calls: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms; the simulator's handlers answered in p50 %.1f ms, p90 %.1f ms, p99 %.1f ms",
		res.FlinkCalls, res.FlinkCallP50Milli, res.FlinkCallP90Milli, res.FlinkCallP99Milli, res.ServedP50Milli, res.ServedP90Milli, res.ServedP99Milli)
	if f := res.FleetCheckpointing; f != nil {
		b.logf("(c) the %d checkpointing apps of the fleet: %.1f status writes per app per hour (at most %d in a second, %.0f%% of the seconds with any), %.2f REST calls per app per minute",
			f.Apps, f.StatusWritesPerAppHour, f.MostWritesInASecond, 100*f.SecondsWithWrites, f.RESTCallsPerAppMinute)
	}
	b.logf("(c) the environment: %s", res.Processes)
	if sp == nil {
		return res, nil
	}
	spWindow := sp.window(window)
	if rest := time.Until(from.Add(spWindow)); rest > 0 {
		b.logf("(c) measuring the savepointing applications for %s more (their window: %s)", rest.Round(time.Second), spWindow)
		if err := sleep(ctx, rest); err != nil {
			return nil, err
		}
	}
	spTo := time.Now()
	requestsAfter, err := b.apiRequests(ctx)
	if err != nil {
		return nil, err
	}
	spFigures := b.figures(sp.group, spBefore, b.snapshot(sp.group), from, spTo)
	res.Savepointing = &spFigures
	res.PeriodicSavepoints = b.savepointFigures(sp, from, spTo, requestsBefore, requestsAfter)
	p := res.PeriodicSavepoints
	b.logf("(c) %d savepoints of %d apps: %.2f owner writes and %.2f FlinkSnapshot writes per savepoint, %d owner writes for nothing else",
		p.Savepoints, p.Apps, p.Cost.OwnerWritesPerSavepoint, p.Cost.SnapshotWritesPerSavepoint, p.OwnerWrites-p.OwnerWritesForSavepoints)
	return res, nil
}

// callsByApp sums the simulator's request counts per application: an application's calls go to
// its clusters' Services "<app>-<hash>" in its namespace.
func (b *bench) callsByApp(keys []string) map[string]int64 { return callsByAppOf(b.env.Fleet, keys) }

// callsByAppOf is callsByApp read from counts.
func callsByAppOf(counts requestCounts, keys []string) map[string]int64 {
	out := make(map[string]int64, len(keys))
	for _, k := range keys {
		out[k] = 0
	}
	for cluster, n := range counts.Requests() {
		// "<namespace>/<app>-<hash>"
		if app := appOfService(cluster); app != "" {
			if _, ours := out[app]; ours {
				out[app] += n
			}
		}
	}
	return out
}

// appOfService is the application whose cluster a Service "<app>-<hash>" is (also with a
// "<namespace>/" before it), "" for a name of another shape.
func appOfService(service string) string {
	i := strings.LastIndex(service, "-")
	if i <= 0 {
		return ""
	}
	return service[:i]
}

// histogram is one scrape of a Prometheus histogram: cumulative counts by upper bound.
type histogram struct {
	bounds []float64
	counts []uint64
	count  uint64
}

func (h histogram) minus(o histogram) histogram {
	out := histogram{bounds: h.bounds, counts: make([]uint64, len(h.counts)), count: h.count - o.count}
	for i := range h.counts {
		out.counts[i] = h.counts[i]
		if i < len(o.counts) {
			out.counts[i] -= o.counts[i]
		}
	}
	return out
}

// servedHistogram is the simulator's served-time histogram in the form of the operator's.
func servedHistogram(t flinksim.ServedTimes) histogram {
	return histogram{bounds: t.Bounds, counts: t.Cumulative, count: t.Count}
}

// quantile interpolates linearly within the bucket holding the q-th observation, as Prometheus'
// histogram_quantile does; beyond the last finite bound it answers that bound. Without observations
// it answers 0 (JSON has no NaN).
func (h histogram) quantile(q float64) float64 {
	if h.count == 0 {
		return 0
	}
	rank := q * float64(h.count)
	lower, below := 0.0, uint64(0)
	for i, upper := range h.bounds {
		if float64(h.counts[i]) >= rank {
			in := h.counts[i] - below
			if in == 0 {
				return upper
			}
			return lower + (upper-lower)*(rank-float64(below))/float64(in)
		}
		lower, below = upper, h.counts[i]
	}
	return lower
}

// scrape reads the operator's /metrics.
func (b *bench) scrape(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.metricsAddress()+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing /metrics: %w", err)
	}
	return families, nil
}

// The operator's histograms (c) reads.
const (
	reconcileMetric = "flinkfsm_reconcile_duration_seconds"
	flinkCallMetric = "flinkfsm_flink_request_duration_seconds"
	queueWaitMetric = "flinkfsm_workqueue_queue_duration_seconds"
	laneWaitMetric  = "flinkfsm_queue_wait_seconds"
)

// operatorScrape is what (c) reads of one scrape of the operator's /metrics: at 10,000
// applications it is about 5 MB, and each scrape is work the window measures.
type operatorScrape struct {
	passes, calls, queued histogram
	// lanes are the waits past the due time by lane (an older operator has none).
	lanes    map[string]histogram
	gcCycles uint64
}

// passesAndCalls reads the passes', the Flink calls' and the workqueue waits' histograms and the
// collector's cycles from one scrape.
func (b *bench) passesAndCalls(ctx context.Context) (operatorScrape, error) {
	families, err := b.scrape(ctx)
	if err != nil {
		return operatorScrape{}, err
	}
	passes, err := histogramOf(families, reconcileMetric)
	if err != nil {
		return operatorScrape{}, err
	}
	calls, _ := histogramOf(families, flinkCallMetric)  // none before the first Flink call: empty
	queued, _ := histogramOf(families, queueWaitMetric) // an older operator may not have it: empty
	lanes := map[string]histogram{}
	for _, name := range []string{"needed", "resting"} {
		if h, err := histogramWhere(families, laneWaitMetric, "lane", name); err == nil {
			lanes[name] = h
		}
	}
	return operatorScrape{passes: passes, calls: calls, queued: queued, lanes: lanes, gcCycles: gcCycles(families)}, nil
}

// histogramOf is one of the operator's histograms, summed over its series; an error when the
// scrape has none (no pass or no Flink call yet).
func histogramOf(families map[string]*dto.MetricFamily, name string) (histogram, error) {
	return histogramWhere(families, name, "", "")
}

// histogramWhere is histogramOf over the series whose label has the value (all when label is "").
func histogramWhere(families map[string]*dto.MetricFamily, name, label, value string) (histogram, error) {
	f := families[name]
	if f == nil || len(f.GetMetric()) == 0 {
		return histogram{}, fmt.Errorf("the operator's /metrics has no %s", name)
	}
	// One series per kind or operation; their buckets are the same, so the sum is every
	// observation's histogram.
	h := histogram{}
	cumulative := map[float64]uint64{}
	for _, series := range f.GetMetric() {
		if label != "" && !hasLabel(series, label, value) {
			continue
		}
		m := series.GetHistogram()
		h.count += m.GetSampleCount()
		for _, bk := range m.GetBucket() {
			if !math.IsInf(bk.GetUpperBound(), 1) {
				cumulative[bk.GetUpperBound()] += bk.GetCumulativeCount()
			}
		}
	}
	for bound := range cumulative {
		h.bounds = append(h.bounds, bound)
	}
	sort.Float64s(h.bounds)
	for _, bound := range h.bounds {
		h.counts = append(h.counts, cumulative[bound])
	}
	return h, nil
}

func hasLabel(series *dto.Metric, label, value string) bool {
	for _, l := range series.GetLabel() {
		if l.GetName() == label {
			return l.GetValue() == value
		}
	}
	return false
}

// memory is the operator's memory at one moment. Heap figures tell whether resident memory is
// live data or heap the Go runtime has not returned yet.
type memory struct {
	RSSMiB       float64 `json:"rssMiB"`
	HeapInuseMiB float64 `json:"heapInuseMiB"`
	HeapAllocMiB float64 `json:"heapAllocMiB"`
}

func (b *bench) memory(ctx context.Context) memory {
	m := memory{RSSMiB: b.rssMiB()}
	families, err := b.scrape(ctx)
	if err != nil {
		return m
	}
	gauge := func(name string) float64 {
		if f := families[name]; f != nil && len(f.GetMetric()) > 0 {
			return f.GetMetric()[0].GetGauge().GetValue() / (1 << 20)
		}
		return 0
	}
	m.HeapInuseMiB, m.HeapAllocMiB = gauge("go_memstats_heap_inuse_bytes"), gauge("go_memstats_heap_alloc_bytes")
	return m
}

// rssMiB is the operator's resident memory, VmRSS in /proc; 0 when it cannot be read.
func (b *bench) rssMiB() float64 {
	_, rss := procMemoryMiB(b.env.OperatorPID())
	return rss
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
