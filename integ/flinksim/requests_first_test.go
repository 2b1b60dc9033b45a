package flinksim

import (
	"testing"
	"time"
)

// The takeover's window is timed from the first call the simulator served after the mark, which a
// benchmark polling the counters sees only later.
func TestTheFirstRequestAfterTheMarkIsTimedWhenServed(t *testing.T) {
	f := &Fleet{}
	f.requests.add("ns", "app-1-abc", "GET", "/jobs/overview")
	if _, ok := f.FirstRequest(); ok {
		t.Fatal("a call before any mark was taken as the first")
	}
	f.MarkWindow(0)
	if _, ok := f.FirstRequest(); ok {
		t.Fatal("the mark alone counted as a call")
	}
	before := time.Now()
	f.requests.add("ns", "app-1-abc", "GET", "/jobs/overview")
	after := time.Now()
	time.Sleep(5 * time.Millisecond)
	f.requests.add("ns", "app-2-abc", "GET", "/jobs/overview")
	first, ok := f.FirstRequest()
	if !ok || first.Before(before) || first.After(after) {
		t.Errorf("first call at %v (%v), want between %v and %v", first, ok, before, after)
	}
	f.MarkWindow(0)
	if _, ok := f.FirstRequest(); ok {
		t.Error("a new mark kept the earlier first call")
	}
}

// The takeover's window ends a statusPollInterval after its first call; a call served after that
// must not count in it, however late the benchmark reads the counters (it polls them every 20 ms,
// and an application observed at the window's start is polled again just after its end).
func TestTheWindowKeepsTheCountsAsTheyStoodAtItsEnd(t *testing.T) {
	f := &Fleet{}
	f.requests.add("ns", "app-1-abc", "GET", "/jobs/overview")
	const window = 30 * time.Millisecond
	f.MarkWindow(window)
	if _, ok := f.WindowCounts(); ok {
		t.Fatal("a window with no call yet has ended")
	}
	f.requests.add("ns", "app-1-abc", "GET", "/jobs/:id")
	f.requests.add("ns", "app-2-abc", "GET", "/jobs/:id")
	if _, ok := f.WindowCounts(); ok {
		t.Fatal("the window ended at once")
	}
	time.Sleep(window + 10*time.Millisecond)
	// Served after the window's end, before the benchmark reads.
	f.requests.add("ns", "app-1-abc", "GET", "/jobs/:id/checkpoints")
	f.requests.add("ns", "app-3-abc", "GET", "/jobs/:id")
	counts, ok := f.WindowCounts()
	if !ok {
		t.Fatal("the window has not ended")
	}
	want := map[string]int64{"ns/app-1-abc": 2, "ns/app-2-abc": 1}
	if got := counts.Requests(); len(got) != len(want) || got["ns/app-1-abc"] != 2 || got["ns/app-2-abc"] != 1 {
		t.Errorf("calls in the window %v, want %v", got, want)
	}
	byService := counts.RequestsByService("ns")
	if n := byService["app-1-abc"]["GET /jobs/checkpoints"] + byService["app-1-abc"]["GET /jobs/:id/checkpoints"]; n != 0 {
		t.Errorf("a checkpoint read after the window counted in it: %v", byService)
	}
	if got := f.Requests(); got["ns/app-1-abc"] != 3 || got["ns/app-3-abc"] != 1 {
		t.Errorf("the live counts %v lost calls after the window", got)
	}
	if again, _ := f.WindowCounts(); again.Requests()["ns/app-1-abc"] != 2 {
		t.Error("a later read moved the window's counts")
	}
}
