package flinkapplication

import (
	"time"

	"github.com/flyteorg/flytestdlib/promutils"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Metrics are the state machine's Prometheus series.
type Metrics struct {
	reconcileLatency prometheus.Histogram
	reconcileErrors  prometheus.Counter
	transitions      *prometheus.CounterVec
	timeInPhase      *prometheus.HistogramVec
}

// NewMetrics registers the state machine's series in the scope.
func NewMetrics(scope promutils.Scope) *Metrics {
	return &Metrics{
		reconcileLatency: scope.MustNewHistogram("reconcile_latency_seconds", "Time to reconcile one application once"),
		reconcileErrors:  scope.MustNewCounter("reconcile_errors_total", "Reconciles that failed to write status"),
		transitions: scope.MustNewCounterVec("phase_transitions_total", "Phase transitions, by source and target phase",
			"from", "to"),
		timeInPhase: scope.MustNewHistogramVec("time_in_phase_seconds", "Time an application spent in a phase before leaving it",
			"phase"),
	}
}

func (m *Metrics) observe(from, to v1beta1.FlinkApplicationPhase, fromStarted *metav1.Time, now time.Time, took time.Duration) {
	if m == nil {
		return
	}
	m.reconcileLatency.Observe(took.Seconds())
	to = to.Normalized()
	if from == to {
		return
	}
	m.transitions.WithLabelValues(string(from), string(to)).Inc()
	if fromStarted != nil {
		m.timeInPhase.WithLabelValues(string(from)).Observe(now.Sub(fromStarted.Time).Seconds())
	}
}
