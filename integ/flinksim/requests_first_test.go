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
	f.MarkFirstRequest()
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
	f.MarkFirstRequest()
	if _, ok := f.FirstRequest(); ok {
		t.Error("a new mark kept the earlier first call")
	}
}
