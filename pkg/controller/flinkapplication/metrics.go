package flinkapplication

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/loop"
)

// Metrics are the state machine's Prometheus series: the loop's about passes and the queue, and the
// machine's about phases. Names carry no prefix: the operator registers them through a registerer
// that adds its own (flinkfsm_ by default).
type Metrics struct {
	Loop          *loop.Metrics
	transitions   *prometheus.CounterVec
	phaseDuration *prometheus.HistogramVec
}

// phaseBuckets span what phases last: seconds for a submission, minutes for a savepoint of large
// state, hours to days for Running.
var phaseBuckets = []float64{1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 3 * 3600, 12 * 3600, 24 * 3600, 7 * 24 * 3600}

// NewMetrics registers the loop's and the state machine's series with reg; a nil reg keeps them
// unregistered.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Loop: loop.NewMetrics(reg),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "phase_transitions_total", Help: "Phase transitions, by kind and source and target phase."},
			[]string{"kind", "from", "to"}),
		phaseDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "phase_duration_seconds", Help: "Time an object spent in a phase before leaving it, by kind and phase.",
			Buckets: phaseBuckets}, []string{"kind", "phase"}),
	}
	if reg != nil {
		reg.MustRegister(m.transitions, m.phaseDuration)
	}
	return m
}

// loopMetrics are the loop's series, nil when there are none.
func (m *Metrics) loopMetrics() *loop.Metrics {
	if m == nil {
		return nil
	}
	return m.Loop
}

// transition records a phase change written by a pass.
func (m *Metrics) transition(kind string, from, to Phase, fromStarted *metav1.Time, now time.Time) {
	if m == nil {
		return
	}
	to = to.Normalized()
	if from == to {
		return
	}
	m.transitions.WithLabelValues(kind, string(from), string(to)).Inc()
	if fromStarted != nil {
		m.phaseDuration.WithLabelValues(kind, string(from)).Observe(now.Sub(fromStarted.Time).Seconds())
	}
}
