package flinksim

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestJobLifecycleStatesAndTaskCounters(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.run(map[string]any{"parallelism": 2})
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
		t.Fatalf("job id %q is not 32 lowercase hex", id)
	}

	details := h.mustGet("/jobs/" + id)
	if details["state"] != "INITIALIZING" || len(details["vertices"].([]any)) != 0 {
		t.Fatalf("fresh job: state %v vertices %v, want INITIALIZING and none", details["state"], details["vertices"])
	}
	if got := at(h.mustGet("/jobs/overview"), "jobs", 0, "tasks", "total"); num(got) != 0 {
		t.Fatalf("initialising job tasks.total = %v, want 0", got)
	}

	h.step(100 * time.Millisecond)
	h.expectState(id, "CREATED")
	if got := at(h.mustGet("/jobs/"+id), "vertices", 0, "tasks", "CREATED"); num(got) != 2 {
		t.Fatalf("CREATED vertex tasks = %v", got)
	}

	h.step(200 * time.Millisecond)
	details = h.mustGet("/jobs/" + id)
	if details["state"] != "RUNNING" {
		t.Fatalf("state %v, want RUNNING", details["state"])
	}
	vertices := details["vertices"].([]any)
	if len(vertices) != 2 {
		t.Fatalf("want 2 vertices, got %d", len(vertices))
	}
	for i, v := range vertices {
		tasks := at(v, "tasks").(map[string]any)
		if len(tasks) != 10 || num(tasks["RUNNING"]) != 2 || num(at(v, "parallelism")) != 2 || at(v, "status") != "RUNNING" {
			t.Fatalf("vertex %d: %v", i, v)
		}
	}
	if !strings.HasPrefix(at(vertices, 0, "name").(string), "Source: ") || !strings.HasPrefix(at(vertices, 1, "name").(string), "Sink: ") {
		t.Fatalf("vertex names: %v, %v", at(vertices, 0, "name"), at(vertices, 1, "name"))
	}
	if num(at(details, "status-counts", "RUNNING")) != 2 || details["job-type"] != "STREAMING" {
		t.Fatalf("status-counts %v job-type %v", details["status-counts"], details["job-type"])
	}
	ts := details["timestamps"].(map[string]any)
	if len(ts) != 11 || num(ts["INITIALIZING"]) != epoch.UnixMilli() ||
		num(ts["RUNNING"]) != epoch.Add(300*time.Millisecond).UnixMilli() || num(ts["FAILED"]) != 0 {
		t.Fatalf("timestamps %v", ts)
	}
	if num(details["end-time"]) != -1 || num(details["duration"]) != 300 {
		t.Fatalf("end-time %v duration %v", details["end-time"], details["duration"])
	}

	overview := h.mustGet("/jobs/overview")
	tasks := at(overview, "jobs", 0, "tasks").(map[string]any)
	if num(tasks["total"]) != 4 || num(tasks["running"]) != 4 || len(tasks) != 11 {
		t.Fatalf("overview tasks %v", tasks)
	}
	cluster := h.mustGet("/overview")
	if num(cluster["slots-total"]) != 4 || num(cluster["slots-available"]) != 2 || num(cluster["jobs-running"]) != 1 {
		t.Fatalf("cluster overview %v", cluster)
	}
	if got := h.mustGet("/jobs/" + id + "/status"); got["status"] != "RUNNING" {
		t.Fatalf("status %v", got)
	}
}

