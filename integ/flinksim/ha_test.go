package flinksim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

const leaderElectionMessage = "Service temporarily unavailable due to an ongoing leader election. Please refresh."

func haConfig(extra ...string) map[string]string {
	return checkpointConfig(append([]string{"high-availability.type", "kubernetes", "kubernetes.cluster-id", "wordcount"}, extra...)...)
}

// expectLeaderless checks that a JobManager answers like one without a leader.
func (h *harness) expectLeaderless(path string) {
	h.t.Helper()
	if status, m := h.get(path); status != http.StatusServiceUnavailable || errorText(m) != leaderElectionMessage {
		h.t.Fatalf("GET %s while restarting: %d %v", path, status, m)
	}
}

func stateNames(r JobRecord) []string {
	var out []string
	for _, s := range r.States {
		out = append(out, s.State)
	}
	return out
}

func TestRestartWithHARecoversJobsFromTheirLatestCheckpoint(t *testing.T) {
	tl := NewTimeline()
	h := newHarness(t, Options{FlinkConfig: haConfig(), Timeline: tl, AppKey: "ns/app"})
	id := h.runToRunning(map[string]any{"parallelism": 2})
	h.step(20*time.Second + 200*time.Millisecond) // chk-1 and chk-2
	h.jm.Restart()

	h.expectLeaderless("/jobs")
	h.expectLeaderless("/jobs/" + id)
	if status, m := h.post("/jars/"+jar+"/run", nil); status != http.StatusServiceUnavailable {
		t.Fatalf("submit while restarting: %d %v", status, m)
	}
	if status, _ := h.get("/nope"); status != http.StatusNotFound {
		t.Fatalf("unknown path while restarting: %d, want the router's 404", status)
	}
	h.step(time.Second - time.Millisecond)
	h.expectLeaderless("/overview")
	h.step(time.Millisecond)

	if jobs := at(h.mustGet("/jobs"), "jobs").([]any); len(jobs) != 1 || at(jobs, 0, "id") != id || at(jobs, 0, "status") != "INITIALIZING" {
		t.Fatalf("jobs after recovery %v", jobs)
	}
	h.step(100 * time.Millisecond)
	h.expectState(id, "CREATED")
	h.step(200 * time.Millisecond)
	h.expectState(id, "RUNNING")
	if info := h.jm.Jobs()[0]; info.Parallelism != 2 || !info.TasksRunning {
		t.Fatalf("recovered job %+v", info)
	}
	cp := h.mustGet("/jobs/" + id + "/checkpoints")
	chk2 := ckpDir + "/" + id + "/chk-2"
	if num(at(cp, "counts", "restored")) != 1 || num(at(cp, "latest", "restored", "id")) != 2 ||
		at(cp, "latest", "restored", "external_path") != chk2 || at(cp, "latest", "restored", "is_savepoint") != false {
		t.Fatalf("restore after recovery: counts %v latest %v", cp["counts"], cp["latest"])
	}
	h.step(10*time.Second + 200*time.Millisecond)
	if got := at(h.mustGet("/jobs/"+id+"/checkpoints"), "latest", "completed", "external_path"); got != ckpDir+"/"+id+"/chk-3" {
		t.Fatalf("first checkpoint after recovery %v, want chk-3", got)
	}

	records := tl.Jobs("ns/app")
	if len(records) != 1 || !records[0].LostAt.IsZero() {
		t.Fatalf("timeline %+v", records)
	}
	want := "INITIALIZING CREATED RUNNING SUSPENDED INITIALIZING CREATED RUNNING"
	if got := strings.Join(stateNames(records[0]), " "); got != want {
		t.Fatalf("states %s, want %s", got, want)
	}
	if _, ended := records[0].AliveUntil(); ended {
		t.Fatal("recovered job reported ended")
	}
	if o := tl.Overlaps("ns/app"); len(o) != 0 {
		t.Fatalf("recovery overlaps itself: %+v", o)
	}
}

func TestRestartWithoutHALosesJobs(t *testing.T) {
	tl := NewTimeline()
	h := newHarness(t, Options{FlinkConfig: checkpointConfig(), Timeline: tl, AppKey: "ns/app",
		Timings: Timings{Recovery: 5 * time.Second}})
	fixed := strings.Repeat("1c", 16)
	h.runToRunning(map[string]any{"jobId": fixed})
	h.jm.Restart()
	h.step(5*time.Second - time.Millisecond)
	h.expectLeaderless("/jobs/overview")
	h.step(time.Millisecond)
	if jobs := at(h.mustGet("/jobs"), "jobs").([]any); len(jobs) != 0 {
		t.Fatalf("jobs after a restart without HA: %v", jobs)
	}
	if records := tl.Jobs("ns/app"); len(records) != 1 || !records[0].LostAt.Equal(epoch.Add(300*time.Millisecond)) {
		t.Fatalf("timeline %+v", records)
	}
	h.run(map[string]any{"jobId": fixed}) // a new process has a new job result store
}

