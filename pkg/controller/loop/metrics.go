package loop

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Metrics are the loop's Prometheus series about passes and the queue. Names carry no prefix: the
// operator registers them through a registerer that adds its own (flinkfsm_ by default).
type Metrics struct {
	reconcileDuration *prometheus.HistogramVec
	reconcileErrors   *prometheus.CounterVec
	conflicts         *prometheus.CounterVec
	queueWait         *prometheus.HistogramVec
}

// reconcileBuckets reach from a pass that only reads caches to one that waits out the REST client's
// timeouts on an unreachable JobManager.
var reconcileBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// NewMetrics registers the loop's series with reg; a nil reg keeps them unregistered.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		reconcileDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "reconcile_duration_seconds", Help: "Time one pass of the state machine took, by kind of object.",
			Buckets: reconcileBuckets}, []string{"kind"}),
		reconcileErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reconcile_errors_total",
			Help: "Passes that failed and were queued again with backoff, by kind; write conflicts are counted apart."},
			[]string{"kind"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "status_write_conflicts_total",
			Help: "Status writes refused because the object changed since it was read (optimistic locking), by kind. " +
				"They are retried at once and are no error."},
			[]string{"kind"}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "queue_wait_seconds",
			Help: "Time an object waited for a worker past when it was due, by lane: needed (an event asked, or a phase " +
				"under way) or resting (the poll of an object at rest).",
			Buckets: prometheus.ExponentialBuckets(.001, 4, 10)}, []string{"lane"}),
	}
	if reg != nil {
		reg.MustRegister(m.reconcileDuration, m.reconcileErrors, m.conflicts, m.queueWait)
	}
	return m
}

// passEnded records one pass over an object of the kind.
func (m *Metrics) passEnded(kind string, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.reconcileDuration.WithLabelValues(kind).Observe(took.Seconds())
	switch {
	case err == nil:
	case apierrors.IsConflict(err):
		m.conflicts.WithLabelValues(kind).Inc()
	default:
		m.reconcileErrors.WithLabelValues(kind).Inc()
	}
}

// waited records how long a key waited for a worker in its lane.
func (m *Metrics) waited(from lane, wait time.Duration) {
	if m == nil || from == 0 {
		return
	}
	m.queueWait.WithLabelValues(from.String()).Observe(wait.Seconds())
}
