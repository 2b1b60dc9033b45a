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
	// armed is set by MarkWindow, and first is the time of the first call served after it.
	armed bool
	first time.Time
	// window is how long after first the counts are kept as they stood (MarkWindow), and atEnd
	// those counts once it has passed.
	window time.Duration
	atEnd  *RequestCounts
}

// RequestCounts is the Fleet's REST calls as they stood at one moment (WindowCounts).
type RequestCounts struct {
	byCluster  map[string]int64
	byEndpoint map[string]map[string]map[string]int64
}

func (c *requestCounter) add(namespace, service, method, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byCluster == nil {
		c.byCluster, c.byEndpoint = map[string]int64{}, map[string]map[string]map[string]int64{}
	}
	if c.armed {
		now := time.Now()
		if c.first.IsZero() {
			c.first = now
		}
		c.closeWindow(now)
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

// closeWindow keeps the counts as they stand when the window has ended by now: before the call
// being counted, which came after it.
func (c *requestCounter) closeWindow(now time.Time) {
	if c.window == 0 || c.first.IsZero() || c.atEnd != nil || now.Before(c.first.Add(c.window)) {
		return
	}
	at := &RequestCounts{byCluster: make(map[string]int64, len(c.byCluster)),
		byEndpoint: make(map[string]map[string]map[string]int64, len(c.byEndpoint))}
	for k, v := range c.byCluster {
		at.byCluster[k] = v
	}
	for ns, services := range c.byEndpoint {
		copied := make(map[string]map[string]int64, len(services))
		for service, endpoints := range services {
			e := make(map[string]int64, len(endpoints))
			for k, v := range endpoints {
				e[k] = v
			}
			copied[service] = e
		}
		at.byEndpoint[ns] = copied
	}
	c.atEnd = at
}

// live is the counts as they stand, for reading under the lock.
func (c *requestCounter) live() RequestCounts {
	return RequestCounts{byCluster: c.byCluster, byEndpoint: c.byEndpoint}
}

// Requests is how many REST calls the Fleet has received so far, keyed "<namespace>/<service>"
// by the cluster's versioned Service. Calls to a cluster whose JobManager is down count too: the
// caller made them all the same.
func (f *Fleet) Requests() map[string]int64 {
	f.requests.mu.Lock()
	defer f.requests.mu.Unlock()
	return f.requests.live().Requests()
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
	return f.requests.live().RequestsByEndpointOf(namespace, keep)
}

// RequestsByService is, for the namespace, each service's calls by endpoint (as RequestsByEndpoint
// keys them): a benchmark that judges applications one by one reads which calls each one got.
func (f *Fleet) RequestsByService(namespace string) map[string]map[string]int64 {
	f.requests.mu.Lock()
	defer f.requests.mu.Unlock()
	return f.requests.live().RequestsByService(namespace)
}

// Requests is Fleet.Requests as the counts stood.
func (r RequestCounts) Requests() map[string]int64 {
	out := make(map[string]int64, len(r.byCluster))
	for k, v := range r.byCluster {
		out[k] = v
	}
	return out
}

// RequestsByEndpointOf is Fleet.RequestsByEndpointOf as the counts stood.
func (r RequestCounts) RequestsByEndpointOf(namespace string, keep func(service string) bool) map[string]int64 {
	out := map[string]int64{}
	for service, endpoints := range r.byEndpoint[namespace] {
		if keep != nil && !keep(service) {
			continue
		}
		for k, v := range endpoints {
			out[k] += v
		}
	}
	return out
}

// RequestsByService is Fleet.RequestsByService as the counts stood.
func (r RequestCounts) RequestsByService(namespace string) map[string]map[string]int64 {
	out := make(map[string]map[string]int64, len(r.byEndpoint[namespace]))
	for service, endpoints := range r.byEndpoint[namespace] {
		c := make(map[string]int64, len(endpoints))
		for k, v := range endpoints {
			c[k] = v
		}
		out[service] = c
	}
	return out
}

// MarkWindow forgets the time of any earlier first call and makes FirstRequest report the next
// call's, the start of a window that lasts d: the counts as they stand at its end are kept for
// WindowCounts, so that a call served just after it is not counted in it however late the
// benchmark reads (0 keeps none). A benchmark that polls the counters sees a call only at its next
// poll, which under load can be tens of milliseconds late; a window timed from that sighting would
// hold calls made after the window the benchmark means to count.
func (f *Fleet) MarkWindow(d time.Duration) {
	f.requests.mu.Lock()
	defer f.requests.mu.Unlock()
	f.requests.armed, f.requests.first = true, time.Time{}
	f.requests.window, f.requests.atEnd = d, nil
}

// WindowCounts is the calls as they stood when MarkWindow's window ended; false until it has.
func (f *Fleet) WindowCounts() (RequestCounts, bool) {
	f.requests.mu.Lock()
	defer f.requests.mu.Unlock()
	f.requests.closeWindow(time.Now())
	if f.requests.atEnd == nil {
		return RequestCounts{}, false
	}
	return *f.requests.atEnd, true
}

// FirstRequest is when the Fleet received its first call since MarkWindow; false while none
// has come.
func (f *Fleet) FirstRequest() (time.Time, bool) {
	f.requests.mu.Lock()
	defer f.requests.mu.Unlock()
	return f.requests.first, !f.requests.first.IsZero()
}
