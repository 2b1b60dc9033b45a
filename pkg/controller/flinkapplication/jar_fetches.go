package flinkapplication

import (
	"context"
	"sync"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/jars"
)

// Jar fetches run off the workers. A jar host can be slow for the whole of jars.timeout (two
// minutes); a handful of them fetched inside passes would hold every worker and stall every
// namespace. A pass starts the fetch and goes on waiting in its phase; the fetch wakes the object
// when it ends, and the pass that finds it done uploads the jar from its file.

// jarFetches are the fetches in flight or done and not yet taken, by object and jar.
type jarFetches struct {
	mu    sync.Mutex
	byKey map[string]*jarFetch
}

// jarFetch is one fetch: in flight until done, then its jar or its error.
type jarFetch struct {
	done    bool
	jar     *jars.Jar
	err     error
	endedAt time.Time
}

// unclaimedFetch is how long a fetched jar waits for the pass that uploads it before its file is
// removed: the object was deleted, or its spec changed, meanwhile.
const unclaimedFetch = 10 * time.Minute

// fetch is the fetch of key: its state when one was started (a copy), or nil after it started one
// now. wake is called when a fetch started now ends.
func (f *jarFetches) fetch(key string, now time.Time, start func() (*jars.Jar, error), wake func()) *jarFetch {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byKey == nil {
		f.byKey = map[string]*jarFetch{}
	}
	f.sweep(now)
	if s, ok := f.byKey[key]; ok {
		c := *s
		return &c
	}
	s := &jarFetch{}
	f.byKey[key] = s
	go func() {
		jar, err := start()
		f.mu.Lock()
		s.done, s.jar, s.err, s.endedAt = true, jar, err, time.Now()
		f.mu.Unlock()
		if wake != nil {
			wake()
		}
	}()
	return nil
}

// take removes a done fetch, handing its jar (whose file the caller removes) to the caller.
func (f *jarFetches) take(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.byKey, key)
}

// sweep removes fetches done long ago that no pass took, with their files.
func (f *jarFetches) sweep(now time.Time) {
	for key, s := range f.byKey {
		if s.done && now.Sub(s.endedAt) > unclaimedFetch {
			if s.jar != nil {
				s.jar.Remove()
			}
			delete(f.byKey, key)
		}
	}
}

// startJarFetch is the fetch of a session job's jar, off the worker: its own context, bounded by
// the fetcher's timeout, not the pass's.
func (e *Environment) startJarFetch(uri, sha256 string) func() (*jars.Jar, error) {
	return func() (*jars.Jar, error) { return e.Jars.Fetch(context.Background(), uri, sha256) }
}
