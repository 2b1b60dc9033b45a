package flinksim

import (
	"strings"
	"testing"
	"time"
)

func adaptiveFlinkConfig(extra ...string) map[string]string {
	return checkpointConfig(append([]string{"jobmanager.scheduler", "adaptive"}, extra...)...)
}

// requirements builds a PUT body giving every vertex of the job the same bounds.
func (h *harness) requirements(id string, lower, upper int) map[string]any {
	h.t.Helper()
	body := map[string]any{}
	for _, v := range h.jobInfo(id).VertexIDs {
		body[v] = map[string]any{"parallelism": map[string]any{"lowerBound": lower, "upperBound": upper}}
	}
	return body
}

func (h *harness) jobInfo(id string) JobInfo {
	h.t.Helper()
	for _, j := range h.jm.Jobs() {
		if j.ID == id {
			return j
		}
	}
	h.t.Fatalf("job %s not listed", id)
	return JobInfo{}
}

// expectParallelism checks every place a client reads the parallelism from.
func (h *harness) expectParallelism(id string, want int) {
	h.t.Helper()
	details := h.mustGet("/jobs/" + id)
	for i, v := range details["vertices"].([]any) {
		if num(at(v, "parallelism")) != int64(want) || num(at(v, "tasks", "RUNNING")) != int64(want) {
			h.t.Fatalf("vertex %d: parallelism %v tasks %v, want %d running", i, at(v, "parallelism"), at(v, "tasks"), want)
		}
	}
	if got := h.jobInfo(id).CurrentParallelism(); got != want {
		h.t.Fatalf("CurrentParallelism %d, want %d", got, want)
	}
}

func TestAdaptiveSchedulerRescalesInPlace(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: adaptiveFlinkConfig(), TaskManagers: 2}) // 4 slots
	id := h.runToRunning(map[string]any{"parallelism": 2})
	h.expectParallelism(id, 2)
	got := h.mustGet("/jobs/" + id + "/resource-requirements")
	for _, v := range h.jobInfo(id).VertexIDs {
		if num(at(got, v, "parallelism", "lowerBound")) != 1 || num(at(got, v, "parallelism", "upperBound")) != 2 {
			t.Fatalf("initial requirements %v", got)
		}
	}
	h.step(10*time.Second + 200*time.Millisecond) // chk-1
	putAt := h.clk.Now()
	if status, body := h.call("PUT", "/jobs/"+id+"/resource-requirements", h.requirements(id, 1, 4)); status != 200 || len(body.(map[string]any)) != 0 {
		t.Fatalf("PUT: %d %v", status, body)
	}
	if got := h.mustGet("/jobs/" + id + "/resource-requirements"); num(at(got, h.jobInfo(id).VertexIDs[0], "parallelism", "upperBound")) != 4 {
		t.Fatalf("requirements after PUT %v", got)
	}

	// Within scaling-interval.min (30s) of starting, the rescale waits that long.
	h.step(30*time.Second - time.Millisecond)
	h.expectState(id, "RUNNING")
	h.expectParallelism(id, 2)
	h.step(time.Millisecond)
	h.expectState(id, "RESTARTING")
	h.step(300 * time.Millisecond) // tasks cancelled
	h.expectState(id, "CREATED")
	h.step(200 * time.Millisecond)
	h.expectState(id, "RUNNING")
	h.expectParallelism(id, 4)

	cp := h.mustGet("/jobs/" + id + "/checkpoints")
	// Checkpoints 1 to 3 completed before the rescale; it restores the latest.
	if num(at(cp, "counts", "restored")) != 1 || at(cp, "latest", "restored", "external_path") != ckpDir+"/"+id+"/chk-3" {
		t.Fatalf("rescale did not restore chk-3: %v", cp["latest"])
	}
	info := h.jobInfo(id)
	if info.Rescales != 1 || info.Restarts != 0 || info.Parallelism != 2 {
		t.Fatalf("job info %+v", info)
	}
	if got := h.mustGet("/overview"); num(got["slots-available"]) != 0 {
		t.Fatalf("overview %v", got)
	}
	_, metrics := h.call("GET", "/jobs/"+id+"/metrics?get=numRestarts", nil)
	if at(metrics, 0, "value") != "1" {
		t.Fatalf("numRestarts %v", metrics)
	}
	ts := at(h.mustGet("/jobs/"+id), "timestamps").(map[string]any)
	if num(ts["RESTARTING"]) != putAt.Add(30*time.Second).UnixMilli() {
		t.Fatalf("timestamps %v", ts)
	}

	// The next PUT is past the cooldown: the job scales down right away.
	h.step(31 * time.Second)
	h.call("PUT", "/jobs/"+id+"/resource-requirements", h.requirements(id, 1, 1))
	h.expectState(id, "RESTARTING")
	h.step(500 * time.Millisecond)
	h.expectParallelism(id, 1)
	if got := h.mustGet("/overview"); num(got["slots-available"]) != 3 {
		t.Fatalf("overview after scale-down %v", got)
	}
}

