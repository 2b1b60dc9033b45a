package operator

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// kubeClientMetrics are how the operator's requests to the API server fare: how long each takes,
// how long it waited for the client's own rate limit first, and what came back. A busy API server
// and a too-small kubeAPIQPS look alike from outside (everything is slow); these tell them apart.
type kubeClientMetrics struct {
	latency, throttled *prometheus.HistogramVec
	results            *prometheus.CounterVec
}

var installKubeClientMetrics sync.Once

// useKubeClientMetrics registers the series with reg. client-go takes one set per process; a second
// call keeps the first registration.
func useKubeClientMetrics(reg prometheus.Registerer) {
	installKubeClientMetrics.Do(func() {
		buckets := prometheus.ExponentialBuckets(.001, 2, 15) // 1 ms to about 16 s
		m := &kubeClientMetrics{
			latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kube_request_duration_seconds",
				Help: "How long the operator's requests to the API server took, by verb and resource.", Buckets: buckets},
				[]string{"verb", "resource"}),
			throttled: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kube_request_throttled_seconds",
				Help: "How long requests waited for the client's own rate limit (kubeAPIQPS, kubeAPIBurst) before they were sent.", Buckets: buckets},
				[]string{"verb", "resource"}),
			results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kube_requests_total",
				Help: "The operator's requests to the API server, by HTTP method and status code."},
				[]string{"method", "code"}),
		}
		reg.MustRegister(m.latency, m.throttled, m.results)
		clientmetrics.Register(clientmetrics.RegisterOpts{
			RequestLatency:     latencyByResource{m.latency},
			RateLimiterLatency: latencyByResource{m.throttled},
			RequestResult:      resultByCode{m.results},
		})
	})
}

type latencyByResource struct{ h *prometheus.HistogramVec }

func (l latencyByResource) Observe(_ context.Context, verb string, u url.URL, latency time.Duration) {
	l.h.WithLabelValues(verb, resourceOf(u.Path)).Observe(latency.Seconds())
}

type resultByCode struct{ c *prometheus.CounterVec }

func (r resultByCode) Increment(_ context.Context, code, method, _ string) {
	r.c.WithLabelValues(method, code).Inc()
}

// resourceOf is the resource (and subresource) a request path names, without namespace or object
// name, so that the label stays one of a few values: /api/v1/namespaces/ns/pods/p/status is
// "pods/status", /apis/flink.k8s.io/v1beta1/flinkapplications is "flinkapplications".
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return "other"
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:] // a namespaced resource; "namespaces/ns" alone is the namespace itself
	}
	switch len(parts) {
	case 0:
		return "namespaces"
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}