func TestCrashWithHARecoversAtOnce(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: haConfig(), Timings: Timings{Recovery: -1}})
	id := h.runToRunning(nil)
	trigger := h.savepoint(id, nil)
	h.jm.Crash()
	if status, _ := h.get("/jobs/" + id + "/savepoints/" + trigger); status != http.StatusNotFound {
		t.Fatalf("operation survived the crash: %d", status)
	}
	h.expectState(id, "INITIALIZING")
	h.step(300 * time.Millisecond)
	h.expectState(id, "RUNNING")
	// Never checkpointed: nothing to restore.
	if cp := h.mustGet("/jobs/" + id + "/checkpoints"); num(at(cp, "counts", "restored")) != 0 || at(cp, "latest", "restored") != nil {
		t.Fatalf("restored %v", cp["latest"])
	}
	h.jm.Restart() // Recovery: -1 is instant too
	h.expectState(id, "INITIALIZING")
}

// TestNewJobManagerRecoversFromHAStore replaces a JobManager by another with
// the same cluster id, as a new jobmanager pod does.
func TestNewJobManagerRecoversFromHAStore(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	tl, storage := NewTimeline(), NewStorage()
	mk := func(name string) *harness {
		jm := NewJobManager(Options{Clock: clk, Name: name, FlinkConfig: haConfig(), Timeline: tl, AppKey: "ns/app",
			Storage: storage, TaskManagers: 4})
		return &harness{t: t, clk: clk, jm: jm, srv: newServer(t, jm)}
	}
	old := mk("jm-0")
	sp := old.runToRunning(nil)
	trigger := old.savepoint(sp, nil)
	old.step(time.Second)
	loc := at(old.savepointStatus(sp, trigger), "operation", "location").(string)

	checkpointed := old.runToRunning(nil)
	old.step(10 * time.Second) // chk-1 of checkpointed
	canceled := old.runToRunning(nil)
	old.call("PATCH", "/jobs/"+canceled, nil)
	old.call("PATCH", "/jobs/"+sp, nil)
	old.step(time.Second)
	restored := old.runToRunning(map[string]any{"savepointPath": loc}) // no checkpoint before the JobManager ends
	old.jm.stop()

	clk.Step(time.Minute)
	h := mk("jm-1")
	h.step(300 * time.Millisecond)
	var ids []string
	for _, j := range h.jm.Jobs() {
		ids = append(ids, j.ID)
		if j.State != "RUNNING" {
			t.Fatalf("recovered job %+v", j)
		}
	}
	if strings.Join(ids, ",") != checkpointed+","+restored {
		t.Fatalf("recovered %v, want %s,%s in submission order", ids, checkpointed, restored)
	}
	if got := at(h.mustGet("/jobs/"+restored+"/checkpoints"), "latest", "restored"); at(got, "external_path") != loc || at(got, "is_savepoint") != true {
		t.Fatalf("job without checkpoints restored %v, want its savepoint", got)
	}
	if got := at(h.mustGet("/jobs/"+checkpointed+"/checkpoints"), "latest", "restored", "external_path"); got != ckpDir+"/"+checkpointed+"/chk-1" {
		t.Fatalf("checkpointed job restored %v", got)
	}

	// Finished job ids stay taken: the HA job result store outlives processes.
	for _, id := range []string{canceled, sp, restored} {
		status, m := h.post("/jars/"+jar+"/run", map[string]any{"jobId": id})
		if status != http.StatusBadRequest || !strings.Contains(errorText(m), "DuplicateJobSubmissionException: Job has already been submitted.") {
			t.Fatalf("resubmit %s: %d %v", id, status, m)
		}
	}

	records := tl.Jobs("ns/app")
	if len(records) != 4 {
		t.Fatalf("timeline has %d records, want one per job", len(records))
	}
	for _, r := range records {
		if !r.LostAt.IsZero() {
			t.Fatalf("HA job marked lost: %+v", r)
		}
		if r.JobID == checkpointed && r.JobManager != "jm-1" {
			t.Fatalf("recovered record names %s, want the recovering JobManager", r.JobManager)
		}
	}
	// The recovered jobs overlap each other again, from their recovery on,
	// as they did before the old JobManager ended; each is still one job.
	var open []Overlap
	for _, o := range tl.Overlaps("ns/app") {
		if o.To.IsZero() {
			open = append(open, o)
		}
	}
	if len(open) != 1 || open[0].First.JobID != checkpointed || open[0].Second.JobID != restored || !open[0].From.Equal(h.clk.Now().Add(-300*time.Millisecond)) {
		t.Fatalf("ongoing overlaps %+v", open)
	}
}