func TestRunningJobWaitsForSlots(t *testing.T) {
	h := newHarness(t, Options{TaskManagers: -1}) // no TaskManagers yet
	h.jm.SetTaskManagers(0)
	id := h.run(map[string]any{"parallelism": 3})
	h.step(300 * time.Millisecond)

	// RUNNING with SCHEDULED tasks, as the DefaultScheduler reports without slots.
	h.expectState(id, "RUNNING")
	tasks := at(h.mustGet("/jobs/overview"), "jobs", 0, "tasks").(map[string]any)
	if num(tasks["scheduled"]) != 6 || num(tasks["running"]) != 0 {
		t.Fatalf("tasks without slots: %v", tasks)
	}
	if got := at(h.mustGet("/jobs/"+id), "vertices", 0, "status"); got != "SCHEDULED" {
		t.Fatalf("vertex status %v", got)
	}

	h.jm.SetTaskManagers(1) // 2 slots: still short of 3
	if num(at(h.mustGet("/jobs/overview"), "jobs", 0, "tasks", "running")) != 0 {
		t.Fatal("tasks run with too few slots")
	}
	h.jm.SetTaskManagers(2)
	tasks = at(h.mustGet("/jobs/overview"), "jobs", 0, "tasks").(map[string]any)
	if num(tasks["running"]) != 6 {
		t.Fatalf("tasks after scale-up: %v", tasks)
	}
	if got := h.mustGet("/overview"); num(got["slots-available"]) != 1 {
		t.Fatalf("slots-available %v, want 1", got["slots-available"])
	}
	tms := h.mustGet("/taskmanagers")["taskmanagers"].([]any)
	if len(tms) != 2 || num(at(tms, 0, "freeSlots")) != 0 || num(at(tms, 1, "freeSlots")) != 1 || num(at(tms, 1, "slotsNumber")) != 2 {
		t.Fatalf("taskmanagers %v", tms)
	}
}

func TestSlotRequestTimeout(t *testing.T) {
	tests := []struct {
		name      string
		config    map[string]string
		wantState string
	}{
		{"no checkpointing fails the job", map[string]string{"state.savepoints.dir": spDir}, "FAILED"},
		{"checkpointing restarts the job", map[string]string{"state.savepoints.dir": spDir, "execution.checkpointing.interval": "10s"}, "RUNNING"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{FlinkConfig: tc.config})
			h.jm.SetTaskManagers(0)
			id := h.runToRunning(nil)
			h.step(5 * time.Minute)
			h.step(2 * time.Second)
			h.expectState(id, tc.wantState)
			ex := h.mustGet("/jobs/" + id + "/exceptions")
			if !strings.Contains(at(ex, "exceptionHistory", "entries", 0, "stacktrace").(string), "NoResourceAvailableException") {
				t.Fatalf("exceptions %v", ex)
			}
		})
	}
}

func TestLosingTaskManagersFailsOverJobs(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: checkpointConfig()})
	id := h.runToRunning(map[string]any{"parallelism": 4})
	h.step(10*time.Second + 200*time.Millisecond) // checkpoint 1 completes
	h.jm.SetTaskManagers(1)
	h.expectState(id, "RESTARTING")
	h.step(time.Second)
	h.expectState(id, "RUNNING")
	if got := num(at(h.mustGet("/jobs/overview"), "jobs", 0, "tasks", "running")); got != 0 {
		t.Fatalf("tasks running with 2 of 4 slots: %d", got)
	}
	cp := h.mustGet("/jobs/" + id + "/checkpoints")
	if num(at(cp, "counts", "restored")) != 1 || at(cp, "latest", "restored", "is_savepoint") != false ||
		at(cp, "latest", "restored", "external_path") != ckpDir+"/"+id+"/chk-1" {
		t.Fatalf("restore after failover: %v", cp)
	}
	h.jm.SetTaskManagers(2)
	if got := num(at(h.mustGet("/jobs/overview"), "jobs", 0, "tasks", "running")); got != 8 {
		t.Fatalf("tasks running after scale-up: %d", got)
	}
}

