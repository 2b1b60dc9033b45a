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
	// The operator reports the cause from either the root exception or the history.
	ex := h.mustGet("/jobs/" + after + "/exceptions")
	if n := len(at(ex, "exceptionHistory", "entries").([]any)); n != 1 {
		t.Fatalf("exception history has %d entries", n)
	}
	injected := "Simulated failure injected by flinksim into job " + after
	if root, _ := ex["root-exception"].(string); !strings.Contains(root, injected) || num(ex["timestamp"]) == 0 {
		t.Fatalf("root-exception %v", ex["root-exception"])
	}
	if trace, _ := at(ex, "exceptionHistory", "entries", 0, "stacktrace").(string); !strings.Contains(trace, injected) {
		t.Fatalf("history %v", ex["exceptionHistory"])
	}
	res := h.mustGet("/jobs/" + after + "/execution-result")
	if at(res, "job-execution-result", "application-status") != "FAILED" || at(res, "job-execution-result", "failure-cause") == nil {
		t.Fatalf("execution-result %v", res)
	}
}

func TestRestartJobsEveryCyclesThroughRestarts(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: checkpointConfig()})
	before := h.runToRunning(nil)
	h.jm.SetFaults(Faults{RestartJobsEvery: 15 * time.Second})
	id := h.runToRunning(nil) // tasks run from 0.6s
	h.step(10*time.Second + 200*time.Millisecond)
	h.step(4800*time.Millisecond - time.Millisecond)
	h.expectState(id, "RUNNING")
	h.step(time.Millisecond) // 15s after the tasks started
	h.expectState(id, "RESTARTING")
	h.step(time.Second)
	h.expectState(id, "RUNNING")
	cp := h.mustGet("/jobs/" + id + "/checkpoints")
	if num(at(cp, "counts", "restored")) != 1 || at(cp, "latest", "restored", "external_path") != ckpDir+"/"+id+"/chk-1" {
		t.Fatalf("first failover: %v", cp["latest"])
	}
	h.step(11 * time.Second) // chk-2, 11s after the restart
	h.step(4 * time.Second)
	h.expectState(id, "RESTARTING")
	h.step(time.Second)
	cp = h.mustGet("/jobs/" + id + "/checkpoints")
	if num(at(cp, "counts", "restored")) != 2 || at(cp, "latest", "restored", "external_path") != ckpDir+"/"+id+"/chk-2" {
		t.Fatalf("second failover: %v", cp["latest"])
	}
	if info := h.jobInfo(id); info.Restarts != 2 || info.State != "RUNNING" {
		t.Fatalf("job %+v", info)
	}
	if n := len(at(h.mustGet("/jobs/"+id+"/exceptions"), "exceptionHistory", "entries").([]any)); n != 2 {
		t.Fatalf("exception history has %d entries, want one per failover", n)
	}
	h.step(time.Hour)
	if info := h.jobInfo(before); info.Restarts != 0 || info.State != "RUNNING" {
		t.Fatalf("a job submitted before the fault restarted: %+v", info)
	}
	if info := h.jobInfo(id); info.Restarts < 200 || isGloballyTerminal(info.State) {
		t.Fatalf("after an hour: %+v", info)
	}
}

func TestRestartJobsEveryHonoursTheRestartStrategy(t *testing.T) {
	tests := []struct {
		name     string
		config   map[string]string
		failures int // task failures the job survives
	}{
		{"no checkpointing and no strategy", map[string]string{"state.savepoints.dir": spDir}, 0},
		{"fixed-delay with two attempts", checkpointConfig("restart-strategy.type", "fixed-delay",
			"restart-strategy.fixed-delay.attempts", "2", "restart-strategy.fixed-delay.delay", "2s"), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{FlinkConfig: tc.config})
			h.jm.SetFaults(Faults{RestartJobsEvery: time.Minute})
			id := h.runToRunning(nil)
			for i := 0; i < tc.failures; i++ {
				h.step(time.Minute)
				h.expectState(id, "RESTARTING")
				h.step(2 * time.Second)
				h.expectState(id, "RUNNING")
			}
			h.step(time.Minute)
			h.expectState(id, "FAILING")
			h.step(100 * time.Millisecond)
			h.expectState(id, "FAILED")
			if !strings.Contains(h.mustGet("/jobs/" + id + "/exceptions")["root-exception"].(string), "Recovery is suppressed") {
				t.Fatal("root-exception does not say the restart strategy gave up")
			}
		})
	}
}

