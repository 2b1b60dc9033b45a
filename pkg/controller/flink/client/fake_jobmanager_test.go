package client

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// reply is one canned JobManager answer.
type reply struct {
	status int
	body   string
	delay  time.Duration // sleep before answering, to provoke client timeouts
}

// seen is a request as the fake JobManager received it.
type seen struct {
	method, path, query, contentType, userAgent, body string
}

// fakeJobManager answers "METHOD /path" routes (below an optional prefix) with canned replies,
// in order when a route has several (the last one repeats), and records what it received.
type fakeJobManager struct {
	t      *testing.T
	prefix string

	mu       sync.Mutex
	routes   map[string][]reply
	requests []seen
}

func newFakeJobManager(t *testing.T, prefix string, routes map[string][]reply) (*fakeJobManager, *httptest.Server) {
	t.Helper()
	f := &fakeJobManager{t: t, prefix: prefix, routes: routes}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeJobManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, seen{
		method: r.Method, path: r.URL.EscapedPath(), query: r.URL.RawQuery,
		contentType: r.Header.Get("Content-Type"), userAgent: r.Header.Get("User-Agent"),
		body: string(body),
	})
	path, ok := strings.CutPrefix(r.URL.EscapedPath(), f.prefix)
	key := r.Method + " " + path
	replies := f.routes[key]
	var rep reply
	switch {
	case !ok || len(replies) == 0:
		// What Flink answers for a route it does not have.
		rep = reply{status: http.StatusNotFound, body: `{"errors":["Not found: ` + r.URL.Path + `"]}`}
	case len(replies) == 1:
		rep = replies[0]
	default:
		rep = replies[0]
		f.routes[key] = replies[1:]
	}
	f.mu.Unlock()

	if rep.delay > 0 {
		select {
		case <-time.After(rep.delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
}

func (f *fakeJobManager) received() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.requests...)
}

func (f *fakeJobManager) last() seen {
	f.t.Helper()
	reqs := f.received()
	if len(reqs) == 0 {
		f.t.Fatal("fake JobManager received no request")
	}
	return reqs[len(reqs)-1]
}

// newTestClient gives each test its own metric registry, so clients never share series.
func newTestClient(cfg Config) *Client {
	return New(cfg, prometheus.NewRegistry())
}

const (
	testJobID     = "3f2a1b4c5d6e7f8091a2b3c4d5e6f708"
	testTriggerID = "8a68e674325b4c1d9e0f1a2b3c4d5e6f"
	testJarID     = "6b1e2c3d-4f5a-6b7c-8d9e-0f1a2b3c4d5e_wordcount.jar"
)