func TestCancel(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(h *harness) string
		query      string
		wantStatus int
		wantText   string
		thenState  string
	}{
		{"running job cancels asynchronously", func(h *harness) string { return h.runToRunning(nil) }, "?mode=cancel", 202, "", "CANCELED"},
		{"mode defaults to cancel", func(h *harness) string { return h.runToRunning(nil) }, "", 202, "", "CANCELED"},
		{"mode is case-insensitive", func(h *harness) string { return h.runToRunning(nil) }, "?mode=CANCEL", 202, "", "CANCELED"},
		{"initialising job cancels once started", func(h *harness) string { return h.run(nil) }, "", 202, "", "CANCELED"},
		{"already canceled is accepted", func(h *harness) string {
			id := h.runToRunning(nil)
			h.call("PATCH", "/jobs/"+id, nil)
			h.step(time.Second)
			return id
		}, "", 202, "", "CANCELED"},
		{"finished job conflicts", func(h *harness) string {
			id := h.runToRunning(nil)
			h.post("/jobs/"+id+"/stop", map[string]any{})
			h.step(2 * time.Second)
			return id
		}, "", 409, "already reached another terminal state (FINISHED)", "FINISHED"},
		{"failed job conflicts", func(h *harness) string {
			id := h.runToRunning(nil)
			h.jm.FailJobNow(id)
			h.step(time.Second)
			return id
		}, "", 409, "already reached another terminal state (FAILED)", "FAILED"},
		{"unknown job is not found", func(*harness) string { return strings.Repeat("ab", 16) }, "", 404, "Job could not be found.", ""},
		{"stop mode was removed", func(h *harness) string { return h.runToRunning(nil) }, "?mode=stop", 308, "has been removed", "RUNNING"},
		{"bad mode", func(h *harness) string { return h.runToRunning(nil) }, "?mode=foo", 400,
			`Cannot resolve query parameter (mode) from value "foo".`, "RUNNING"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			id := tc.setup(h)
			status, body := h.call("PATCH", "/jobs/"+id+tc.query, nil)
			m, _ := body.(map[string]any)
			if status != tc.wantStatus || !strings.Contains(errorText(m), tc.wantText) {
				t.Fatalf("PATCH: %d %v, want %d containing %q", status, body, tc.wantStatus, tc.wantText)
			}
			if tc.wantStatus == 202 && len(m) != 0 {
				t.Fatalf("202 body %v, want {}", m)
			}
			if tc.thenState == "" {
				return
			}
			h.step(time.Second)
			h.expectState(id, tc.thenState)
		})
	}
}

func TestCancelPassesThroughCancelling(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	h.call("PATCH", "/jobs/"+id, nil)
	h.expectState(id, "CANCELLING")
	if got := at(h.mustGet("/jobs/"+id), "vertices", 0, "tasks", "CANCELING"); num(got) != 1 {
		t.Fatalf("CANCELING subtasks %v", got)
	}
	if status, _ := h.call("PATCH", "/jobs/"+id, nil); status != 202 {
		t.Fatalf("repeat PATCH while CANCELLING: %d", status)
	}
	h.step(300 * time.Millisecond)
	details := h.mustGet("/jobs/" + id)
	if details["state"] != "CANCELED" || num(details["end-time"]) != epoch.Add(600*time.Millisecond).UnixMilli() {
		t.Fatalf("after cancel: %v end %v", details["state"], details["end-time"])
	}
	h.step(time.Hour - time.Second)
	if got := h.mustGet("/overview"); num(got["jobs-cancelled"]) != 1 || num(got["jobs-running"]) != 0 || num(got["slots-available"]) != 4 {
		t.Fatalf("overview %v", got)
	}
	if num(h.mustGet("/jobs/" + id)["duration"]) != 600 {
		t.Fatal("duration of a terminal job must be frozen")
	}
	h.step(2 * time.Second) // jobstore.expiration-time passes
	if status, _ := h.get("/jobs/" + id); status != 404 {
		t.Fatalf("expired job still listed: %d", status)
	}
}

