package flinksim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// TestOperatorCallsMatchEachRelease drives a JobManager of each supported release through every
// call the operator makes, with the operator's own REST client as the operator fills its requests,
// and checks each request against that release's OpenAPI document (a property the release does
// not declare is refused before 1.20 and dropped after) and each answer against its response
// schema, property by property both ways.
func TestOperatorCallsMatchEachRelease(t *testing.T) {
	for _, version := range v1beta1.SupportedFlinkVersions {
		t.Run(version, func(t *testing.T) {
			spec := loadRelease(t, version)
			h := newHarness(t, Options{FlinkVersion: version, FlinkConfig: adaptiveFlinkConfig()})
			rec := &recorder{next: h.jm.Handler()}
			srv := httptest.NewServer(rec)
			t.Cleanup(srv.Close)
			driveOperatorCalls(t, h, client.New(client.DefaultConfig(), nil), srv.URL, version)
			checkExchanges(t, spec, version, rec.exchanges())
		})
	}
}

// operatorCalls are the endpoints of client.API's methods, by method.
var operatorCalls = map[string]string{
	"GetClusterOverview":            "GET /overview",
	"GetJobs":                       "GET /jobs",
	"GetJob":                        "GET /jobs/{jobid}",
	"GetJobExceptions":              "GET /jobs/{jobid}/exceptions",
	"GetCheckpoints":                "GET /jobs/{jobid}/checkpoints",
	"GetTaskManagers":               "GET /taskmanagers",
	"TriggerSavepoint":              "POST /jobs/{jobid}/savepoints",
	"GetSavepointStatus":            "GET /jobs/{jobid}/savepoints/{triggerid}",
	"CancelJob":                     "PATCH /jobs/{jobid}",
	"DisposeSavepoint":              "POST /savepoint-disposal",
	"SubmitJob":                     "POST /jars/{jarid}/run",
	"UploadJar":                     "POST /jars/upload",
	"DeleteJar":                     "DELETE /jars/{jarid}",
	"GetJobResourceRequirements":    "GET /jobs/{jobid}/resource-requirements",
	"UpdateJobResourceRequirements": "PUT /jobs/{jobid}/resource-requirements",
	"TriggerCheckpoint":             "POST /jobs/{jobid}/checkpoints",
	"GetCheckpointStatus":           "GET /jobs/{jobid}/checkpoints/{triggerid}",
	"GetCheckpointDetails":          "GET /jobs/{jobid}/checkpoints/details/{checkpointid}",
	"VertexMetricNames":             "GET /jobs/{jobid}/vertices/{vertexid}/subtasks/metrics",
	"VertexMetrics":                 "GET /jobs/{jobid}/vertices/{vertexid}/subtasks/metrics",
	"GetApplications":               "GET /applications/overview",
	"GetApplication":                "GET /applications/{applicationid}",
}

// callsSince are the calls only some releases have, with the first that does: the operator makes
// them only there.
var callsSince = map[string][2]int{"GetApplications": {2, 3}, "GetApplication": {2, 3}}

// releaseHas tells whether a release has a call of the operator's.
func releaseHas(version, method string) bool {
	since, limited := callsSince[method]
	return !limited || flinkAtLeast(version, since[0], since[1])
}

