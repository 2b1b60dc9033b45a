package client

import (
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names, without the prefix the operator's registerer adds (flinkfsm_ by default).
const (
	latencyMetric  = "flink_request_duration_seconds"
	requestsMetric = "flink_requests_total"
	errorsMetric   = "flink_request_errors_total"
)

// latencyBuckets reach past the 60 s submit timeout: /jars/run runs main() in the request.
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

type metrics struct {
	latency  *prometheus.HistogramVec
	requests *prometheus.CounterVec
	errors   *prometheus.CounterVec
}

// newMetrics creates the client's metrics and registers them with reg; a nil reg keeps them
// unregistered.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    latencyMetric,
			Help:    "Latency of Flink JobManager REST calls, by operation, including failures.",
			Buckets: latencyBuckets,
		}, []string{"operation"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: requestsMetric,
			Help: "Flink JobManager REST calls, by operation, whatever their outcome.",
		}, []string{"operation"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: errorsMetric,
			Help: "Flink JobManager REST calls that failed, by operation and reason " +
				"(HTTP status code, timeout, transport, decode or invalid).",
		}, []string{"operation", "reason"}),
	}
	if reg != nil {
		m.latency = register(reg, m.latency)
		m.requests = register(reg, m.requests)
		m.errors = register(reg, m.errors)
	}
	return m
}

// register adds c to reg, but instead of failing on a second client with the same registerer it
// shares the series already registered. If the name is taken by an incompatible metric, c stays
// unregistered: losing a metric is better than crashing the operator.
func register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(T); ok {
			return existing
		}
	}
	return c
}

// observe records one call. It is deferred with a pointer to the call's named error result.
func (m *metrics) observe(operation string, start time.Time, errp *error) {
	m.latency.WithLabelValues(operation).Observe(time.Since(start).Seconds())
	m.requests.WithLabelValues(operation).Inc()
	if *errp != nil {
		m.errors.WithLabelValues(operation, failureReason(*errp)).Inc()
	}
}

// Failure reasons that are not an HTTP status code.
const (
	reasonTimeout   = "timeout"
	reasonTransport = "transport"
	reasonDecode    = "decode"
	reasonInvalid   = "invalid"
)

// failureReason keeps the reason label's cardinality small: a status code or one of the
// reasons above.
func failureReason(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return reasonTransport
	}
	switch {
	case errors.Is(e.Cause, errDecode):
		return reasonDecode
	case errors.Is(e.Cause, errInvalidArgument):
		return reasonInvalid
	case e.StatusCode != 0:
		return strconv.Itoa(e.StatusCode)
	case isTimeout(e.Cause):
		return reasonTimeout
	default:
		return reasonTransport
	}
}