func TestJarRun(t *testing.T) {
	fixed := strings.Repeat("0a", 16)
	tests := []struct {
		name       string
		opts       Options
		jar        string
		body       map[string]any
		query      string
		wantStatus int
		wantError  string // substring of errors[index]
		errorIndex int
		wantPar    int
	}{
		{"default parallelism is 1", Options{}, jar, map[string]any{}, "", 200, "", 0, 1},
		{"parallelism.default of the cluster", Options{FlinkConfig: map[string]string{"parallelism.default": "3"}}, jar, nil, "", 200, "", 0, 3},
		{"parallelism.default of the request", Options{}, jar, map[string]any{"flinkConfiguration": map[string]string{"parallelism.default": "2"}}, "", 200, "", 0, 2},
		{"request parallelism wins", Options{}, jar, map[string]any{"parallelism": 4, "programArgs": "--x 1", "unknownField": true}, "", 200, "", 0, 4},
		{"query parallelism", Options{}, jar, nil, "?parallelism=2", 200, "", 0, 2},
		{"fixed job id", Options{}, jar, map[string]any{"jobId": fixed, "claimMode": "NO_CLAIM"}, "", 200, "", 0, 1},
		{"jar missing from image", Options{Jars: []string{"other.jar"}}, jar, nil, "", 500,
			"RestHandlerException: Jar file /tmp/flink-web-", 1, 0},
		{"malformed job id", Options{}, jar, map[string]any{"jobId": "xyz"}, "", 400, "Request did not match expected format JarRunRequestBody.", 0, 0},
		{"bad claim mode", Options{}, jar, map[string]any{"claimMode": "MAYBE"}, "", 400, "Request did not match expected format JarRunRequestBody.", 0, 0},
		{"confusing arguments", Options{}, jar, map[string]any{"programArgs": "a", "programArgsList": []string{"b"}}, "", 400, "Confusing request", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts)
			status, m := h.post("/jars/"+tc.jar+"/run"+tc.query, tc.body)
			if status != tc.wantStatus {
				t.Fatalf("status %d body %v, want %d", status, m, tc.wantStatus)
			}
			if tc.wantStatus != 200 {
				errs := m["errors"].([]any)
				if len(errs) <= tc.errorIndex || !strings.Contains(errs[tc.errorIndex].(string), tc.wantError) {
					t.Fatalf("errors %v, want [%d] containing %q", errs, tc.errorIndex, tc.wantError)
				}
				if tc.wantStatus == 500 && errs[0] != "Internal server error." {
					t.Fatalf("errors[0] = %v", errs[0])
				}
				return
			}
			id := m["jobid"].(string)
			if jobID, ok := tc.body["jobId"].(string); ok && id != jobID {
				t.Fatalf("jobid %s, want %s", id, jobID)
			}
			h.step(300 * time.Millisecond)
			if got := num(at(h.mustGet("/jobs/"+id), "vertices", 0, "parallelism")); got != int64(tc.wantPar) {
				t.Fatalf("parallelism %d, want %d", got, tc.wantPar)
			}
			if got := num(at(h.mustGet("/jobs/"+id+"/config"), "execution-config", "job-parallelism")); got != int64(tc.wantPar) {
				t.Fatalf("job-parallelism %d, want %d", got, tc.wantPar)
			}
		})
	}
}

func TestDuplicateJobID(t *testing.T) {
	fixed := strings.Repeat("0b", 16)
	tests := []struct {
		name  string
		setup func(h *harness)
	}{
		{"while initializing", func(h *harness) {}},
		{"while running", func(h *harness) { h.step(time.Second) }},
		{"after it was canceled", func(h *harness) {
			h.call("PATCH", "/jobs/"+fixed, nil)
			h.step(time.Second)
		}},
		{"after it left the job store", func(h *harness) {
			h.call("PATCH", "/jobs/"+fixed, nil)
			h.step(2 * time.Hour)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			h.run(map[string]any{"jobId": fixed})
			tc.setup(h)
			status, m := h.post("/jars/"+jar+"/run", map[string]any{"jobId": fixed})
			errs, _ := m["errors"].([]any)
			if status != 400 || len(errs) != 1 ||
				!strings.HasPrefix(errs[0].(string), "org.apache.flink.runtime.rest.handler.RestHandlerException: Could not execute application.") ||
				!strings.Contains(errs[0].(string), "DuplicateJobSubmissionException: Job has already been submitted.") {
				t.Fatalf("duplicate: %d %v", status, m)
			}
		})
	}
	t.Run("a crash forgets the job result store", func(t *testing.T) {
		h := newHarness(t, Options{})
		h.run(map[string]any{"jobId": fixed})
		h.jm.Crash()
		h.run(map[string]any{"jobId": fixed})
	})
}

