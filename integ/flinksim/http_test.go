package flinksim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRESTConventions(t *testing.T) {
	h := newHarness(t, Options{FlinkConfig: map[string]string{
		"state.savepoints.dir": spDir, "taskmanager.numberOfTaskSlots": "2", "s3.secret-key": "hunter2",
	}})
	id := h.runToRunning(nil)
	tests := []struct {
		name       string
		method     string
		path       string
		body       any
		wantStatus int
		wantBody   string // substring of the raw body
	}{
		{"plain path", "GET", "/overview", nil, 200, `"flink-version":"1.20.0"`},
		{"v1 prefix", "GET", "/v1/overview", nil, 200, `"flink-version":"1.20.0"`},
		{"GET with a JSON body, as the Java client sends", "GET", "/v1/jobs/overview", map[string]any{}, 200, `"jid":"` + id},
		{"unknown route: the web UI finds no such file", "GET", "/v1/foo?x=1", nil, 404, `{"errors":["Unable to load requested file /v1/foo."]}`},
		{"unsupported version prefix", "GET", "/v2/overview", nil, 404, `Unable to load requested file /v2/overview.`},
		{"unknown route of another method", "POST", "/v1/foo?x=1", nil, 404, `{"errors":["Not found: /v1/foo?x=1"]}`},
		{"wrong method on a known path", "DELETE", "/jobs/" + id, nil, 404, `Not found: /jobs/` + id},
		{"malformed job id", "GET", "/jobs/x", nil, 400,
			`Bad request, could not parse parameters: Cannot resolve path parameter (jobid) from value \"x\".`},
		{"malformed trigger id", "GET", "/jobs/" + id + "/savepoints/zz", nil, 400,
			`Cannot resolve path parameter (triggerid) from value \"zz\".`},
		{"upper-case job id is accepted", "GET", "/jobs/" + strings.ToUpper(id), nil, 200, `"jid":"` + id},
		{"literal route wins over parameter", "GET", "/jobs/overview", nil, 200, `"jobs":[`},
		{"checkpoints/config is not a trigger id", "GET", "/jobs/" + id + "/checkpoints/config", nil, 200, `"mode":"exactly_once"`},
		{"dashboard config", "GET", "/config", nil, 200, `"flink-revision":"` + flinkRevision},
		{"job list", "GET", "/jobs", nil, 200, `{"jobs":[{"id":"` + id + `","status":"RUNNING"}]}`},
		{"job plan", "GET", "/jobs/" + id + "/plan", nil, 200, `"type":"STREAMING"`},
		{"execution result in progress", "GET", "/jobs/" + id + "/execution-result", nil, 200, `{"status":{"id":"IN_PROGRESS"}}`},
		{"metrics of an unknown job are empty", "GET", "/jobs/" + strings.Repeat("ab", 16) + "/metrics?get=numRestarts", nil, 200, `[]`},
		{"jobmanager config masks secrets", "GET", "/jobmanager/config", nil, 200, `{"key":"s3.secret-key","value":"******"}`},
		{"exceptions of a healthy job", "GET", "/jobs/" + id + "/exceptions", nil, 200,
			`{"all-exceptions":[],"exceptionHistory":{"entries":[],"truncated":false},"root-exception":null,"timestamp":null,"truncated":false}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, raw, header := h.callRaw(tc.method, tc.path, tc.body)
			if status != tc.wantStatus || !strings.Contains(string(raw), tc.wantBody) {
				t.Fatalf("%s %s: %d %s\nwant %d containing %s", tc.method, tc.path, status, raw, tc.wantStatus, tc.wantBody)
			}
			if ct := header.Get("Content-Type"); ct != "application/json; charset=UTF-8" {
				t.Fatalf("content type %q", ct)
			}
			if !json.Valid(raw) {
				t.Fatalf("invalid JSON %s", raw)
			}
		})
	}
}

func TestJars(t *testing.T) {
	h := newHarness(t, Options{Jars: []string{"baked.jar", "1234_listed.jar"}})
	files := h.mustGet("/jars")["files"].([]any)
	if len(files) != 1 || at(files, 0, "id") != "1234_listed.jar" || at(files, 0, "name") != "listed.jar" {
		t.Fatalf("files %v", files)
	}

	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("jarfile", "job.jar")
	_, _ = fw.Write([]byte("PK"))
	_ = mw.Close()
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/jars/upload", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var up map[string]string
	_ = json.Unmarshal(raw, &up)
	if resp.StatusCode != 200 || up["status"] != "success" || !strings.HasSuffix(up["filename"], "_job.jar") {
		t.Fatalf("upload %d %s", resp.StatusCode, raw)
	}
	jarID := up["filename"][strings.LastIndex(up["filename"], "/")+1:]
	if status, m := h.post("/jars/"+jarID+"/run", nil); status != 200 {
		t.Fatalf("run uploaded jar: %d %v", status, m)
	}
	if status, _ := h.post("/jars/baked.jar/run", nil); status != 200 {
		t.Fatalf("run baked jar: %d", status)
	}
	if len(h.mustGet("/jars")["files"].([]any)) != 2 {
		t.Fatal("uploaded jar not listed")
	}
	if status, _ := h.call("DELETE", "/jars/"+jarID, nil); status != 200 {
		t.Fatalf("delete %d", status)
	}
	if status, m := h.call("DELETE", "/jars/"+jarID, nil); status != 400 ||
		!strings.Contains(errorText(m.(map[string]any)), "does not exist in") {
		t.Fatalf("second delete %d %v", status, m)
	}
	if status, _ := h.post("/jars/"+jarID+"/run", nil); status != 500 {
		t.Fatalf("run deleted jar: %d", status)
	}
}

func TestJobCacheServesStaleJobDetails(t *testing.T) {
	h := newHarness(t, Options{Timings: Timings{JobCacheTTL: 3 * time.Second}})
	id := h.runToRunning(nil)
	h.call("PATCH", "/jobs/"+id, nil)
	h.step(time.Second)
	if got := h.state(id); got != "RUNNING" {
		t.Fatalf("cached state %s, want the stale RUNNING", got)
	}
	// /jobs/overview and /jobs/:id/status ask the Dispatcher directly.
	if got := at(h.mustGet("/jobs/overview"), "jobs", 0, "state"); got != "CANCELED" {
		t.Fatalf("overview state %v", got)
	}
	h.step(2 * time.Second)
	h.expectState(id, "CANCELED")
}

// Flink answers a job's checkpoint statistics, /checkpoints and each checkpoint's details alike,
// from one copy of them taken at most the cache's time ago: a savepoint completed since is in
// neither, and the details of its id are a 404 until the copy is taken again.
func TestJobCacheServesOneCopyOfTheCheckpointStatistics(t *testing.T) {
	h := newHarness(t, Options{Timings: Timings{JobCacheTTL: 3 * time.Second}})
	id := h.runToRunning(nil)
	if got := at(h.mustGet("/jobs/"+id+"/checkpoints"), "latest", "savepoint"); got != nil {
		t.Fatalf("a savepoint before any was taken: %v", got)
	}
	trigger := h.savepoint(id, nil)
	h.step(1500 * time.Millisecond)
	if got := at(h.savepointStatus(id, trigger), "status", "id"); got != "COMPLETED" {
		t.Fatalf("savepoint %v", got)
	}
	stats := h.mustGet("/jobs/" + id + "/checkpoints")
	if got := at(stats, "latest", "savepoint"); got != nil {
		t.Fatalf("the statistics of 1.5 s ago show the savepoint: %v", got)
	}
	if status, m := h.get("/jobs/" + id + "/checkpoints/details/1"); status != http.StatusNotFound {
		t.Fatalf("the details of a checkpoint the copy does not hold: %d %v", status, m)
	}
	h.step(2 * time.Second)
	sp := at(h.mustGet("/jobs/"+id+"/checkpoints"), "latest", "savepoint")
	if sp == nil {
		t.Fatal("the statistics do not show the savepoint once the copy is taken again")
	}
	if got := at(h.mustGet(fmt.Sprintf("/jobs/%s/checkpoints/details/%v", id, at(sp, "id"))), "status"); got != "COMPLETED" {
		t.Fatalf("the savepoint's details: %v", got)
	}
}

func TestCrashLosesEverythingButStorage(t *testing.T) {
	timeline := NewTimeline()
	h := newHarness(t, Options{Timeline: timeline, AppKey: "ns/app", Name: "jm-1"})
	id := h.runToRunning(nil)
	trigger := h.savepoint(id, nil)
	h.step(time.Second)
	loc := at(h.savepointStatus(id, trigger), "operation", "location").(string)
	h.jm.Crash()
	if status, _ := h.get("/jobs/" + id); status != 404 {
		t.Fatalf("job survived crash: %d", status)
	}
	if status, _ := h.get("/jobs/" + id + "/savepoints/" + trigger); status != 404 {
		t.Fatalf("operation survived crash: %d", status)
	}
	if len(h.jm.Jobs()) != 0 || num(h.mustGet("/overview")["jobs-running"]) != 0 {
		t.Fatal("jobs after crash")
	}
	if !h.jm.Storage().Exists(loc) {
		t.Fatal("savepoint lost in crash")
	}
	jobs := timeline.Jobs("ns/app")
	if len(jobs) != 1 || !jobs[0].LostAt.Equal(h.clk.Now()) {
		t.Fatalf("timeline %+v", jobs)
	}
}

func TestParseFlinkDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"10s", 10 * time.Second, false},
		{"500ms", 500 * time.Millisecond, false},
		{"60000", time.Minute, false},
		{"1 min", time.Minute, false},
		{"2 h", 2 * time.Hour, false},
		{"3d", 72 * time.Hour, false},
		{"10 SECONDS", 10 * time.Second, false},
		{"", 0, true},
		{"ten", 0, true},
		{"5 fortnights", 0, true},
	}
	for _, tc := range tests {
		got, err := parseFlinkDuration(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseFlinkDuration(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestNormalizePath(t *testing.T) {
	for in, want := range map[string]string{
		"s3://b/sp/":                 "s3://b/sp",
		"file:///flink/sp":           "file:/flink/sp",
		"/flink/sp":                  "file:/flink/sp",
		"hdfs://nn:8020/sp":          "hdfs://nn:8020/sp",
		"file:/flink/sp/savepoint-x": "file:/flink/sp/savepoint-x",
	} {
		if got := normalizePath(in); got != want {
			t.Errorf("normalizePath(%q) = %q, want %q", in, got, want)
		}
	}
}

// A session cluster runs several jobs from uploaded jars on one JobManager: they share its slots
// (a job without enough free slots waits with SCHEDULED tasks until another one frees them) and
// the Timeline keeps each job's states apart.
func TestJobsFromUploadedJarsShareTheSlots(t *testing.T) {
	tl := NewTimeline()
	h := newHarness(t, Options{TaskManagers: 2, SlotsPerTaskManager: 2, Timeline: tl, AppKey: "ns/session", Name: "session-jm"})
	runJar := func(jarID string, parallelism int) string {
		t.Helper()
		status, m := h.post("/jars/"+jarID+"/run", map[string]any{"parallelism": parallelism})
		if status != http.StatusOK {
			t.Fatalf("run %s: %d %v", jarID, status, m)
		}
		return m["jobid"].(string)
	}
	a := runJar(h.upload("a.jar"), 3)
	b := runJar(h.upload("b.jar"), 2)
	h.step(time.Second)

	h.expectState(a, "RUNNING")
	h.expectState(b, "RUNNING")
	if got := h.mustGet("/overview"); num(got["slots-available"]) != 1 {
		t.Fatalf("slots-available %v, want 1: only the first job is deployed", got["slots-available"])
	}
	if got := at(h.mustGet("/jobs/"+b), "vertices", 0, "status"); got != "SCHEDULED" {
		t.Fatalf("second job's vertex %v, want SCHEDULED while the first holds 3 of 4 slots", got)
	}

	h.call("PATCH", "/jobs/"+a, nil)
	h.step(time.Second)
	h.expectState(a, "CANCELED")
	if got := at(h.mustGet("/jobs/"+b), "vertices", 0, "status"); got != "RUNNING" {
		t.Fatalf("second job's vertex %v, want RUNNING once the first freed its slots", got)
	}

	jobs := tl.Jobs("ns/session")
	if len(jobs) != 2 {
		t.Fatalf("timeline jobs %+v, want both", jobs)
	}
	for _, j := range jobs {
		_, ended := j.AliveUntil()
		if want := j.JobID == a; ended != want {
			t.Errorf("job %s ended=%v in the timeline, want %v", j.JobID, ended, want)
		}
	}
}
