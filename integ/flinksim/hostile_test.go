package flinksim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestHugeAnswerIsExactlyItsSizeWithTheRestOfTheRealAnswer(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	const size = 1 << 20
	h.jm.SetFaults(Faults{Hostile: map[string]HostileAnswer{EndpointJob: {Shape: ShapeHuge, Bytes: size}}})
	status, raw, header := h.callRaw("GET", "/jobs/"+id, nil)
	if status != http.StatusOK || len(raw) != size || header.Get("Content-Length") != fmt.Sprint(size) {
		t.Fatalf("status %d, %d bytes, Content-Length %s; want 200 and %d bytes", status, len(raw), header.Get("Content-Length"), size)
	}
	var job struct {
		JID      string `json:"jid"`
		State    string `json:"state"`
		Vertices []map[string]any
	}
	if err := json.Unmarshal(raw, &job); err != nil {
		t.Fatal(err)
	}
	// Each "{}," is 3 bytes: about a third of a million elements, the rest of the answer intact.
	if job.JID != id || job.State != "RUNNING" || len(job.Vertices) < size/3-1000 {
		t.Fatalf("jid %s state %s, %d vertices", job.JID, job.State, len(job.Vertices))
	}
	// Other endpoints answer as usual.
	if _, raw, _ := h.callRaw("GET", "/jobs/"+id+"/checkpoints", nil); len(raw) >= 4096 {
		t.Fatalf("/checkpoints answered %d bytes", len(raw))
	}
}

func TestHugeAnswerRepeatsItsElementAtAPath(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.runToRunning(nil)
	h.jm.SetFaults(Faults{Hostile: map[string]HostileAnswer{
		EndpointExceptions: {Shape: ShapeHuge, Bytes: 64 << 10, Element: `{"exceptionName":"x"}`},
	}})
	status, raw, _ := h.callRaw("GET", "/jobs/"+id+"/exceptions", nil)
	var ex struct {
		History struct {
			Entries   []map[string]string `json:"entries"`
			Truncated *bool               `json:"truncated"`
		} `json:"exceptionHistory"`
	}
	if err := json.Unmarshal(raw, &ex); err != nil || status != http.StatusOK || len(raw) != 64<<10 {
		t.Fatalf("status %d, %d bytes: %v", status, len(raw), err)
	}
	if n := len(ex.History.Entries); n < (64<<10)/22-100 || ex.History.Entries[n-1]["exceptionName"] != "x" {
		t.Fatalf("%d entries, last %v", n, ex.History.Entries[n-1])
	}
	if ex.History.Truncated != nil {
		t.Fatal("the filler sits beside the real member it replaces")
	}
}

func TestNestedAnswerNestsAsDeepAsItsSizeAllows(t *testing.T) {
	h := newHarness(t, Options{})
	const size = 1 << 20
	h.jm.SetFaults(Faults{Hostile: map[string]HostileAnswer{EndpointJobs: {Shape: ShapeNested, Bytes: size}}})
	status, raw, _ := h.callRaw("GET", "/jobs", nil)
	if status != http.StatusOK || len(raw) != size {
		t.Fatalf("status %d, %d bytes", status, len(raw))
	}
	body := strings.TrimRight(string(raw), " }")
	if !strings.HasPrefix(body, `{"jobs":[[[[`) || !strings.HasSuffix(body, "]]]]") {
		t.Fatalf("body %q…%q", body[:20], body[len(body)-20:])
	}
	if opens := strings.Count(body, "["); opens < size/2-20 || opens != strings.Count(body, "]") {
		t.Fatalf("%d [ and %d ]", opens, strings.Count(body, "]"))
	}
	// A small one is valid JSON (encoding/json refuses to nest beyond 10,000).
	h.jm.SetFaults(Faults{Hostile: map[string]HostileAnswer{EndpointJobs: {Shape: ShapeNested, Bytes: 1000}}})
	if _, raw, _ := h.callRaw("GET", "/jobs", nil); !json.Valid(raw) || len(raw) != 1000 {
		t.Fatalf("%d bytes, valid %v", len(raw), json.Valid(raw))
	}
}

func TestHostileAnswerWithoutShapePadsTheRealAnswerAndProcessesTheRequest(t *testing.T) {
	h := newHarness(t, Options{})
	h.jm.SetFaults(Faults{Hostile: map[string]HostileAnswer{AnyEndpoint: {Bytes: 10 << 10}}})
	status, raw, _ := h.callRaw("POST", "/jars/"+jar+"/run", map[string]any{})
	var out map[string]string
	if err := json.Unmarshal(raw, &out); err != nil || status != http.StatusOK || len(raw) != 10<<10 {
		t.Fatalf("status %d, %d bytes: %v", status, len(raw), err)
	}
	if jobs := h.jm.Jobs(); len(jobs) != 1 || jobs[0].ID != out["jobid"] {
		t.Fatalf("jobs %+v, answer %v", jobs, out)
	}
}