func TestJobGETsOnUnknownJob(t *testing.T) {
	h := newHarness(t, Options{})
	id := strings.Repeat("cd", 16)
	for _, path := range []string{"", "/config", "/exceptions", "/checkpoints", "/status", "/execution-result"} {
		status, m := h.get("/jobs/" + id + path)
		if status != http.StatusNotFound || !strings.Contains(errorText(m), "NotFoundException: Job "+id+" not found") {
			t.Errorf("GET /jobs/:id%s: %d %v", path, status, m)
		}
	}
}

func TestFailJobNowRecordsException(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	if !h.jm.FailJobNow(id) {
		t.Fatal("FailJobNow: job not found")
	}
	h.expectState(id, "FAILING")
	h.step(100 * time.Millisecond)
	h.expectState(id, "FAILED")
	ex := h.mustGet("/jobs/" + id + "/exceptions")
	if !strings.Contains(ex["root-exception"].(string), "Recovery is suppressed") ||
		at(ex, "exceptionHistory", "entries", 0, "exceptionName") != "java.lang.RuntimeException" ||
		at(ex, "exceptionHistory", "entries", 0, "taskName") == nil {
		t.Fatalf("exceptions %v", ex)
	}
	res := h.mustGet("/jobs/" + id + "/execution-result")
	if at(res, "status", "id") != "COMPLETED" || at(res, "job-execution-result", "application-status") != "FAILED" ||
		at(res, "job-execution-result", "failure-cause", "class") != "org.apache.flink.runtime.JobException" {
		t.Fatalf("execution-result %v", res)
	}
	if got := h.mustGet("/overview"); num(got["jobs-failed"]) != 1 {
		t.Fatalf("overview %v", got)
	}
}

func TestFailTasksNowRestartsFromCheckpoint(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: map[string]string{
		"state.checkpoints.dir": ckpDir, "execution.checkpointing.interval": "10s",
	}})
	id := h.runToRunning(nil)
	h.step(10*time.Second + 200*time.Millisecond)
	if !h.jm.FailTasksNow(id) {
		t.Fatal("FailTasksNow: job not running")
	}
	h.expectState(id, "RESTARTING")
	h.step(time.Second)
	h.expectState(id, "RUNNING")
	status, out := h.call("GET", "/jobs/"+id+"/metrics?get=numRestarts,unknownMetric", nil)
	if status != 200 || len(out.([]any)) != 1 || at(out, 0, "value") != "1" {
		t.Fatalf("metrics %v", out)
	}
	if got := num(at(h.mustGet("/jobs/"+id+"/checkpoints"), "counts", "restored")); got != 1 {
		t.Fatalf("counts.restored %d", got)
	}
}

// Flink 2.x has no programArgs and, parsing leniently, ignores it: the job runs without its
// arguments. programArgsList reaches main() as sent, and Flink 1.x splits programArgs honouring
// quotes.
func TestFlink2IgnoresProgramArgs(t *testing.T) {
	h := newHarness(t, Options{FlinkVersion: "2.0"})
	status, _ := h.call("POST", "/jars/"+jar+"/run?program-args=--query", map[string]any{"programArgs": "--input a"})
	if status != 200 {
		t.Fatalf("Flink 2.0 answered %d to programArgs, want 200", status)
	}
	status, _ = h.call("POST", "/jars/"+jar+"/run", map[string]any{"programArgsList": []string{"--input", "a b"}})
	if status != 200 {
		t.Fatalf("Flink 2.0 answered %d to programArgsList, want 200", status)
	}
	jobs := h.jm.Jobs()
	if len(jobs) != 2 || len(jobs[0].Args) != 0 || len(jobs[1].Args) != 2 || jobs[1].Args[1] != "a b" {
		t.Fatalf("jobs %+v: want the first without arguments, the second with --input \"a b\"", jobs)
	}
	if got := TokenizeArguments(`--name "two words" --x 'y'`); len(got) != 4 || got[1] != "two words" || got[3] != "y" {
		t.Fatalf("tokenized %q", got)
	}
}
