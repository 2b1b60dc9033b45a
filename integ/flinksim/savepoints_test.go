package flinksim

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestSavepointCompletesAndAppearsInCheckpoints(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	trigger := h.savepoint(id, map[string]any{"cancel-job": false})
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(trigger) {
		t.Fatalf("request-id %q", trigger)
	}

	st := h.savepointStatus(id, trigger)
	if at(st, "status", "id") != "IN_PROGRESS" {
		t.Fatalf("status %v", st)
	}
	if op, present := st["operation"]; !present || op != nil {
		t.Fatalf("in-progress operation must be an explicit null: %v", st)
	}
	cp := h.mustGet("/jobs/" + id + "/checkpoints")
	if at(cp, "history", 0, "className") != "in_progress" || num(at(cp, "counts", "in_progress")) != 1 {
		t.Fatalf("pending savepoint in stats: %v", cp)
	}
	h.expectState(id, "RUNNING")

	h.step(time.Second)
	st = h.savepointStatus(id, trigger)
	loc, _ := at(st, "operation", "location").(string)
	want := regexp.MustCompile(`^s3://bucket/savepoints/savepoint-` + id[:6] + `-[0-9a-f]{12}$`)
	if at(st, "status", "id") != "COMPLETED" || !want.MatchString(loc) {
		t.Fatalf("completed status %v", st)
	}
	if _, hasFailure := at(st, "operation").(map[string]any)["failure-cause"]; hasFailure {
		t.Fatal("successful operation must omit failure-cause")
	}
	if !h.jm.Storage().Exists(loc) || !h.jm.Storage().Exists(loc+"/_metadata") {
		t.Fatal("savepoint not in storage")
	}
	h.expectState(id, "RUNNING")

	cp = h.mustGet("/jobs/" + id + "/checkpoints")
	sp := at(cp, "latest", "savepoint")
	if at(sp, "external_path") != loc || at(sp, "is_savepoint") != true || at(sp, "checkpoint_type") != "SAVEPOINT" ||
		at(sp, "className") != "completed" || at(sp, "savepointFormat") != "CANONICAL" {
		t.Fatalf("latest.savepoint %v", sp)
	}
	if at(cp, "history", 0, "id") != at(sp, "id") || num(at(cp, "counts", "completed")) != 1 || num(at(cp, "counts", "total")) != 1 {
		t.Fatalf("history/counts %v", cp)
	}
	if at(cp, "latest", "completed") != nil {
		t.Fatal("a savepoint is not latest.completed")
	}
	if h.jm.SavepointTriggers() != 1 {
		t.Fatalf("SavepointTriggers %d", h.jm.SavepointTriggers())
	}
}

func TestSavepointTriggerEdgeCases(t *testing.T) {
	unknown := strings.Repeat("ef", 16)
	tests := []struct {
		name        string
		config      map[string]string
		prepare     func(h *harness) string // returns the job id to trigger on
		body        map[string]any
		wantStatus  int
		wantError   string
		wantFailure string // failure-cause class once completed
	}{
		{"unknown job is accepted and fails later", nil, func(*harness) string { return unknown }, nil, 202, "",
			"org.apache.flink.runtime.messages.FlinkJobNotFoundException"},
		{"initializing job fails", nil, func(h *harness) string { return h.run(nil) }, nil, 202, "",
			"org.apache.flink.runtime.dispatcher.UnavailableDispatcherOperationException"},
		{"tasks not running fails", nil, func(h *harness) string {
			h.jm.SetTaskManagers(0)
			return h.runToRunning(nil)
		}, nil, 202, "", "org.apache.flink.runtime.checkpoint.CheckpointException"},
		{"terminal job is not found", nil, func(h *harness) string {
			id := h.runToRunning(nil)
			h.call("PATCH", "/jobs/"+id, nil)
			h.step(time.Second)
			return id
		}, nil, 202, "", "org.apache.flink.runtime.messages.FlinkJobNotFoundException"},
		{"no directory anywhere", map[string]string{}, func(*harness) string { return unknown }, nil, 400,
			"Config key [execution.checkpointing.savepoint-dir] is not set. Property [target-directory] must be provided.", ""},
		{"directory from the request", map[string]string{}, func(h *harness) string { return h.runToRunning(nil) },
			map[string]any{"target-directory": "file:///sp/"}, 202, "", ""},
		{"bad format type", nil, func(h *harness) string { return h.runToRunning(nil) },
			map[string]any{"formatType": "XML"}, 400, "Request did not match expected format SavepointTriggerRequestBody.", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{FlinkConfig: tc.config})
			id := tc.prepare(h)
			status, m := h.post("/jobs/"+id+"/savepoints", tc.body)
			if status != tc.wantStatus || !strings.Contains(errorText(m), tc.wantError) {
				t.Fatalf("trigger: %d %v, want %d %q", status, m, tc.wantStatus, tc.wantError)
			}
			if status != 202 {
				return
			}
			h.step(time.Second)
			st := h.savepointStatus(id, m["request-id"].(string))
			if at(st, "status", "id") != "COMPLETED" {
				t.Fatalf("status %v", st)
			}
			if tc.wantFailure == "" {
				if loc := at(st, "operation", "location").(string); !strings.HasPrefix(loc, "file:/sp/savepoint-") {
					t.Fatalf("location %q", loc)
				}
				return
			}
			cause := at(st, "operation", "failure-cause")
			class := tc.wantFailure
			if class == "org.apache.flink.runtime.messages.FlinkJobNotFoundException" {
				class = "java.util.concurrent.CompletionException" // as real Flink holds it, the cause within
			}
			if at(cause, "class") != class || !strings.Contains(at(cause, "stack-trace").(string), tc.wantFailure) ||
				at(cause, "serialized-throwable") == nil || at(st, "operation", "location") != nil {
				t.Fatalf("failure-cause %v, want %s", cause, tc.wantFailure)
			}
		})
	}
}

