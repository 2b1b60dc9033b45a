package operator

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/util/workqueue"

	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// newRegistry is what /metrics serves: the Go runtime's and the process's series under their
// standard names, and everything the operator registers through the returned registerer under
// prefix_ (flinkfsm_ by default). A registry of its own, not the global one, keeps what a library
// registers globally from changing the scrape, and lets a test read exactly this.
func newRegistry(prefix string) (*prometheus.Registry, prometheus.Registerer) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg, prometheus.WrapRegistererWithPrefix(prefix+"_", reg)
}

// replicaMetrics are what a replica says of itself: whether it leads and whether it is ready.
func replicaMetrics(reg prometheus.Registerer, st *state) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "leader", Help: "1 while this replica holds the leader lease (or runs without leader election), else 0."},
		func() float64 { return boolValue(st.acting.Load()) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ready", Help: "1 while /readyz answers ok: a standby, or a leader whose caches synced and whose workers move."},
		func() float64 { _, err := st.ready(); return boolValue(err == nil) }))
}

// shardMetric says which applications this operator owns (docs/operations.md, shards): one series
// per process, whose labels are its namespaces, its selector and its leader Lease. Beside the
// per-object series it tells, across instances, which shard reports an object.
func shardMetric(reg prometheus.Registerer, cfg *config.Config) {
	namespaces := strings.Join(cfg.Namespaces(), ",")
	selector := ""
	if sel, err := cfg.Shard(); err == nil && sel != nil {
		selector = sel.String()
	}
	lease := ""
	if cfg.LeaderElection.Enabled {
		lease = cfg.LeaseName()
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "shard_info", Help: "1, with the namespaces (empty: all), the label selector (empty: all) and the leader Lease (empty: no election) of this operator's shard.",
		ConstLabels: prometheus.Labels{"namespaces": namespaces, "selector": selector, "lease": lease}},
		func() float64 { return 1 }))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// workqueueMetrics gives client-go's workqueues series named workqueue_*, labelled by queue name.
type workqueueMetrics struct {
	depth                   *prometheus.GaugeVec
	adds, retries           *prometheus.CounterVec
	latency, workDuration   *prometheus.HistogramVec
	unfinished, longestWork *prometheus.GaugeVec
}

var installWorkqueueMetrics sync.Once

// useWorkqueueMetrics registers the workqueue series with reg. client-go takes one provider per
// process, before the first queue is made; a second call keeps the first registration.
func useWorkqueueMetrics(reg prometheus.Registerer) {
	installWorkqueueMetrics.Do(func() {
		m := newWorkqueueMetrics()
		reg.MustRegister(m.collectors()...)
		workqueue.SetProvider(m)
	})
}

func newWorkqueueMetrics() *workqueueMetrics {
	queueBuckets := prometheus.ExponentialBuckets(.001, 4, 10) // 1 ms to about 4 min
	return &workqueueMetrics{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth",
			Help: "Objects waiting in the workqueue."}, []string{"name"}),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_adds_total",
			Help: "Objects added to the workqueue."}, []string{"name"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_retries_total",
			Help: "Objects queued again with backoff after a failed pass."}, []string{"name"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_queue_duration_seconds",
			Help: "Time an object waited in the workqueue before a worker took it.", Buckets: queueBuckets}, []string{"name"}),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_work_duration_seconds",
			Help: "Time a worker spent on an object.", Buckets: queueBuckets}, []string{"name"}),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_unfinished_work_seconds",
			Help: "Seconds of work in progress not yet observed by work_duration; large values mean stuck workers."},
			[]string{"name"}),
		longestWork: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_longest_running_processor_seconds",
			Help: "How long the longest-running worker has been on its object."}, []string{"name"}),
	}
}

func (m *workqueueMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.depth, m.adds, m.retries, m.latency, m.workDuration, m.unfinished, m.longestWork}
}

func (m *workqueueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return m.depth.WithLabelValues(name)
}

func (m *workqueueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return m.adds.WithLabelValues(name)
}

func (m *workqueueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return m.latency.WithLabelValues(name)
}

func (m *workqueueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return m.workDuration.WithLabelValues(name)
}

func (m *workqueueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.unfinished.WithLabelValues(name)
}

func (m *workqueueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.longestWork.WithLabelValues(name)
}

func (m *workqueueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return m.retries.WithLabelValues(name)
}
