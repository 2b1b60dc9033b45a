package flinksim

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func checkpointConfig(extra ...string) map[string]string {
	cfg := map[string]string{
		"state.savepoints.dir": spDir, "state.checkpoints.dir": ckpDir,
		"execution.checkpointing.interval": "10s", "taskmanager.numberOfTaskSlots": "2",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	return cfg
}

func TestPeriodicCheckpoints(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: checkpointConfig()})
	id := h.runToRunning(nil)
	cp := h.mustGet("/jobs/" + id + "/checkpoints")
	if num(at(cp, "counts", "total")) != 0 || at(cp, "latest", "completed") != nil || len(cp["history"].([]any)) != 0 {
		t.Fatalf("fresh stats %v", cp)
	}

	h.step(10 * time.Second)
	cp = h.mustGet("/jobs/" + id + "/checkpoints")
	if at(cp, "history", 0, "status") != "IN_PROGRESS" || at(cp, "history", 0, "className") != "in_progress" {
		t.Fatalf("checkpoint 1 should be pending: %v", cp["history"])
	}
	h.step(200 * time.Millisecond)
	h.step(20 * time.Second) // checkpoints 2 and 3
	cp = h.mustGet("/jobs/" + id + "/checkpoints")
	latest := at(cp, "latest", "completed")
	if num(at(cp, "counts", "completed")) != 3 || num(at(latest, "id")) != 3 ||
		at(latest, "external_path") != ckpDir+"/"+id+"/chk-3" || at(latest, "checkpoint_type") != "CHECKPOINT" ||
		at(latest, "is_savepoint") != false || at(latest, "savepointFormat") != nil {
		t.Fatalf("after 30s: %v", cp)
	}
	if num(at(cp, "summary", "state_size", "max")) == 0 {
		t.Fatalf("summary %v", cp["summary"])
	}
	// state.checkpoints.num-retained defaults to 1: older checkpoints are discarded.
	if h.jm.Storage().Exists(ckpDir+"/"+id+"/chk-2") || !h.jm.Storage().Exists(ckpDir+"/"+id+"/chk-3") {
		t.Fatal("retained checkpoints wrong")
	}
	if at(cp, "history", 1, "discarded") != true {
		t.Fatalf("subsumed checkpoint not marked discarded: %v", at(cp, "history", 1))
	}
	detail := h.mustGet("/jobs/" + id + "/checkpoints/details/3")
	if len(detail["tasks"].(map[string]any)) != 2 || detail["className"] != "completed" {
		t.Fatalf("details %v", detail)
	}
	if status, m := h.get("/jobs/" + id + "/checkpoints/details/99"); status != 404 ||
		!strings.Contains(errorText(m), "Could not find checkpointing statistics for checkpoint 99.") {
		t.Fatalf("unknown checkpoint %d %v", status, m)
	}
	if status, _ := h.get("/jobs/" + id + "/checkpoints/details/x"); status != 400 {
		t.Fatalf("malformed checkpoint id %d", status)
	}
	cfg := h.mustGet("/jobs/" + id + "/checkpoints/config")
	if num(cfg["interval"]) != 10000 || cfg["mode"] != "exactly_once" || cfg["checkpoint_storage"] != "FileSystemCheckpointStorage" {
		t.Fatalf("config %v", cfg)
	}
}

func TestCheckpointRetentionOnJobEnd(t *testing.T) {
	tests := []struct {
		retention string
		end       func(h *harness, id string)
		wantKept  bool
	}{
		{"", func(h *harness, id string) { h.call("PATCH", "/jobs/"+id, nil) }, false},
		{"RETAIN_ON_CANCELLATION", func(h *harness, id string) { h.call("PATCH", "/jobs/"+id, nil) }, true},
		{"DELETE_ON_CANCELLATION", func(h *harness, id string) { h.call("PATCH", "/jobs/"+id, nil) }, false},
		{"DELETE_ON_CANCELLATION", func(h *harness, id string) { h.jm.FailJobNow(id) }, true},
		{"RETAIN_ON_CANCELLATION", func(h *harness, id string) { h.post("/jobs/"+id+"/stop", nil) }, false},
		{"", func(h *harness, id string) { h.jm.Crash() }, true},
	}
	for _, tc := range tests {
		t.Run(tc.retention, func(t *testing.T) {
			h := newHarness(t, Options{FlinkConfig: checkpointConfig(
				"execution.checkpointing.externalized-checkpoint-retention", tc.retention)})
			id := h.runToRunning(nil)
			h.step(10*time.Second + 200*time.Millisecond)
			path := ckpDir + "/" + id + "/chk-1"
			tc.end(h, id)
			h.step(2 * time.Second)
			if got := h.jm.Storage().Exists(path); got != tc.wantKept {
				t.Fatalf("checkpoint kept = %v, want %v", got, tc.wantKept)
			}
		})
	}
}

