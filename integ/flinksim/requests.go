package flinksim

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// requestCounter counts the REST calls a Fleet serves, so that a benchmark can tell how much the
// operator asks of Flink, and of which endpoints, without instrumenting the operator itself.
type requestCounter struct {
	mu        sync.Mutex
	byCluster map[string]int64
	// byEndpoint is, per namespace and service, the calls by "METHOD /path" with ids replaced:
	// a benchmark tells groups of applications in one namespace apart by their services.
	byEndpoint map[string]map[string]map[string]int64
	// armed is set by MarkFirstRequest, and first is the time of the first call served after it.
	armed bool
	first time.Time
}

func (c *requestCounter) add(namespace, service, method, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byCluster == nil {
		c.byCluster, c.byEndpoint = map[string]int64{}, map[string]map[string]map[string]int64{}
	}
	if c.armed && c.first.IsZero() {
		c.first = time.Now()
	}
	c.byCluster[namespace+"/"+service]++
	services := c.byEndpoint[namespace]
	if services == nil {
		services = map[string]map[string]int64{}
		c.byEndpoint[namespace] = services
	}
	endpoints := services[service]
	if endpoints == nil {
		endpoints = map[string]int64{}
		services[service] = endpoints
	}
	endpoints[method+" "+endpointPath(path)]++
}

// endpointPath is a request path with its ids replaced by placeholders, so that calls to one
// endpoint count together: /jobs/<32 hex>/checkpoints becomes /jobs/:id/checkpoints.
func endpointPath(path string) string {
	segs := strings.Split(strings.Trim(strings.TrimPrefix(path, "/v1/"), "/"), "/")
	for i, s := range segs {
		switch {
		case hex32.MatchString(s):
			segs[i] = ":id"
		case strings.HasSuffix(s, ".jar"):
			segs[i] = ":jar"
		default:
			if _, err := strconv.ParseInt(s, 10, 64); err == nil {
				segs[i] = ":n"
			}
		}
	}
	return "/" + strings.Join(segs, "/")
}

// Requests is how many REST calls the Fleet has received so far, keyed "<namespace>/<service>"
// by the cluster's versioned Service. Calls to a cluster whose JobManager is down count too: the
// caller made them all the same.
func (f *Fleet) Requests() map[string]int64 {
	f.requests.mu.Lock()
	defer f.requests.mu.Unlock()
	out := make(map[string]int64, len(f.requests.byCluster))
	for k, v := range f.requests.byCluster {
		out[k] = v
	}
	return out
}

// RequestsByEndpoint is how many REST calls the Fleet has received so far for clusters in the
// namespace, keyed "METHOD /path" with job, trigger and checkpoint ids replaced by placeholders.
func (f *Fleet) RequestsByEndpoint(namespace string) map[string]int64 {
	return f.RequestsByEndpointOf(namespace, nil)
}

// RequestsByEndpointOf is RequestsByEndpoint for the services of the namespace that keep accepts
// (all when nil): the clusters' Services are "<app>-<hash>".
func (f *Fleet) RequestsByEndpointOf(namespace string, keep func(service string) bool) map[string]int64 {
	f.requests.mu.Lock()
	defer f.requests.mu.Unlock()
	out := map[string]int64{}
	for service, endpoints := range f.requests.byEndpoint[namespace] {
		if keep != nil && !keep(service) {
			continue
		}
		for k, v := range endpoints {
			out[k] += v
		}
	}
	return out
}

// RequestsByService is, for the namespace, each service's calls by endpoint (as RequestsByEndpoint
// keys them): a benchmark that judges applications one by one reads which calls each one got.
func (f *Fleet) RequestsByService(namespace string) map[string]map[string]int64 {
	f.requests.mu.Lock()
	defer f.requests.mu.Unlock()
	out := make(map[string]map[string]int64, len(f.requests.byEndpoint[namespace]))
	for service, endpoints := range f.requests.byEndpoint[namespace] {
		c := make(map[string]int64, len(endpoints))
		for k, v := range endpoints {
			c[k] = v
		}
		out[service] = c
	}
	return out
}

// MarkFirstRequest forgets the time of any earlier first call and makes FirstRequest report the
// next call's. A benchmark that polls the counters sees a call only at its next poll, which under
// load can be tens of milliseconds late; a window timed from that sighting would hold calls made
// after the window the benchmark means to count.
func (f *Fleet) MarkFirstRequest() {
	f.requests.mu.Lock()
	defer f.requests.mu.Unlock()
	f.requests.armed, f.requests.first = true, time.Time{}
}

// FirstRequest is when the Fleet received its first call since MarkFirstRequest; false while none
// has come.
func (f *Fleet) FirstRequest() (time.Time, bool) {
	f.requests.mu.Lock()
	defer f.requests.mu.Unlock()
	return f.requests.first, !f.requests.first.IsZero()
}