func TestHARecoveryFailsWhenTheCheckpointIsGone(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: haConfig()})
	id := h.runToRunning(nil)
	h.step(10*time.Second + 200*time.Millisecond)
	h.jm.Storage().Delete(ckpDir + "/" + id + "/chk-1")
	h.jm.Crash()
	h.step(100 * time.Millisecond)
	h.expectState(id, "FAILED")
	if root := h.mustGet("/jobs/" + id + "/exceptions")["root-exception"].(string); !strings.Contains(root, "FileNotFoundException") {
		t.Fatalf("root-exception %s", root)
	}
	h.jm.Crash()
	if jobs := h.jm.Jobs(); len(jobs) != 0 {
		t.Fatalf("a failed job was recovered again: %+v", jobs)
	}
}

func TestSuspendedJobIsNotAlive(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	tl, storage := NewTimeline(), NewStorage()
	mk := func(name, cluster string) *harness {
		jm := NewJobManager(Options{Clock: clk, Name: name, Timeline: tl, AppKey: "ns/app", Storage: storage, TaskManagers: 4,
			FlinkConfig: haConfig("kubernetes.cluster-id", cluster)})
		return &harness{t: t, clk: clk, jm: jm, srv: newServer(t, jm)}
	}
	blue := mk("blue-0", "blue")
	blue.runToRunning(nil)
	blue.jm.stop() // at 0.3s
	green := mk("green-0", "green")
	green.runToRunning(nil)
	if o := tl.Overlaps("ns/app"); len(o) != 0 {
		t.Fatalf("a suspended job overlaps: %+v", o)
	}
	clk.Step(time.Minute)
	mk("blue-1", "blue") // the suspended job comes back while green runs
	o := tl.Overlaps("ns/app")
	if len(o) != 1 || !o[0].From.Equal(epoch.Add(600*time.Millisecond+time.Minute)) || !o[0].To.IsZero() {
		t.Fatalf("overlaps %+v, want one open from blue's recovery", o)
	}
}

func TestHAKey(t *testing.T) {
	tests := []struct {
		name   string
		config map[string]string
		want   string
	}{
		{"no HA", map[string]string{"kubernetes.cluster-id": "c"}, ""},
		{"NONE", map[string]string{"high-availability.type": "NONE", "kubernetes.cluster-id": "c"}, ""},
		{"kubernetes.cluster-id first", map[string]string{"high-availability.type": "kubernetes",
			"kubernetes.cluster-id": "k", "high-availability.cluster-id": "h"}, "/k"},
		{"legacy key and HA cluster id", map[string]string{"high-availability": "zookeeper", "high-availability.cluster-id": "h"}, "/h"},
		{"name as the last resort", map[string]string{"high-availability": "kubernetes"}, "/jm"},
	}
	for _, tc := range tests {
		if got := haKey(Options{FlinkConfig: tc.config}, "jm"); got != tc.want {
			t.Errorf("%s: haKey = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A JobManager that recovers a job with HA holds the checkpoints the job had retained, as Flink's
// recovered checkpoint store does: newer ones subsume them, and the retention policy discards them
// as the job ends. Before, only the checkpoints a JobManager process took itself were discarded,
// and a job that failed under NO_EXTERNALIZED_CHECKPOINTS left those of its earlier processes.
func TestHARecoveryKeepsTheRetainedCheckpointsInTheStore(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: haConfig("state.checkpoints.num-retained", "3",
		"execution.checkpointing.externalized-checkpoint-retention", "NO_EXTERNALIZED_CHECKPOINTS"), Timings: Timings{Recovery: -1}})
	id := h.runToRunning(nil)
	h.step(30*time.Second + 200*time.Millisecond) // chk-1 to chk-3
	h.jm.Crash()
	h.step(300 * time.Millisecond)
	h.expectState(id, "RUNNING")
	h.step(20*time.Second + 200*time.Millisecond) // chk-4, chk-5
	checkpoints := func() (out []string) {
		for _, s := range h.jm.Storage().Snapshots() {
			if !s.Savepoint {
				out = append(out, s.Path)
			}
		}
		return out
	}
	if got, want := checkpoints(), []string{ckpDir + "/" + id + "/chk-3", ckpDir + "/" + id + "/chk-4", ckpDir + "/" + id + "/chk-5"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("retained after recovery %v, want %v", got, want)
	}
	h.call("PATCH", "/jobs/"+id+"?mode=cancel", nil)
	h.step(2 * time.Second)
	h.expectState(id, "CANCELED")
	if got := checkpoints(); len(got) != 0 {
		t.Fatalf("checkpoints left after the job ended under NO_EXTERNALIZED_CHECKPOINTS: %v", got)
	}
}