func TestHostileAnswerSuccessOnlyLeavesErrorsAlone(t *testing.T) {
	h := newHarness(t, Options{})
	h.jm.SetFaults(Faults{Hostile: map[string]HostileAnswer{EndpointJob: {Bytes: 10 << 10, SuccessOnly: true}}})
	missing := strings.Repeat("a", 32)
	if status, raw, _ := h.callRaw("GET", "/jobs/"+missing, nil); status != http.StatusNotFound || len(raw) >= 10<<10 {
		t.Fatalf("an unknown job: %d, %d bytes; want Flink's own 404", status, len(raw))
	}
	id := h.runToRunning(nil)
	if status, raw, _ := h.callRaw("GET", "/jobs/"+id, nil); status != http.StatusOK || len(raw) != 10<<10 {
		t.Fatalf("a job: %d, %d bytes; want the padded answer", status, len(raw))
	}
}

func TestHostileBodyOfAnAnswerThatIsNoObjectIsTheFillerWhole(t *testing.T) {
	body := hostileBody([]byte(`[1,2,3]`), EndpointJobs, HostileAnswer{Shape: ShapeHuge, Bytes: 100, Element: "7"})
	var out []int
	if err := json.Unmarshal(body, &out); err != nil || len(body) != 100 || len(out) != 49 {
		t.Fatalf("%q: %d elements, %v", body, len(out), err)
	}
	// An answer larger than Bytes keeps its members; the filler is then the shortest of its shape.
	body = hostileBody([]byte(`{"a":"`+strings.Repeat("x", 100)+`"}`), EndpointJobs, HostileAnswer{Shape: ShapeNested, Bytes: 10})
	if string(body) != `{"a":"`+strings.Repeat("x", 100)+`","jobs":[]}` {
		t.Fatalf("%s", body)
	}
}

func TestSlowDripSendsHeadersAtOnceAndTheBodyAtItsRate(t *testing.T) {
	h := newHarness(t, Options{})
	const size, rate = 200, 500
	h.jm.SetFaults(Faults{Hostile: map[string]HostileAnswer{EndpointOverview: {Bytes: size, BytesPerSecond: rate}}})
	start := time.Now()
	resp, err := h.srv.Client().Get(h.srv.URL + "/overview")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	headers := time.Since(start)
	if resp.ContentLength != size {
		t.Fatalf("Content-Length %d", resp.ContentLength)
	}
	raw, err := io.ReadAll(resp.Body)
	body := time.Since(start)
	if err != nil || len(raw) != size || !json.Valid(raw) {
		t.Fatalf("%d bytes: %v", len(raw), err)
	}
	// 200 bytes at 500 a second take 0.4 s; the headers come before the first of them.
	if body < 350*time.Millisecond || headers >= body-200*time.Millisecond {
		t.Fatalf("headers after %v, body after %v", headers, body)
	}

	// A client that stops waiting ends the answer.
	h.jm.SetFaults(Faults{Hostile: map[string]HostileAnswer{EndpointOverview: {Bytes: 1 << 20, BytesPerSecond: 2}}})
	client := *h.srv.Client()
	client.Timeout = 200 * time.Millisecond
	start = time.Now()
	resp, err = client.Get(h.srv.URL + "/overview")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("a 1 MiB answer at 2 bytes a second: %v after %v", err, time.Since(start))
	}
}

// A jar larger than any buffer the simulator would keep is uploaded whole, its content streamed
// past: fat jars of 200 MiB are common, and the soak uploads one.
func TestJarUploadStreamsTheJar(t *testing.T) {
	h := newHarness(t, Options{})
	const size = 80 << 20
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		fw, err := mw.CreateFormFile("jarfile", "fat.jar")
		if err == nil {
			_, err = io.CopyN(fw, zeros{}, size)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp, err := h.srv.Client().Post(h.srv.URL+"/jars/upload", mw.FormDataContentType(), pr)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	runtime.ReadMemStats(&after)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte(`_fat.jar"`)) {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 16<<20 {
		t.Fatalf("uploading %d MiB allocated %d MiB", size>>20, allocated>>20)
	}
	if files := at(h.mustGet("/jars"), "files").([]any); len(files) != 1 {
		t.Fatalf("jars %v", files)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