func TestAdaptiveSchedulerRescaleIsNotASecondJob(t *testing.T) {
	timeline := NewTimeline()
	h := newHarness(t, Options{FlinkConfig: adaptiveFlinkConfig("jobmanager.adaptive-scheduler.scaling-interval.min", "0s"),
		TaskManagers: 2, Timeline: timeline, AppKey: "ns/app"})
	id := h.runToRunning(map[string]any{"parallelism": 1})
	h.call("PUT", "/jobs/"+id+"/resource-requirements", h.requirements(id, 1, 3))
	h.step(time.Second)
	h.expectParallelism(id, 3)
	jobs := timeline.Jobs("ns/app")
	if len(jobs) != 1 || jobs[0].JobID != id || len(timeline.Overlaps("ns/app")) != 0 {
		t.Fatalf("timeline %+v", jobs)
	}
	var states []string
	for _, s := range jobs[0].States {
		states = append(states, s.State)
	}
	if got := strings.Join(states, " "); got != "INITIALIZING CREATED RUNNING RESTARTING CREATED RUNNING" {
		t.Fatalf("states %s", got)
	}
	if _, ended := jobs[0].AliveUntil(); ended {
		t.Fatal("rescaled job recorded as ended")
	}
}

func TestAdaptiveSchedulerRunsWithAvailableSlotsAndScalesUp(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: adaptiveFlinkConfig(), TaskManagers: 1}) // 2 slots
	id := h.run(map[string]any{"parallelism": 4})
	h.step(300 * time.Millisecond)
	// Waiting for resources: enough for the lower bounds, not for the upper ones.
	h.expectState(id, "CREATED")
	h.step(10*time.Second - time.Millisecond) // resource-stabilization-timeout
	h.expectState(id, "CREATED")
	h.step(time.Millisecond)
	h.expectState(id, "RUNNING")
	h.expectParallelism(id, 2)
	if tasks := at(h.mustGet("/jobs/overview"), "jobs", 0, "tasks").(map[string]any); num(tasks["running"]) != num(tasks["total"]) {
		t.Fatalf("a RUNNING job of the adaptive scheduler has all its tasks running: %v", tasks)
	}

	h.step(time.Second)
	h.jm.SetTaskManagers(2)
	h.step(30 * time.Second) // cooldown from the new slots' arrival
	h.expectState(id, "RESTARTING")
	h.step(500 * time.Millisecond)
	h.expectState(id, "RUNNING")
	h.expectParallelism(id, 4)

	// More slots than the upper bound change nothing.
	h.jm.SetTaskManagers(4)
	h.step(time.Minute)
	h.expectParallelism(id, 4)
	if info := h.jobInfo(id); info.Rescales != 1 {
		t.Fatalf("rescales %d", info.Rescales)
	}

	// Losing slots is a task failure, after which the job runs with what is left.
	h.jm.SetTaskManagers(1)
	h.expectState(id, "RESTARTING")
	h.step(time.Second + 200*time.Millisecond + 10*time.Second)
	h.expectState(id, "RUNNING")
	h.expectParallelism(id, 2)
	if info := h.jobInfo(id); info.Restarts != 1 {
		t.Fatalf("restarts %d", info.Restarts)
	}
}

func TestAdaptiveSchedulerStartsAtOnceWithDesiredSlots(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: adaptiveFlinkConfig(), TaskManagers: 2})
	id := h.runToRunning(map[string]any{"parallelism": 3})
	h.expectParallelism(id, 3)
}

func TestAdaptiveSchedulerWithoutSlotsFails(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: adaptiveFlinkConfig(), TaskManagers: -1})
	h.jm.SetTaskManagers(0)
	id := h.run(nil)
	h.step(300*time.Millisecond + 5*time.Minute - time.Millisecond)
	h.expectState(id, "CREATED")
	h.step(time.Millisecond)
	h.expectState(id, "FAILED")
	ex := h.mustGet("/jobs/" + id + "/exceptions")
	if !strings.Contains(ex["root-exception"].(string), "NoResourceAvailableException: Not enough resources available for scheduling.") {
		t.Fatalf("exceptions %v", ex)
	}
}

func TestAdaptiveSchedulerKeepsRunningBelowAnUnreachableLowerBound(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: adaptiveFlinkConfig("jobmanager.adaptive-scheduler.scaling-interval.min", "0s"), TaskManagers: 2})
	id := h.runToRunning(map[string]any{"parallelism": 2})
	h.call("PUT", "/jobs/"+id+"/resource-requirements", h.requirements(id, 6, 6))
	h.step(time.Minute)
	h.expectState(id, "RUNNING")
	h.expectParallelism(id, 2)
	h.jm.SetTaskManagers(3)
	h.step(time.Second)
	h.expectParallelism(id, 6)

	// Unchanged requirements are no reason to restart.
	h.call("PUT", "/jobs/"+id+"/resource-requirements", h.requirements(id, 6, 6))
	h.step(time.Second)
	if info := h.jobInfo(id); info.Rescales != 1 {
		t.Fatalf("rescales %d", info.Rescales)
	}
}