// TestRetainedCheckpointReadableAfterCancel is what a last-state upgrade
// relies on: after cancelling, the job's statistics still name its newest
// checkpoint, and that checkpoint is still in Storage.
func TestRetainedCheckpointReadableAfterCancel(t *testing.T) {
	for _, cancel := range []struct {
		name string
		do   func(h *harness, id string)
	}{
		{"cancel", func(h *harness, id string) { h.call("PATCH", "/jobs/"+id+"?mode=cancel", nil) }},
		{"cancel with savepoint", func(h *harness, id string) { h.savepoint(id, map[string]any{"cancel-job": true}) }},
	} {
		t.Run(cancel.name, func(t *testing.T) {
			h := newHarness(t, Options{FlinkConfig: checkpointConfig(
				"execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION",
				"state.checkpoints.num-retained", "2")})
			id := h.runToRunning(nil)
			h.step(30*time.Second + 200*time.Millisecond) // chk-1 to chk-3
			cancel.do(h, id)
			h.step(2 * time.Second)
			h.expectState(id, "CANCELED")
			latest := at(h.mustGet("/jobs/"+id+"/checkpoints"), "latest", "completed")
			path := ckpDir + "/" + id + "/chk-3"
			if at(latest, "external_path") != path || at(latest, "discarded") != false || at(latest, "status") != "COMPLETED" {
				t.Fatalf("latest.completed after CANCELED: %v", latest)
			}
			s := h.jm.Storage()
			if !s.Exists(path) || !s.Exists(ckpDir+"/"+id+"/chk-2") || s.Exists(ckpDir+"/"+id+"/chk-1") {
				t.Fatalf("retained checkpoints: %+v", s.Snapshots())
			}
		})
	}
}

func TestRestoreFromAnotherJobManager(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	storage := NewStorage()
	cfg := checkpointConfig()
	old := &harness{t: t, clk: clk}
	old.jm = NewJobManager(Options{Clock: clk, Storage: storage, FlinkConfig: cfg, TaskManagers: 2})
	old.srv = newServer(t, old.jm)
	id := old.runToRunning(nil)
	old.step(25 * time.Second) // checkpoints 1 and 2
	trigger := old.savepoint(id, map[string]any{"cancel-job": true})
	old.step(time.Second)
	loc := at(old.savepointStatus(id, trigger), "operation", "location").(string)
	spID := num(at(old.mustGet("/jobs/"+id+"/checkpoints"), "latest", "savepoint", "id"))
	old.jm.Crash()

	h := &harness{t: t, clk: clk}
	h.jm = NewJobManager(Options{Clock: clk, Storage: storage, FlinkConfig: cfg, TaskManagers: 2})
	h.srv = newServer(t, h.jm)
	newID := h.runToRunning(map[string]any{"savepointPath": loc, "allowNonRestoredState": false})
	cp := h.mustGet("/jobs/" + newID + "/checkpoints")
	restored := at(cp, "latest", "restored").(map[string]any)
	if num(restored["id"]) != spID || restored["is_savepoint"] != true || restored["external_path"] != loc ||
		num(restored["restore_timestamp"]) != clk.Now().Add(-200*time.Millisecond).UnixMilli() || num(at(cp, "counts", "restored")) != 1 {
		t.Fatalf("restored %v counts %v", restored, cp["counts"])
	}
	if _, hasClass := restored["className"]; hasClass {
		t.Fatal("restored has no className")
	}
	h.step(10*time.Second + 200*time.Millisecond)
	if got := num(at(h.mustGet("/jobs/"+newID+"/checkpoints"), "latest", "completed", "id")); got != spID+1 {
		t.Fatalf("first checkpoint after restore has id %d, want %d", got, spID+1)
	}
}

