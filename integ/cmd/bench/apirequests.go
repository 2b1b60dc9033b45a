package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// apiRequests counts the API server's requests by verb and resource, from its own
// apiserver_request_total. Everyone's requests are counted (the controllers', kwok's, the
// operator's), which is the point: on two cores the API server's CPU is what both the floor and
// the operator's run spend, so the difference between the two runs is what the operator costs it.
func (b *bench) apiRequests(ctx context.Context) (map[string]float64, error) {
	m, err := b.apiServerMetrics(ctx)
	return m.requests, err
}

// apiServerScrape is what the bench reads of one scrape of the API server's /metrics.
type apiServerScrape struct {
	requests map[string]float64
	// gcCycles counts the API server's garbage collections so far (go_gc_duration_seconds).
	gcCycles uint64
}

func (b *bench) apiServerMetrics(ctx context.Context) (apiServerScrape, error) {
	raw, err := b.kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return apiServerScrape{}, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return apiServerScrape{}, err
	}
	return apiServerScrape{requests: apiRequestsOf(families), gcCycles: gcCycles(families)}, nil
}

// gcCycles is how many collections a Go process's go_gc_duration_seconds has observed; 0 without it.
func gcCycles(families map[string]*dto.MetricFamily) uint64 {
	f := families["go_gc_duration_seconds"]
	if f == nil || len(f.GetMetric()) == 0 {
		return 0
	}
	return f.GetMetric()[0].GetSummary().GetSampleCount()
}

func parseAPIRequests(r io.Reader) (map[string]float64, error) {
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	return apiRequestsOf(families), nil
}

func apiRequestsOf(families map[string]*dto.MetricFamily) map[string]float64 {
	counts := map[string]float64{}
	f := families["apiserver_request_total"]
	if f == nil {
		return counts
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["verb"] == "WATCH" || labels["verb"] == "CONNECT" {
			continue
		}
		key := labels["verb"] + " " + labels["resource"]
		if s := labels["subresource"]; s != "" {
			key += "/" + s
		}
		counts[key] += m.GetCounter().GetValue()
	}
	return counts
}

// requestsPerApp is after minus before, per application, leaving out what rounds to nothing.
func requestsPerApp(before, after map[string]float64, n int) map[string]float64 {
	per := map[string]float64{}
	for k, v := range after {
		if d := (v - before[k]) / float64(n); d >= 0.05 {
			per[k] = d
		}
	}
	return per
}

// writesPerSecond are the writes (POST, PUT, PATCH, DELETE) of after minus before over the window,
// per second, leaving out what rounds to nothing.
func writesPerSecond(before, after map[string]float64, window time.Duration) map[string]float64 {
	per := map[string]float64{}
	for k, v := range after {
		verb, _, _ := strings.Cut(k, " ")
		switch verb {
		case "POST", "PUT", "PATCH", "DELETE":
		default:
			continue
		}
		if d := (v - before[k]) / window.Seconds(); d >= 0.005 {
			per[k] = d
		}
	}
	return per
}

func totalRequests(per map[string]float64) float64 {
	t := 0.0
	for _, v := range per {
		t += v
	}
	return t
}

// formatRequests lists the busiest first.
func formatRequests(per map[string]float64) string {
	keys := make([]string, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if per[keys[i]] != per[keys[j]] {
			return per[keys[i]] > per[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, per[k]))
	}
	return strings.Join(parts, ", ")
}