func TestAdaptiveSchedulerCancelWhileWaiting(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: adaptiveFlinkConfig(), TaskManagers: -1})
	h.jm.SetTaskManagers(0)
	id := h.run(nil)
	h.step(time.Second)
	h.expectState(id, "CREATED")
	if status, _ := h.call("PATCH", "/jobs/"+id, nil); status != 202 {
		t.Fatalf("cancel %d", status)
	}
	h.expectState(id, "CANCELED")
}

func TestResourceRequirementsErrors(t *testing.T) {
	const unsupported = "java.lang.UnsupportedOperationException: The DefaultScheduler does not support changing the parallelism without a job restart."
	unknown := strings.Repeat("cd", 16)
	tests := []struct {
		name       string
		adaptive   bool
		method     string
		job        func(h *harness) string
		body       func(h *harness, id string) any
		wantStatus int
		wantText   []string
	}{
		{"GET with the DefaultScheduler", false, "GET", runningJob, nil, 500, []string{"Internal server error.", unsupported}},
		{"PUT with the DefaultScheduler", false, "PUT", runningJob, fullBody, 500, []string{"Internal server error.", unsupported}},
		{"validation comes before the scheduler", false, "PUT", runningJob, oneVertexBody, 400,
			[]string{"RestHandlerException: The request is incomplete, missing job vertex ["}},
		{"unknown job", true, "GET", func(*harness) string { return unknown }, nil, 500,
			[]string{"Internal server error.", "FlinkJobNotFoundException: Could not find Flink job (" + unknown + ")"}},
		{"finished job", true, "PUT", func(h *harness) string {
			id := h.runToRunning(nil)
			h.post("/jobs/"+id+"/stop", nil)
			h.step(2 * time.Second)
			return id
		}, fullBody, 500, []string{"FlinkJobNotFoundException"}},
		{"initializing job", true, "GET", func(h *harness) string { return h.run(nil) }, nil, 500,
			[]string{"UnavailableDispatcherOperationException"}},
		{"empty body", true, "PUT", runningJob, func(*harness, string) any { return map[string]any{} }, 400,
			[]string{"RestHandlerException: Request body does not specify resource requirements."}},
		{"malformed vertex id", true, "PUT", runningJob, func(*harness, string) any {
			return map[string]any{"nope": map[string]any{"parallelism": map[string]any{"lowerBound": 1, "upperBound": 1}}}
		}, 400, []string{"Request did not match expected format JobResourceRequirementsBody."}},
		{"unknown vertex", true, "PUT", runningJob, func(h *harness, id string) any {
			b := fullBody(h, id).(map[string]any)
			b[strings.Repeat("ef", 16)] = map[string]any{"parallelism": map[string]any{"lowerBound": 1, "upperBound": 1}}
			return b
		}, 400, []string{"Job vertex [" + strings.Repeat("ef", 16) + "] was not found in the JobGraph."}},
		{"bounds", true, "PUT", runningJob, func(h *harness, id string) any {
			v := h.jobInfo(id).VertexIDs
			return map[string]any{
				v[0]: map[string]any{"parallelism": map[string]any{"lowerBound": 3, "upperBound": 2}},
				v[1]: map[string]any{"parallelism": map[string]any{"lowerBound": 0, "upperBound": 129}},
			}
		}, 400, []string{"is higher than the upper bound [2].", "Both, the requested lower bound [0] and upper bound [129]"}},
		{"above max parallelism", true, "PUT", runningJob, func(h *harness, id string) any { return h.requirements(id, -1, 129) }, 400,
			[]string{"The newly requested parallelism 129 for the job vertex", "exceeds its maximum parallelism 128."}},
		{"defaults", true, "PUT", runningJob, func(h *harness, id string) any { return h.requirements(id, -1, -1) }, 200, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := checkpointConfig()
			if tc.adaptive {
				cfg = adaptiveFlinkConfig()
			}
			h := newHarness(t, Options{FlinkConfig: cfg})
			id := tc.job(h)
			var body any
			if tc.body != nil {
				body = tc.body(h, id)
			}
			status, out := h.call(tc.method, "/jobs/"+id+"/resource-requirements", body)
			m, _ := out.(map[string]any)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %v", status, tc.wantStatus, out)
			}
			for _, want := range tc.wantText {
				if !strings.Contains(errorText(m), want) {
					t.Fatalf("errors lack %q: %v", want, errorText(m))
				}
			}
		})
	}
}

func runningJob(h *harness) string { return h.runToRunning(nil) }

func fullBody(h *harness, id string) any { return h.requirements(id, 1, 2) }

func oneVertexBody(h *harness, id string) any {
	v := h.jobInfo(id).VertexIDs[0]
	return map[string]any{v: map[string]any{"parallelism": map[string]any{"lowerBound": 1, "upperBound": 1}}}
}