func TestSavepointTriggerIDIsIdempotent(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	trigger := strings.Repeat("12", 16)
	for i := 0; i < 3; i++ {
		if got := h.savepoint(id, map[string]any{"triggerId": trigger}); got != trigger {
			t.Fatalf("request-id %s, want %s", got, trigger)
		}
		h.step(400 * time.Millisecond)
	}
	if h.jm.SavepointTriggers() != 1 {
		t.Fatalf("SavepointTriggers %d, want 1", h.jm.SavepointTriggers())
	}
	if n := num(at(h.mustGet("/jobs/"+id+"/checkpoints"), "counts", "total")); n != 1 {
		t.Fatalf("checkpoint total %d, want 1", n)
	}
}

// TestSavepointTriggerIDBeforeFlink115: older Flink had no triggerId in the request bodies and
// its strict mapper refuses one; without it every trigger takes a savepoint of its own.
func TestSavepointTriggerIDBeforeFlink115(t *testing.T) {
	for _, version := range []string{"1.14", "1.13.6", "v1_14"} {
		t.Run(version, func(t *testing.T) {
			h := newHarness(t, Options{FlinkVersion: version})
			id := h.runToRunning(nil)
			trigger := strings.Repeat("12", 16)
			for _, path := range []string{"/jobs/" + id + "/savepoints", "/jobs/" + id + "/stop"} {
				status, m := h.post(path, map[string]any{"triggerId": trigger})
				if status != 400 || !strings.Contains(errorText(m), `Unrecognized field "triggerId"`) {
					t.Fatalf("%s with a triggerId: %d %v, want 400", path, status, m)
				}
			}
			first := h.savepoint(id, nil)
			second := h.savepoint(id, map[string]any{"cancel-job": false})
			if first == second {
				t.Fatalf("request-ids %s, %s; want fresh ones", first, second)
			}
			if h.jm.SavepointTriggers() != 2 {
				t.Fatalf("SavepointTriggers %d, want 2", h.jm.SavepointTriggers())
			}
		})
	}
}

func TestFlinkBefore(t *testing.T) {
	for version, want := range map[string]bool{
		"": false, "1.20": false, "1.15.0": false, "1.14": true, "1.14.6": true, "v1_13": true, "2.0": false, "x": false,
	} {
		if got := flinkBefore(version, 1, 15); got != want {
			t.Errorf("flinkBefore(%q, 1, 15) = %v, want %v", version, got, want)
		}
	}
}

func TestSavepointResultIsForgotten(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	trigger := h.savepoint(id, nil)
	h.step(time.Second + 5*time.Minute - time.Millisecond)
	if at(h.savepointStatus(id, trigger), "status", "id") != "COMPLETED" {
		t.Fatal("result forgotten too early")
	}
	h.step(time.Millisecond)
	status, m := h.get("/jobs/" + id + "/savepoints/" + trigger)
	want := "There is no savepoint operation with triggerId=" + trigger + " for job " + id + "."
	if status != 404 || !strings.Contains(errorText(m), want) {
		t.Fatalf("after retention: %d %v", status, m)
	}
	// A trigger id unknown for this job is not found either.
	if status, _ := h.get("/jobs/" + strings.Repeat("ab", 16) + "/savepoints/" + trigger); status != 404 {
		t.Fatalf("other job: %d", status)
	}
}

