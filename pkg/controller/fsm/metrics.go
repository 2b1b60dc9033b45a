package fsm

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metrics are the machine's Prometheus series about phases. Names carry no prefix: the operator
// registers them through a registerer that adds its own (flinkfsm_ by default).
type Metrics struct {
	transitions   *prometheus.CounterVec
	phaseDuration *prometheus.HistogramVec
}

// phaseBuckets span what phases last: seconds for a submission, minutes for a savepoint of large
// state, hours to days for Running.
var phaseBuckets = []float64{1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 3 * 3600, 12 * 3600, 24 * 3600, 7 * 24 * 3600}

// NewMetrics registers the machine's series with reg; a nil reg keeps them unregistered.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
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

// Transition records a phase change written by a pass: from the phase that began at fromStarted
// to the phase to, now. A nil Metrics records nothing.
func (m *Metrics) Transition(kind string, from, to Phase, fromStarted *metav1.Time, now time.Time) {
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
