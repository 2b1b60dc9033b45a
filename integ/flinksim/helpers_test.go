package flinksim

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	spDir  = "s3://bucket/savepoints"
	ckpDir = "s3://bucket/checkpoints"
	jar    = "app.jar"
)

// harness is one JobManager on a fake clock, served over a real HTTP server.
type harness struct {
	t   *testing.T
	clk *clocktesting.FakeClock
	jm  *JobManager
	srv *httptest.Server
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	clk := clocktesting.NewFakeClock(epoch)
	opts.Clock = clk
	if opts.TaskManagers == 0 {
		opts.TaskManagers = 2
	}
	if opts.FlinkConfig == nil {
		opts.FlinkConfig = map[string]string{"state.savepoints.dir": spDir, "taskmanager.numberOfTaskSlots": "2"}
	}
	jm := NewJobManager(opts)
	return &harness{t: t, clk: clk, jm: jm, srv: newServer(t, jm)}
}

func newServer(t *testing.T, jm *JobManager) *httptest.Server {
	srv := httptest.NewServer(jm.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func (h *harness) step(d time.Duration) { h.clk.Step(d) }

// call sends a request and decodes the JSON answer (object or array).
func (h *harness) call(method, path string, body any) (int, any) {
	h.t.Helper()
	status, raw, _ := h.callRaw(method, path, body)
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		h.t.Fatalf("%s %s: invalid JSON %q: %v", method, path, raw, err)
	}
	return status, out
}

func (h *harness) callRaw(method, path string, body any) (int, []byte, http.Header) {
	h.t.Helper()
	var rd io.Reader
	contentType := "application/json"
	if up, ok := body.(jarUpload); ok {
		// Sent as Flink's web UI and curl -F "jarfile=@job.jar" send it.
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("jarfile", string(up))
		_, _ = fw.Write([]byte("PK\x03\x04"))
		_ = mw.Close()
		rd, contentType, body = &buf, mw.FormDataContentType(), nil
	}
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, resp.Header
}

// jarUpload, as the body of a call, uploads a jar of this file name as multipart/form-data.
type jarUpload string

// upload uploads a jar and returns the id Flink gave it.
func (h *harness) upload(name string) string {
	h.t.Helper()
	status, raw, _ := h.callRaw("POST", "/jars/upload", jarUpload(name))
	var out map[string]string
	if err := json.Unmarshal(raw, &out); err != nil || status != http.StatusOK {
		h.t.Fatalf("upload %s: %d %s", name, status, raw)
	}
	return out["filename"][strings.LastIndex(out["filename"], "/")+1:]
}

func (h *harness) get(path string) (int, map[string]any) {
	h.t.Helper()
	status, out := h.call("GET", path, nil)
	m, _ := out.(map[string]any)
	return status, m
}

func (h *harness) mustGet(path string) map[string]any {
	h.t.Helper()
	status, m := h.get(path)
	if status != http.StatusOK {
		h.t.Fatalf("GET %s: status %d body %v", path, status, m)
	}
	return m
}

func (h *harness) post(path string, body any) (int, map[string]any) {
	h.t.Helper()
	status, out := h.call("POST", path, body)
	m, _ := out.(map[string]any)
	return status, m
}

// run submits a job and returns its id.
func (h *harness) run(body map[string]any) string {
	h.t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	status, m := h.post("/jars/"+jar+"/run", body)
	if status != http.StatusOK {
		h.t.Fatalf("run: status %d body %v", status, m)
	}
	return m["jobid"].(string)
}

// runRefused submits a job whose restore cannot start, which Flink refuses in the answer while it
// lists the job FAILED; it returns the job's id.
func (h *harness) runRefused(body map[string]any) string {
	h.t.Helper()
	id := randomHex(32)
	body["jobId"] = id
	if status, m := h.post("/jars/"+jar+"/run", body); status != http.StatusBadRequest {
		h.t.Fatalf("run: status %d body %v; want it refused", status, m)
	}
	return id
}

// runToRunning submits a job and steps until its tasks run.
func (h *harness) runToRunning(body map[string]any) string {
	h.t.Helper()
	id := h.run(body)
	h.step(300 * time.Millisecond)
	h.expectState(id, "RUNNING")
	return id
}

func (h *harness) state(id string) string {
	h.t.Helper()
	return h.mustGet("/jobs/" + id)["state"].(string)
}

func (h *harness) expectState(id, want string) {
	h.t.Helper()
	if got := h.state(id); got != want {
		h.t.Fatalf("job %s: state %s, want %s", id, got, want)
	}
}

// savepoint triggers a savepoint and returns the trigger id.
func (h *harness) savepoint(id string, body map[string]any) string {
	h.t.Helper()
	status, m := h.post("/jobs/"+id+"/savepoints", body)
	if status != http.StatusAccepted {
		h.t.Fatalf("savepoint: status %d body %v", status, m)
	}
	return m["request-id"].(string)
}

func (h *harness) savepointStatus(id, trigger string) map[string]any {
	h.t.Helper()
	return h.mustGet("/jobs/" + id + "/savepoints/" + trigger)
}

// errorText joins the errors array of an error body.
func errorText(m map[string]any) string {
	errs, _ := m["errors"].([]any)
	var parts []string
	for _, e := range errs {
		s, _ := e.(string)
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n")
}

// at walks a decoded JSON document: at(m, "latest", "savepoint", "id").
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}
