package client

import (
	"errors"
	"strconv"
	"time"

	"github.com/flyteorg/flytestdlib/promutils"
	"github.com/prometheus/client_golang/prometheus"
)

// Metric names under the scope given to New. flytestdlib joins scope and name with ':', so
// with scope "flink:client:" the histogram is "flink:client:request_latency_seconds".
const (
	latencyMetric   = "request_latency_seconds"
	succeededMetric = "requests_succeeded_total"
	failedMetric    = "requests_failed_total"
)

// latencyBuckets reach past the 60 s submit timeout: /jars/run runs main() in the request.
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

type metrics struct {
	latency   *prometheus.HistogramVec
	succeeded *prometheus.CounterVec
	failed    *prometheus.CounterVec
}

// newMetrics creates the client's metrics under scope. A nil scope keeps them unregistered.
func newMetrics(scope promutils.Scope) *metrics {
	name := func(n string) string { return n }
	if scope != nil {
		name = scope.NewScopedMetricName
	}
	m := &metrics{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    name(latencyMetric),
			Help:    "Latency of Flink JobManager REST calls, by operation, including failures.",
			Buckets: latencyBuckets,
		}, []string{"operation"}),
		succeeded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: name(succeededMetric),
			Help: "Flink JobManager REST calls that succeeded, by operation.",
		}, []string{"operation"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: name(failedMetric),
			Help: "Flink JobManager REST calls that failed, by operation and reason " +
				"(HTTP status code, timeout, transport, decode or invalid).",
		}, []string{"operation", "reason"}),
	}
	if scope != nil {
		m.latency = register(m.latency)
		m.succeeded = register(m.succeeded)
		m.failed = register(m.failed)
	}
	return m
}

// register adds c to the default registry like promutils does, but instead of panicking on a
// second client in the same scope it shares the series already registered. If the name is
// taken by an incompatible metric, c stays unregistered: losing a metric is better than
// crashing the operator.
func register[T prometheus.Collector](c T) T {
	err := prometheus.Register(c)
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
	if *errp == nil {
		m.succeeded.WithLabelValues(operation).Inc()
		return
	}
	m.failed.WithLabelValues(operation, failureReason(*errp)).Inc()
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