func TestARunFromAMissingSavepointIsRefusedAndTheJobListedFailed(t *testing.T) {
	tests := []struct {
		name string
		path func(h *harness) string
	}{
		{"never existed", func(*harness) string { return "s3://bucket/savepoints/savepoint-000000-000000000000" }},
		{"deleted from storage", func(h *harness) string {
			id := h.runToRunning(nil)
			trigger := h.savepoint(id, map[string]any{"cancel-job": true})
			h.step(2 * time.Second)
			loc := at(h.savepointStatus(id, trigger), "operation", "location").(string)
			h.jm.Storage().Delete(loc)
			return loc
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			path := tc.path(h)
			// Real Flink's run handler waits for the job's initialisation: the restore is refused in the
			// answer, and the job is listed FAILED under the id asked for, which stays taken.
			id := "0123456789abcdef0123456789abcdef"
			status, m := h.post("/jars/"+jar+"/run", map[string]any{"savepointPath": path, "jobId": id})
			refusal := fmt.Sprint(m["errors"])
			if status != http.StatusBadRequest || !strings.Contains(refusal, "Could not execute application.") ||
				!strings.Contains(refusal, "java.io.FileNotFoundException: Cannot find checkpoint or savepoint file/directory '"+path+"'") {
				t.Fatalf("run from a missing savepoint: %d %v; want 400 Could not execute application, caused by FileNotFoundException", status, m)
			}
			h.expectState(id, "FAILED")
			if status, m := h.post("/jars/"+jar+"/run", map[string]any{"jobId": id}); status != http.StatusBadRequest ||
				!strings.Contains(fmt.Sprint(m["errors"]), "has already been submitted") {
				t.Fatalf("the refused job's id again: %d %v; want a duplicate", status, m)
			}
			details := h.mustGet("/jobs/" + id)
			if len(details["vertices"].([]any)) != 0 {
				t.Fatalf("init-failed job has vertices: %v", details["vertices"])
			}
			ex := h.mustGet("/jobs/" + id + "/exceptions")
			root := ex["root-exception"].(string)
			for _, want := range []string{
				"org.apache.flink.runtime.client.JobInitializationException: Could not start the JobMaster.",
				"java.io.FileNotFoundException: Cannot find checkpoint or savepoint file/directory '" + path + "' on file system 's3'.",
			} {
				if !strings.Contains(root, want) {
					t.Fatalf("root-exception lacks %q:\n%s", want, root)
				}
			}
			if at(ex, "exceptionHistory", "entries", 0, "exceptionName") != classJobInit {
				t.Fatalf("history %v", ex["exceptionHistory"])
			}
			found := false
			for _, j := range h.mustGet("/jobs")["jobs"].([]any) {
				found = found || (at(j, "id") == id && at(j, "status") == "FAILED")
			}
			if !found {
				t.Fatalf("failed job not listed in /jobs")
			}
			if status, _ := h.get("/jobs/" + id + "/checkpoints"); status != 404 {
				t.Fatalf("checkpoints of init-failed job: %d", status)
			}
			if _, has := h.mustGet("/jobs/" + id + "/config")["execution-config"]; has {
				t.Fatal("init-failed job has no execution-config")
			}
		})
	}
}

func TestManualCheckpoint(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: map[string]string{"state.checkpoints.dir": "/ckp"}})
	id := h.runToRunning(nil)
	status, m := h.post("/jobs/"+id+"/checkpoints", map[string]any{"checkpointType": "FULL"})
	if status != 202 {
		t.Fatalf("trigger %d %v", status, m)
	}
	trigger := m["request-id"].(string)
	if at(h.mustGet("/jobs/"+id+"/checkpoints/"+trigger), "status", "id") != "IN_PROGRESS" {
		t.Fatal("manual checkpoint not in progress")
	}
	h.step(200 * time.Millisecond)
	st := h.mustGet("/jobs/" + id + "/checkpoints/" + trigger)
	if num(at(st, "operation", "checkpointId")) != 1 {
		t.Fatalf("status %v", st)
	}
	if !h.jm.Storage().Exists("file:/ckp/" + id + "/chk-1") {
		t.Fatal("manual checkpoint not stored")
	}
	if status, m := h.post("/jobs/"+id+"/checkpoints", map[string]any{"checkpointType": "INCREMENTAL"}); status != 500 ||
		!strings.Contains(errorText(m), "IllegalStateException") {
		t.Fatalf("incremental: %d %v", status, m)
	}
	if status, _ := h.get("/jobs/" + id + "/checkpoints/" + strings.Repeat("ab", 16)); status != 404 {
		t.Fatalf("unknown trigger %d", status)
	}
	_, m = h.post("/jobs/"+strings.Repeat("ab", 16)+"/checkpoints", nil)
	h.step(time.Second)
	st = h.mustGet("/jobs/" + strings.Repeat("ab", 16) + "/checkpoints/" + m["request-id"].(string))
	if at(st, "operation", "failureCause", "class") != classJobNotFound {
		t.Fatalf("unknown job %v", st)
	}
}