// driveOperatorCalls makes every call of client.API, each in the states whose answers differ: a
// job running with checkpoints, savepoints and a task failure behind it, one restored from a
// savepoint and cancelled, and one that failed to start.
func driveOperatorCalls(t *testing.T, h *harness, c *client.Client, url, version string) {
	api := reflect.TypeOf((*client.API)(nil)).Elem()
	for i := range api.NumMethod() {
		if _, ok := operatorCalls[api.Method(i).Name]; !ok {
			t.Fatalf("operatorCalls does not list client.API's %s: list its endpoint and make the call here", api.Method(i).Name)
		}
	}
	ctx := context.Background()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s on Flink %s: %v", what, version, err)
		}
	}
	_, err := c.GetClusterOverview(ctx, url)
	must("GetClusterOverview", err)
	_, err = c.GetTaskManagers(ctx, url)
	must("GetTaskManagers", err)
	jarID, err := c.UploadJar(ctx, url, "session-job.jar", strings.NewReader("PK\x03\x04"))
	must("UploadJar", err)

	// Everything a submission can carry, as the operator fills it, and the claim mode under the
	// release's name for it.
	submit := client.SubmitJobRequest{EntryClass: "org.apache.flink.WordCount", ProgramArgsList: []string{"--input", "a b"},
		Parallelism: 2, JobID: strings.Repeat("a1", 16), AllowNonRestoredState: true, ClaimMode: "NO_CLAIM",
		FlinkConfiguration: map[string]string{"pipeline.name": "wordcount"}, FlinkVersion: version}
	first, err := c.SubmitJob(ctx, url, jarID, submit)
	must("SubmitJob", err)
	h.step(time.Second)
	h.step(10*time.Second + 200*time.Millisecond) // a completed checkpoint
	_, err = c.GetJobs(ctx, url)
	must("GetJobs", err)

	trigger, err := c.TriggerSavepoint(ctx, url, first, client.SavepointRequest{TriggerID: strings.Repeat("b2", 16),
		FormatType: "CANONICAL", FlinkVersion: version})
	must("TriggerSavepoint", err)
	_, err = c.GetSavepointStatus(ctx, url, first, trigger) // in progress
	must("GetSavepointStatus", err)
	h.step(time.Second)
	sp, err := c.GetSavepointStatus(ctx, url, first, trigger)
	must("GetSavepointStatus", err)
	cpTrigger, err := c.TriggerCheckpoint(ctx, url, first, client.CheckpointRequest{CheckpointType: "CONFIGURED",
		TriggerID: strings.Repeat("c3", 16)})
	must("TriggerCheckpoint", err)
	_, err = c.GetCheckpointStatus(ctx, url, first, cpTrigger) // in progress
	must("GetCheckpointStatus", err)
	h.step(time.Second)
	cp, err := c.GetCheckpointStatus(ctx, url, first, cpTrigger)
	must("GetCheckpointStatus", err)
	if !cp.Succeeded() {
		t.Fatalf("the manual checkpoint did not complete: %+v", cp)
	}
	_, err = c.GetCheckpointDetails(ctx, url, first, cp.CheckpointID)
	must("GetCheckpointDetails", err)
	reqs, err := c.GetJobResourceRequirements(ctx, url, first)
	must("GetJobResourceRequirements", err)
	must("UpdateJobResourceRequirements", c.UpdateJobResourceRequirements(ctx, url, first, reqs))
	running, err := c.GetJob(ctx, url, first)
	must("GetJob", err)
	names, err := c.VertexMetricNames(ctx, url, first, running.Vertices[0].ID)
	must("VertexMetricNames", err)
	_, err = c.VertexMetrics(ctx, url, first, running.Vertices[0].ID, names)
	must("VertexMetrics", err)
	h.jm.FailTasksNow(first) // a task failure in the exception history
	h.step(time.Second)
	_, err = c.GetJob(ctx, url, first)
	must("GetJob", err)
	_, err = c.GetJobExceptions(ctx, url, first)
	must("GetJobExceptions", err)
	_, err = c.GetCheckpoints(ctx, url, first)
	must("GetCheckpoints", err)

	// A job restored from the savepoint, then cancelled with a savepoint and cancelled outright.
	submit.JobID, submit.SavepointPath = strings.Repeat("c3", 16), sp.Location
	second, err := c.SubmitJob(ctx, url, jarID, submit)
	must("SubmitJob", err)
	h.step(time.Second)
	_, err = c.GetCheckpoints(ctx, url, second)
	must("GetCheckpoints", err)
	_, err = c.TriggerSavepoint(ctx, url, second, client.SavepointRequest{CancelJob: true, FlinkVersion: version})
	must("TriggerSavepoint", err)
	must("CancelJob", c.CancelJob(ctx, url, first))
	h.step(time.Second)
	_, err = c.GetJob(ctx, url, first)
	must("GetJob", err)
	must("DisposeSavepoint", c.DisposeSavepoint(ctx, url, sp.Location))

	// A job whose savepoint is gone is refused in the run's answer, and listed FAILED.
	submit.JobID, submit.SavepointPath = strings.Repeat("d4", 16), spDir+"/savepoint-gone"
	failed := submit.JobID
	if _, err := c.SubmitJob(ctx, url, jarID, submit); err == nil {
		t.Errorf("SubmitJob from a missing savepoint on Flink %s: accepted, want refused", version)
	}
	h.step(time.Second)
	_, err = c.GetJob(ctx, url, failed)
	must("GetJob", err)
	_, err = c.GetJobExceptions(ctx, url, failed)
	must("GetJobExceptions", err)
	must("DeleteJar", c.DeleteJar(ctx, url, jarID))

	// 2.3: the applications of those jobs, one of them ended.
	if releaseHas(version, "GetApplications") {
		_, err = c.GetApplications(ctx, url)
		must("GetApplications", err)
		for _, id := range []string{first, failed} {
			_, err = c.GetApplication(ctx, url, id)
			must("GetApplication", err)
		}
	}
}

