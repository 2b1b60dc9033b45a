package sessionjob

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// Jar fetches and uploads run off the workers. A jar host can be slow for the whole of jars.timeout
// (two minutes), and a hung JobManager holds an upload for the client's submit timeout; a handful of
// them inside passes would hold every worker and stall every namespace. A pass starts the transfer
// and goes on waiting in its phase; the transfer wakes the object when it ends, and the pass that
// finds it done records the uploaded jar's id.

// jarFetches are the fetches in flight or done and not yet taken, by object and jar.
type jarFetches struct {
	mu    sync.Mutex
	byKey map[string]*jarFetch
	// inFlight counts the transfers running, for settle.
	inFlight sync.WaitGroup
}

// jarFetch is one transfer: in flight until done, then its jar (uploaded, or local) or its error.
type jarFetch struct {
	done    bool
	jar     *uploadedJar
	err     error
	endedAt time.Time
}

// uploadedJar is a transfer's result: the jar id the JobManager gave the upload, or the name of a
// local:// jar the cluster already has.
type uploadedJar struct {
	ID    string
	Local bool
	Size  int64
}

// unclaimedFetch is how long a fetched jar waits for the pass that uploads it before its file is
// removed: the object was deleted, or its spec changed, meanwhile.
const unclaimedFetch = 10 * time.Minute

// fetch is the fetch of key: its state when one was started (a copy), or nil after it started one
// now. wake is called when a fetch started now ends. Times are the clock's, the operator's
// injected one.
func (f *jarFetches) fetch(key string, clk clock.PassiveClock, start func() (*uploadedJar, error), wake func()) *jarFetch {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byKey == nil {
		f.byKey = map[string]*jarFetch{}
	}
	f.sweep(clk.Now())
	if s, ok := f.byKey[key]; ok {
		c := *s
		return &c
	}
	s := &jarFetch{}
	f.byKey[key] = s
	f.inFlight.Add(1)
	go func() {
		defer f.inFlight.Done()
		jar, err := start()
		f.mu.Lock()
		s.done, s.jar, s.err, s.endedAt = true, jar, err, clk.Now()
		f.mu.Unlock()
		if wake != nil {
			wake()
		}
	}()
	return nil
}

// settle waits until no transfer runs. Tests that replay a run step by step call it where a
// transfer must have ended, so that its end does not fall at a point the scheduler picks.
func (f *jarFetches) settle() { f.inFlight.Wait() }

// take removes a done fetch, handing its jar (whose file the caller removes) to the caller.
func (f *jarFetches) take(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.byKey, key)
}

// sweep forgets transfers done long ago that no pass took (the object went away; an upload it
// made stays in the cluster's upload directory as an unused jar, as after a crash).
func (f *jarFetches) sweep(now time.Time) {
	for key, s := range f.byKey {
		if s.done && now.Sub(s.endedAt) > unclaimedFetch {
			delete(f.byKey, key)
		}
	}
}

// jarTransfer is the fetch of a session job's jar and its upload to the JobManager at url, off the
// worker: its own context, bounded by the fetcher's and the client's timeouts, not the pass's. The
// fetched file goes once uploaded. The upload asks the lease fence first, as every change to Flink,
// and route, whether the JobManager's Service is still the operator's: a fetch may take minutes.
func jarTransfer(e *kindpass.Environment, uri, sha256, url string, route func() error) func() (*uploadedJar, error) {
	return func() (*uploadedJar, error) {
		jar, err := e.Jars.Fetch(context.Background(), uri, sha256)
		if err != nil {
			return nil, err
		}
		if jar.Local {
			return &uploadedJar{ID: jar.Name, Local: true}, nil
		}
		defer jar.Remove()
		if e.Acting != nil {
			if err := e.Acting(); err != nil {
				return nil, jobs.Retryable("Fence", err)
			}
		}
		if err := route(); err != nil {
			return nil, err
		}
		body, err := jar.Open()
		if err != nil {
			return nil, jobs.Retryable("ReadJar", err)
		}
		defer body.Close()
		id, err := e.Flink.UploadJar(context.Background(), url, jar.Name, body)
		if err != nil {
			return nil, err
		}
		return &uploadedJar{ID: id, Size: jar.Size}, nil
	}
}

// RouteCheck is kindpass.Environment.JobManagerRoute for a transfer off the worker: the owner's cluster with this hash as
// the caches show it at the moment of the call.
func RouteCheck(e *kindpass.Environment, owner flink.ClusterOwner, hash string) func() error {
	return func() error {
		clusters, _, err := e.Observer.Owned(owner)
		if err != nil {
			return jobs.Retryable("JobManagerRoute", err)
		}
		return e.JobManagerRoute(owner, hash, clusters[hash], e.Clock.Now())
	}
}