func TestCancelWithSavepoint(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	trigger := h.savepoint(id, map[string]any{"cancel-job": true})
	h.step(time.Second)
	st := h.savepointStatus(id, trigger)
	if at(st, "status", "id") != "COMPLETED" || at(st, "operation", "location") == nil {
		t.Fatalf("status %v", st)
	}
	h.expectState(id, "CANCELLING") // COMPLETED is reported while still cancelling
	h.step(300 * time.Millisecond)
	h.expectState(id, "CANCELED")
	if got := at(h.mustGet("/jobs/"+id+"/checkpoints"), "latest", "savepoint", "external_path"); got != at(st, "operation", "location") {
		t.Fatalf("latest.savepoint %v", got)
	}
}

// TestCancelWithSavepointStaysFindable is how a client that stopped polling
// its trigger finds the savepoint: the CANCELED job's statistics name it.
func TestCancelWithSavepointStaysFindable(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: checkpointConfig()})
	id := h.runToRunning(nil)
	h.step(10*time.Second + 200*time.Millisecond) // chk-1
	triggeredAt := h.clk.Now()
	h.savepoint(id, map[string]any{"cancel-job": true})
	h.step(2 * time.Second)
	h.expectState(id, "CANCELED")
	loc := ""
	for _, s := range h.jm.Storage().Snapshots() {
		if s.Savepoint {
			loc = s.Path
		}
	}
	cp := h.mustGet("/jobs/" + id + "/checkpoints")
	sp := at(cp, "latest", "savepoint")
	if loc == "" || at(sp, "external_path") != loc || num(at(sp, "trigger_timestamp")) != triggeredAt.UnixMilli() ||
		at(sp, "status") != "COMPLETED" || at(sp, "is_savepoint") != true || num(at(sp, "id")) != 2 {
		t.Fatalf("latest.savepoint %v, want %s triggered at %d", sp, loc, triggeredAt.UnixMilli())
	}
	if h0 := at(cp, "history", 0); at(h0, "id") != at(sp, "id") || at(h0, "is_savepoint") != true || at(h0, "external_path") != loc {
		t.Fatalf("history[0] %v", h0)
	}
	if h1 := at(cp, "history", 1); at(h1, "is_savepoint") != false || num(at(h1, "id")) != 1 {
		t.Fatalf("history[1] %v", h1)
	}
}

func TestStopWithSavepoint(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	status, m := h.post("/v1/jobs/"+id+"/stop", map[string]any{"targetDirectory": nil, "drain": false, "formatType": "NATIVE", "triggerId": nil})
	if status != 202 {
		t.Fatalf("stop: %d %v", status, m)
	}
	trigger := m["request-id"].(string)
	h.step(999 * time.Millisecond)
	h.expectState(id, "RUNNING")
	h.step(time.Millisecond)
	h.expectState(id, "FINISHED")
	st := h.savepointStatus(id, trigger)
	if at(st, "status", "id") != "COMPLETED" || at(st, "operation", "location") == nil {
		t.Fatalf("status %v", st)
	}
	cp := h.mustGet("/jobs/" + id + "/checkpoints")
	if at(cp, "history", 0, "checkpoint_type") != "SYNC_SAVEPOINT" || at(cp, "latest", "savepoint", "savepointFormat") != "NATIVE" {
		t.Fatalf("checkpoints %v", cp)
	}
	if got := at(h.mustGet("/jobs/"+id), "vertices", 1, "tasks", "FINISHED"); num(got) != 1 {
		t.Fatalf("FINISHED subtasks %v", got)
	}
	if status, m := h.post("/jobs/"+id+"/stop", map[string]any{}); status != 202 {
		t.Fatalf("stop on finished job: %d %v", status, m)
	}
	t.Run("no directory", func(t *testing.T) {
		h := newHarness(t, Options{FlinkConfig: map[string]string{}})
		status, m := h.post("/jobs/"+strings.Repeat("ab", 16)+"/stop", nil)
		if status != 400 || !strings.Contains(errorText(m), "Property [targetDirectory] must be provided.") {
			t.Fatalf("%d %v", status, m)
		}
	})
}