func TestSubmitRegistersAfterLosesTheAnswer(t *testing.T) {
	h := newHarness(t, Options{})
	h.jm.SetFaults(Faults{SubmitRegistersAfter: 5 * time.Second})
	fixed := strings.Repeat("3d", 16)
	req, _ := http.NewRequest("POST", h.srv.URL+"/jars/"+jar+"/run", strings.NewReader(`{"jobId":"`+fixed+`"}`))
	if resp, err := h.srv.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("expected a transport error, got %d", resp.StatusCode)
	}
	h.step(5*time.Second - time.Millisecond)
	if status, m := h.get("/jobs/" + fixed); status != http.StatusNotFound || !strings.Contains(errorText(m), "Job "+fixed+" not found") {
		t.Fatalf("GET before registration: %d %v", status, m)
	}
	if jobs := at(h.mustGet("/jobs"), "jobs").([]any); len(jobs) != 0 || len(h.jm.Jobs()) != 0 {
		t.Fatalf("jobs before registration: %v", jobs)
	}
	// The Dispatcher already has the job: a retry with its id is a duplicate.
	h.jm.SetFaults(Faults{})
	status, m := h.post("/jars/"+jar+"/run", map[string]any{"jobId": fixed})
	if status != http.StatusBadRequest || !strings.Contains(errorText(m), "DuplicateJobSubmissionException: Job has already been submitted.") {
		t.Fatalf("retry before registration: %d %v", status, m)
	}
	h.step(time.Millisecond)
	h.expectState(fixed, "INITIALIZING")
	if jobs := h.jm.Jobs(); len(jobs) != 1 || !jobs[0].SubmittedAt.Equal(epoch.Add(5*time.Second)) {
		t.Fatalf("jobs after registration %+v", jobs)
	}
	h.step(300 * time.Millisecond)
	h.expectState(fixed, "RUNNING")
}

func TestHangAnswersNothingUntilTheClientGivesUp(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	client := *h.srv.Client()
	client.Timeout = 100 * time.Millisecond
	call := func(method, path string) error {
		req, _ := http.NewRequest(method, h.srv.URL+path, strings.NewReader(`{}`))
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	h.jm.SetFaults(Faults{Hang: map[string]bool{EndpointSavepointTrigger: true}})
	start := time.Now()
	if err := call("POST", "/jobs/"+id+"/savepoints"); err == nil {
		t.Fatal("a hung endpoint answered")
	}
	if elapsed := time.Since(start); elapsed < 100*time.Millisecond {
		t.Fatalf("gave up after %v", elapsed)
	}
	if h.jm.SavepointTriggers() != 0 {
		t.Fatal("a hung request was processed")
	}
	if err := call("GET", "/jobs/"+id); err != nil {
		t.Fatalf("another endpoint: %v", err)
	}

	h.jm.SetFaults(Faults{Hang: map[string]bool{AnyEndpoint: true, EndpointJobs: false}})
	if err := call("GET", "/overview"); err == nil {
		t.Fatal("AnyEndpoint did not hang /overview")
	}
	if err := call("GET", "/jobs"); err != nil {
		t.Fatalf("an endpoint excluded from AnyEndpoint: %v", err)
	}
}

func TestFailFirstFailsTheFirstRequestsThenServes(t *testing.T) {
	h := newHarness(t, Options{})
	h.jm.SetFaults(Faults{FailFirst: map[string]int{EndpointOverview: 2}})
	for i := 0; i < 2; i++ {
		if status, m := h.get("/overview"); status != 500 || at(m, "errors", 0) != "Internal server error." {
			t.Fatalf("request %d: %d %v, want the injected 500", i+1, status, m)
		}
	}
	if status, _ := h.get("/jobs"); status != 200 {
		t.Fatalf("fault leaked to another endpoint: %d", status)
	}
	for i := 0; i < 3; i++ {
		if status, _ := h.get("/overview"); status != 200 {
			t.Fatalf("request %d after the first two: %d, want 200", i+3, status)
		}
	}
	// SetFaults starts the count anew.
	h.jm.SetFaults(Faults{FailFirst: map[string]int{EndpointOverview: 1}})
	if status, _ := h.get("/overview"); status != 500 {
		t.Fatalf("after SetFaults: %d, want 500", status)
	}
	if status, _ := h.get("/overview"); status != 200 {
		t.Fatalf("second request after SetFaults: %d, want 200", status)
	}
}
