package flinksim

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestErrorRateIsReproducibleAndPerEndpoint(t *testing.T) {
	statuses := func(seed int64) []int {
		h := newHarness(t, Options{Seed: seed})
		h.jm.SetFaults(Faults{ErrorRate: map[string]float64{EndpointOverview: 0.5}})
		var out []int
		for i := 0; i < 40; i++ {
			status, m := h.get("/overview")
			out = append(out, status)
			switch status {
			case 200:
			case 503:
				if errorText(m) != "Service temporarily unavailable due to an ongoing leader election. Please refresh." {
					t.Fatalf("503 body %v", m)
				}
			case 500:
				if at(m, "errors", 0) != "Internal server error." {
					t.Fatalf("500 body %v", m)
				}
			default:
				t.Fatalf("status %d", status)
			}
		}
		if status, _ := h.get("/jobs"); status != 200 {
			t.Fatalf("fault leaked to another endpoint: %d", status)
		}
		return out
	}
	a, b := statuses(7), statuses(7)
	seen := map[int]bool{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different faults: %v vs %v", a, b)
		}
		seen[a[i]] = true
	}
	if !seen[200] || !seen[500] || !seen[503] {
		t.Fatalf("expected a mix of 200/500/503, got %v", a)
	}
}

func TestErrorRateOnPostIsInternalError(t *testing.T) {
	h := newHarness(t, Options{})
	h.jm.SetFaults(Faults{ErrorRate: map[string]float64{AnyEndpoint: 1}})
	status, m := h.post("/jars/"+jar+"/run", nil)
	if status != 500 || !strings.Contains(errorText(m), "Simulated fault") {
		t.Fatalf("%d %v", status, m)
	}
	h.jm.SetFaults(Faults{})
	if len(h.jm.Jobs()) != 0 {
		t.Fatal("a request failed by a fault must not be processed")
	}
}

func TestDropRateProcessesThenLosesTheResponse(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	h.jm.SetFaults(Faults{DropRate: map[string]float64{EndpointSavepointTrigger: 1}})
	req, _ := http.NewRequest("POST", h.srv.URL+"/jobs/"+id+"/savepoints", strings.NewReader(`{}`))
	if resp, err := h.srv.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("expected a transport error, got %d", resp.StatusCode)
	}
	if h.jm.SavepointTriggers() != 1 {
		t.Fatalf("the dropped trigger was processed %d times, want 1", h.jm.SavepointTriggers())
	}
}

func TestLatency(t *testing.T) {
	h := newHarness(t, Options{})
	h.jm.SetFaults(Faults{Latency: map[string]time.Duration{EndpointJobs: 50 * time.Millisecond}})
	start := time.Now()
	h.mustGet("/jobs")
	if elapsed := time.Since(start); elapsed < 50*time.Millisecond {
		t.Fatalf("answered after %v", elapsed)
	}
}

func TestFailJobsAfter(t *testing.T) {
	h := newHarness(t, Options{})
	before := h.runToRunning(nil)
	h.jm.SetFaults(Faults{FailJobsAfter: time.Minute})
	after := h.runToRunning(nil)
	h.step(time.Minute - time.Millisecond)
	h.expectState(after, "RUNNING")
	h.step(time.Millisecond)
	h.expectState(after, "FAILING")
	h.step(100 * time.Millisecond)
	h.expectState(after, "FAILED")
	h.expectState(before, "RUNNING")
	if n := len(at(h.mustGet("/jobs/"+after+"/exceptions"), "exceptionHistory", "entries").([]any)); n != 1 {
		t.Fatalf("exception history has %d entries", n)
	}
}