func TestSavepointFaults(t *testing.T) {
	t.Run("failing savepoints keep the job running", func(t *testing.T) {
		h := newHarness(t, Options{})
		id := h.runToRunning(nil)
		h.jm.SetFaults(Faults{FailSavepoints: true})
		trigger := h.savepoint(id, map[string]any{"cancel-job": true})
		h.step(time.Second)
		st := h.savepointStatus(id, trigger)
		if at(st, "operation", "failure-cause", "class") != classCheckpoint {
			t.Fatalf("status %v", st)
		}
		h.step(time.Second)
		h.expectState(id, "RUNNING")
		cp := h.mustGet("/jobs/" + id + "/checkpoints")
		if num(at(cp, "counts", "failed")) != 1 || at(cp, "latest", "failed", "className") != "failed" ||
			at(cp, "latest", "failed", "failure_message") == nil {
			t.Fatalf("checkpoints %v", cp)
		}
	})
	t.Run("hanging savepoints stay in progress until the job stops", func(t *testing.T) {
		h := newHarness(t, Options{})
		id := h.runToRunning(nil)
		h.jm.SetFaults(Faults{HangSavepoints: true})
		trigger := h.savepoint(id, nil)
		h.step(time.Hour)
		if at(h.savepointStatus(id, trigger), "status", "id") != "IN_PROGRESS" {
			t.Fatal("hanging savepoint completed")
		}
		h.call("PATCH", "/jobs/"+id, nil)
		st := h.savepointStatus(id, trigger)
		if at(st, "status", "id") != "COMPLETED" || at(st, "operation", "failure-cause") == nil {
			t.Fatalf("status after cancel %v", st)
		}
	})
}

func TestDisposal(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	trigger := h.savepoint(id, nil)
	h.step(time.Second)
	loc := at(h.savepointStatus(id, trigger), "operation", "location").(string)

	status, m := h.post("/savepoint-disposal", map[string]any{"savepoint-path": loc})
	if status != 200 {
		t.Fatalf("disposal: %d %v", status, m)
	}
	st := h.mustGet("/savepoint-disposal/" + m["request-id"].(string))
	if at(st, "status", "id") != "COMPLETED" || len(at(st, "operation").(map[string]any)) != 0 || h.jm.Storage().Exists(loc) {
		t.Fatalf("disposal status %v", st)
	}
	_, m = h.post("/savepoint-disposal", map[string]any{"savepoint-path": loc})
	st = h.mustGet("/savepoint-disposal/" + m["request-id"].(string))
	if at(st, "operation", "failure-cause", "class") != "java.io.FileNotFoundException" {
		t.Fatalf("second disposal %v", st)
	}
	if status, _ := h.get("/savepoint-disposal/" + strings.Repeat("ab", 16)); status != 404 {
		t.Fatalf("unknown disposal %d", status)
	}
}

// A savepoint is written in the format its trigger asked for, which Storage records, and a release
// before 1.15, which has no formatType, refuses a trigger that names one.
func TestSavepointFormatIsRecordedWhereTheReleaseTakesIt(t *testing.T) {
	formats := func(h *harness) []string {
		var out []string
		for _, s := range h.jm.Storage().Snapshots() {
			if s.Savepoint {
				out = append(out, s.Format)
			}
		}
		return out
	}
	h := newHarness(t, Options{FlinkVersion: "1.15"})
	id := h.runToRunning(nil)
	h.savepoint(id, map[string]any{"formatType": "NATIVE"})
	h.step(2 * time.Second)
	h.savepoint(id, map[string]any{})
	h.step(2 * time.Second)
	if got := formats(h); strings.Join(got, ",") != "NATIVE,CANONICAL" {
		t.Fatalf("formats %v, want NATIVE then the default, CANONICAL", got)
	}

	old := newHarness(t, Options{FlinkVersion: "1.14"})
	id = old.runToRunning(nil)
	status, m := old.post("/jobs/"+id+"/savepoints", map[string]any{"formatType": "NATIVE"})
	if status != 400 || !strings.Contains(errorText(m), "Request did not match expected format SavepointTriggerRequestBody.") {
		t.Fatalf("Flink 1.14 took formatType: %d %v", status, m)
	}
	old.savepoint(id, map[string]any{})
	old.step(2 * time.Second)
	if got := formats(old); strings.Join(got, ",") != "CANONICAL" {
		t.Fatalf("formats %v, want its only one, CANONICAL", got)
	}
}