// exchange is one request and its answer.
type exchange struct {
	method, path, rawQuery, contentType string
	request                             []byte
	status                              int
	response                            []byte
}

// recorder passes requests to a JobManager and keeps each exchange.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []exchange
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	out := httptest.NewRecorder()
	r.next.ServeHTTP(out, req)
	for k, v := range out.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(out.Code)
	_, _ = w.Write(out.Body.Bytes())
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, exchange{method: req.Method, path: strings.TrimPrefix(req.URL.Path, "/v1"), rawQuery: req.URL.RawQuery,
		contentType: req.Header.Get("Content-Type"), request: body, status: out.Code, response: out.Body.Bytes()})
}

func (r *recorder) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func checkExchanges(t *testing.T, spec *openAPI, version string, exchanges []exchange) {
	t.Helper()
	called := map[string]bool{}
	for _, ex := range exchanges {
		template := spec.template(ex.method, ex.path)
		name := ex.method + " " + ex.path
		if template == "" {
			t.Errorf("%s: the release has no such endpoint", name)
			continue
		}
		called[ex.method+" "+template] = true
		for _, problem := range spec.requestProblems(ex, template) {
			t.Errorf("%s: request %s: %s", name, ex.request, problem)
		}
		schema, declared := spec.responseSchema(template, ex.method, ex.status)
		if !declared && ex.status >= 400 && isErrorBody(ex.response) {
			// Flink's documents declare no error answers; every handler's refusal is an ErrorResponseBody
			// (a 400 of /jars/:jarid/run refusing a restore, for one, as real Flink answers).
			continue
		}
		if !declared {
			t.Errorf("%s: status %d is not declared: %s", name, ex.status, ex.response)
			continue
		}
		doc, err := decodeJSON(ex.response)
		if err != nil {
			t.Errorf("%s: invalid JSON %q: %v", name, ex.response, err)
			continue
		}
		if schema == nil {
			continue
		}
		v := &validator{spec: spec, strict: true, closed: true, optional: omittedByFlink, dispatching: map[string]bool{}}
		v.validate(schema, "response", doc, "$")
		if len(v.errs) > 0 {
			t.Errorf("%s: the answer does not match the release's schema:\n  %s\nbody: %s", name, strings.Join(v.errs, "\n  "), ex.response)
		}
	}
	for method, call := range operatorCalls {
		if !called[call] && releaseHas(version, method) {
			t.Errorf("%s (%s) was not exercised", call, method)
		}
	}
}

// template is the release's path template that a request path matches, the one with the most
// literal segments when several do (/jobs/overview before /jobs/{jobid}); "" when none does.
func (s *openAPI) template(method, path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	best, bestLiterals := "", -1
	for tmpl, item := range s.paths {
		if _, has := item.(map[string]any)[strings.ToLower(method)]; !has {
			continue
		}
		parts := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(parts) != len(segs) {
			continue
		}
		literals := 0
		for i, p := range parts {
			if strings.HasPrefix(p, "{") {
				continue
			}
			if p != segs[i] {
				literals = -1
				break
			}
			literals++
		}
		if literals > bestLiterals {
			best, bestLiterals = tmpl, literals
		}
	}
	return best
}

// requestProblems checks a request's query parameters and JSON body against the operation.
func (s *openAPI) requestProblems(ex exchange, template string) []string {
	op, _ := s.paths[template].(map[string]any)[strings.ToLower(ex.method)].(map[string]any)
	var problems []string
	declared := map[string]bool{}
	for _, p := range asList(op["parameters"]) {
		if p := asObject(p); p["in"] == "query" {
			declared[p["name"].(string)] = true
		}
	}
	for _, kv := range strings.Split(ex.rawQuery, "&") {
		if name, _, _ := strings.Cut(kv, "="); name != "" && !declared[name] {
			problems = append(problems, fmt.Sprintf("query parameter %q is not declared", name))
		}
	}
	if !strings.HasPrefix(ex.contentType, "application/json") || len(bytes.TrimSpace(ex.request)) == 0 {
		return problems
	}
	body, err := decodeJSON(ex.request)
	if err != nil {
		return append(problems, "invalid JSON: "+err.Error())
	}
	content, _ := asObject(op["requestBody"])["content"].(map[string]any)
	schema, _ := asObject(content["application/json"])["schema"].(map[string]any)
	if schema == nil {
		if len(asObject(body)) > 0 {
			problems = append(problems, "the operation takes no body")
		}
		return problems
	}
	v := &validator{spec: s, closed: true, dispatching: map[string]bool{}}
	v.validate(schema, "request", body, "$")
	return append(problems, v.errs...)
}

// Each release's document holds the differences the simulator and the client act on: checked here
// so that they are read from the documents, not assumed.
func TestReleaseDocumentsDiffer(t *testing.T) {
	tests := []struct {
		version, schema, body string
		wantErr               string
	}{
		{"1.18", "JarRunRequestBody", `{"claimMode":"NO_CLAIM"}`, `property "claimMode" not declared`},
		{"1.19", "JarRunRequestBody", `{"claimMode":"NO_CLAIM"}`, `property "claimMode" not declared`},
		{"1.19", "JarRunRequestBody", `{"restoreMode":"NO_CLAIM","programArgs":"--a b"}`, ""},
		{"1.20", "JarRunRequestBody", `{"claimMode":"NO_CLAIM","restoreMode":"NO_CLAIM"}`, ""},
		{"2.0", "JarRunRequestBody", `{"programArgs":"--a b"}`, `property "programArgs" not declared`},
		{"2.2", "JarRunRequestBody", `{"programArgs":"--a b"}`, `property "programArgs" not declared`},
		{"2.2", "JarRunRequestBody", `{"claimMode":"LEGACY","restoreMode":"CLAIM","flinkConfiguration":{"a":"b"}}`, ""},
		{"1.18", "SavepointTriggerRequestBody", `{"triggerId":"` + strings.Repeat("ab", 16) + `","formatType":"NATIVE"}`, ""},
		{"1.18", "RootExceptionInfo", `{"endpoint":"x"}`, `property "endpoint" not declared`},
		{"1.19", "JobDetailsInfo", `{"job-type":"STREAMING"}`, `property "job-type" not declared`},
		{"2.0", "JobExceptionsInfoWithHistory", `{"root-exception":"x"}`, `property "root-exception" not declared`},
		{"2.0", "JobDetailsInfo", `{"pending-operators":0,"job-type":"STREAMING"}`, ""},
		// 2.3: applications, and what jobs say of theirs.
		{"2.2", "JarRunResponseBody", `{"applicationId":"` + strings.Repeat("ab", 16) + `"}`, `property "applicationId" not declared`},
		{"2.3", "JarRunResponseBody", `{"jobid":"` + strings.Repeat("ab", 16) + `","applicationId":"` + strings.Repeat("ab", 16) + `"}`, ""},
		{"2.2", "JobDetailsInfo", `{"application-id":"` + strings.Repeat("ab", 16) + `"}`, `property "application-id" not declared`},
		{"2.3", "JobDetailsInfo", `{"application-id":"` + strings.Repeat("ab", 16) + `","schedulerType":"Adaptive"}`, ""},
		{"2.3", "JobDetailsInfo", `{"schedulerType":"Reactive"}`, "not in enum"},
		{"2.2", "JobDetails", `{"jobType":"STREAMING"}`, `property "jobType" not declared`},
		{"2.3", "JobDetails", `{"jobType":"STREAMING","schedulerType":"Default"}`, ""},
		{"2.2", "TaskManagerInfo", `{"assignedTasks":2}`, `property "assignedTasks" not declared`},
		{"2.3", "TaskManagerInfo", `{"assignedTasks":2}`, ""},
		{"2.3", "JarRunApplicationRequestBody", `{"applicationId":"` + strings.Repeat("ab", 16) + `","jobId":"` + strings.Repeat("cd", 16) + `","claimMode":"NO_CLAIM"}`, ""},
		{"2.3", "JarRunApplicationRequestBody", `{"restoreMode":"NO_CLAIM"}`, `property "restoreMode" not declared`},
		// The job states did not change.
		{"2.3", "JobIdWithStatus", `{"id":"` + strings.Repeat("ab", 16) + `","status":"RECONCILING"}`, ""},
		{"2.3", "JobIdWithStatus", `{"id":"` + strings.Repeat("ab", 16) + `","status":"RERUNNING"}`, "not in enum"},
	}
	for _, tc := range tests {
		t.Run(tc.version+" "+tc.schema, func(t *testing.T) {
			spec := loadRelease(t, tc.version)
			doc, err := decodeJSON([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			v := &validator{spec: spec, closed: true, dispatching: map[string]bool{}}
			v.validate(ref(tc.schema), tc.schema, doc, "$")
			got := strings.Join(v.errs, "\n")
			if (tc.wantErr == "") != (got == "") || !strings.Contains(got, tc.wantErr) {
				t.Fatalf("errors %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func isErrorBody(body []byte) bool {
	var e struct {
		Errors []string `json:"errors"`
	}
	return json.Unmarshal(body, &e) == nil && len(e.Errors) > 0
}
