package flinksim

import (
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// omittedByFlink lists properties Flink legitimately leaves out (NON_NULL or
// NON_DEFAULT fields, REST.md §5.2, §5.7, §5.8, §5.19, §5.23).
var omittedByFlink = map[string]bool{
	"ClusterOverviewWithVersion.taskmanagers-blocked":     true,
	"ClusterOverviewWithVersion.slots-free-and-blocked":   true,
	"TaskManagerInfo.blocked":                             true,
	"RootExceptionInfo.taskName":                          true,
	"RootExceptionInfo.location":                          true,
	"RootExceptionInfo.endpoint":                          true,
	"RootExceptionInfo.taskManagerId":                     true,
	"JobExecutionResultResponseBody.job-execution-result": true,
	"JobResult.failure-cause":                             true,
	"JobResult.application-id":                            true,
	// 2.3: an exception entry names a job only when one failed (NON_NULL).
	"ApplicationExceptionInfo.jobId": true,
	"JobConfigInfo.execution-config": true,
	// 2.x: a streaming job has no stream graph; 2.1 and later describe the plan, where a source
	// has no inputs and an input no local strategy or caching.
	"JobDetailsInfo.stream-graph": true,
	"PlanNode.inputs":             true,
	"Input.local_strategy":        true,
	"Input.caching":               true,
	// Only the aggregations asked for (agg), and none in the list of metric names.
	"AggregatedMetric.min":  true,
	"AggregatedMetric.max":  true,
	"AggregatedMetric.avg":  true,
	"AggregatedMetric.sum":  true,
	"AggregatedMetric.skew": true,
}

// TestResponsesMatchOpenAPI drives a JobManager of each supported release through
// every kind of state the served endpoints can report and validates each body
// against that release's spec.
func TestResponsesMatchOpenAPI(t *testing.T) {
	for _, version := range v1beta1.SupportedFlinkVersions {
		t.Run(version, func(t *testing.T) { responsesMatchOpenAPI(t, version) })
	}
}

func responsesMatchOpenAPI(t *testing.T, version string) {
	spec := loadRelease(t, version)
	h := newHarness(t, Options{Jars: []string{jar, "0f1e_listed.jar"}, FlinkConfig: checkpointConfig(), FlinkVersion: version})

	a := h.runToRunning(map[string]any{"parallelism": 2})
	h.step(10*time.Second + 200*time.Millisecond) // chk-1
	spOK := h.savepoint(a, nil)
	h.step(time.Second)
	h.jm.SetFaults(Faults{FailSavepoints: true})
	spFailed := h.savepoint(a, nil)
	h.step(time.Second)
	h.jm.SetFaults(Faults{})
	h.jm.FailTasksNow(a) // restores chk-1, records a task exception
	h.step(time.Second)
	_, m := h.post("/jobs/"+a+"/checkpoints", nil)
	manual := m["request-id"].(string)
	h.step(200 * time.Millisecond)
	h.jm.SetFaults(Faults{HangSavepoints: true})
	spPending := h.savepoint(a, nil)
	h.jm.SetFaults(Faults{})
	cp := h.mustGet("/jobs/" + a + "/checkpoints")
	failedID := num(at(cp, "latest", "failed", "id"))

	b := h.runRefused(map[string]any{"savepointPath": "s3://missing/savepoint-1"})
	c := h.runToRunning(nil)
	h.call("PATCH", "/jobs/"+c, nil)
	h.step(time.Second)
	_, m = h.post("/savepoint-disposal", map[string]any{"savepoint-path": "s3://missing/x"})
	disposal := m["request-id"].(string)
	d := h.run(nil) // still INITIALIZING
	uploaded, doomed := h.upload("session-job.jar"), h.upload("doomed.jar")

	requests := []specRequest{
		{"GET", "/config", "/config", nil, 200},
		{"GET", "/overview", "/overview", nil, 200},
		{"GET", "/jobs", "/jobs", nil, 200},
		{"GET", "/jobs/overview", "/jobs/overview", nil, 200},
		{"GET", "/jobs/" + a, "/jobs/{jobid}", nil, 200},
		{"GET", "/jobs/" + b, "/jobs/{jobid}", nil, 200},
		{"GET", "/jobs/" + c, "/jobs/{jobid}", nil, 200},
		{"GET", "/jobs/" + d, "/jobs/{jobid}", nil, 200},
		{"GET", "/jobs/" + a + "/status", "/jobs/{jobid}/status", nil, 200},
		{"GET", "/jobs/" + a + "/config", "/jobs/{jobid}/config", nil, 200},
		{"GET", "/jobs/" + b + "/config", "/jobs/{jobid}/config", nil, 200},
		{"GET", "/jobs/" + a + "/plan", "/jobs/{jobid}/plan", nil, 200},
		{"GET", "/jobs/" + a + "/exceptions", "/jobs/{jobid}/exceptions", nil, 200},
		{"GET", "/jobs/" + b + "/exceptions", "/jobs/{jobid}/exceptions", nil, 200},
		{"GET", "/jobs/" + a + "/execution-result", "/jobs/{jobid}/execution-result", nil, 200},
		{"GET", "/jobs/" + b + "/execution-result", "/jobs/{jobid}/execution-result", nil, 200},
		{"GET", "/jobs/" + c + "/execution-result", "/jobs/{jobid}/execution-result", nil, 200},
		{"GET", "/jobs/" + a + "/metrics?get=numRestarts,numberOfCompletedCheckpoints", "/jobs/{jobid}/metrics", nil, 200},
		{"GET", "/jobs/" + a + "/checkpoints", "/jobs/{jobid}/checkpoints", nil, 200},
		{"GET", "/jobs/" + c + "/checkpoints", "/jobs/{jobid}/checkpoints", nil, 200},
		{"GET", "/jobs/" + a + "/checkpoints/config", "/jobs/{jobid}/checkpoints/config", nil, 200},
		{"GET", "/jobs/" + a + "/checkpoints/details/1", "/jobs/{jobid}/checkpoints/details/{checkpointid}", nil, 200},
		{"GET", "/jobs/" + a + "/checkpoints/details/" + itoa(int(failedID)), "/jobs/{jobid}/checkpoints/details/{checkpointid}", nil, 200},
		{"GET", "/jobs/" + a + "/checkpoints/" + manual, "/jobs/{jobid}/checkpoints/{triggerid}", nil, 200},
		{"GET", "/jobs/" + a + "/savepoints/" + spOK, "/jobs/{jobid}/savepoints/{triggerid}", nil, 200},
		{"GET", "/jobs/" + a + "/savepoints/" + spFailed, "/jobs/{jobid}/savepoints/{triggerid}", nil, 200},
		{"GET", "/jobs/" + a + "/savepoints/" + spPending, "/jobs/{jobid}/savepoints/{triggerid}", nil, 200},
		{"GET", "/savepoint-disposal/" + disposal, "/savepoint-disposal/{triggerid}", nil, 200},
		{"GET", "/jars", "/jars", nil, 200},
		{"GET", "/taskmanagers", "/taskmanagers", nil, 200},
		{"GET", "/jobmanager/config", "/jobmanager/config", nil, 200},
		{"POST", "/jobs/" + a + "/checkpoints", "/jobs/{jobid}/checkpoints", map[string]any{}, 202},
		{"POST", "/jobs/" + a + "/savepoints", "/jobs/{jobid}/savepoints", map[string]any{"cancel-job": false}, 202},
		{"POST", "/jobs/" + a + "/stop", "/jobs/{jobid}/stop", map[string]any{"drain": false}, 202},
		{"POST", "/savepoint-disposal", "/savepoint-disposal", map[string]any{"savepoint-path": "s3://x"}, 200},
		{"POST", "/jars/" + jar + "/run", "/jars/{jarid}/run", map[string]any{}, 200},
		{"POST", "/jars/upload", "/jars/upload", jarUpload("another.jar"), 200},
		{"POST", "/jars/" + uploaded + "/run", "/jars/{jarid}/run", map[string]any{"programArgsList": []string{"--x", "1"}}, 200},
		{"DELETE", "/jars/" + doomed, "/jars/{jarid}", nil, 200},
		{"PATCH", "/jobs/" + a + "?mode=cancel", "/jobs/{jobid}", nil, 202},
	}
	checkAgainstSpec(t, spec, h, requests)
}

// TestAdaptiveSchedulerResponsesMatchOpenAPI covers the endpoints that only
// the adaptive scheduler answers successfully, on each supported release.
func TestAdaptiveSchedulerResponsesMatchOpenAPI(t *testing.T) {
	for _, version := range v1beta1.SupportedFlinkVersions {
		t.Run(version, func(t *testing.T) { adaptiveResponsesMatchOpenAPI(t, version) })
	}
}

func adaptiveResponsesMatchOpenAPI(t *testing.T, version string) {
	spec := loadRelease(t, version)
	h := newHarness(t, Options{FlinkConfig: adaptiveFlinkConfig(), FlinkVersion: version})
	a := h.runToRunning(map[string]any{"parallelism": 2})
	checkAgainstSpec(t, spec, h, []specRequest{
		{"GET", "/jobs/" + a + "/resource-requirements", "/jobs/{jobid}/resource-requirements", nil, 200},
		{"PUT", "/jobs/" + a + "/resource-requirements", "/jobs/{jobid}/resource-requirements", h.requirements(a, 1, 3), 200},
		{"GET", "/jobs/" + a, "/jobs/{jobid}", nil, 200},
	})
	h.step(31 * time.Second) // rescaling
	checkAgainstSpec(t, spec, h, []specRequest{
		{"GET", "/jobs/" + a, "/jobs/{jobid}", nil, 200},
		{"GET", "/jobs/overview", "/jobs/overview", nil, 200},
		{"GET", "/jobs/" + a + "/checkpoints", "/jobs/{jobid}/checkpoints", nil, 200},
	})
}

// TestLoadResponsesMatchOpenAPI covers what a job running a Load answers: its vertices, and their
// subtasks' metrics listed, aggregated as asked, and unknown.
func TestLoadResponsesMatchOpenAPI(t *testing.T) {
	for _, version := range v1beta1.SupportedFlinkVersions {
		t.Run(version, func(t *testing.T) {
			spec := loadRelease(t, version)
			h := newHarness(t, Options{FlinkVersion: version})
			l := pipeline(Constant(2000))
			l.Vertices[0].Partitions, l.Noise = 3, 0.05
			h.setLoad(l)
			a := h.runToRunning(map[string]any{"parallelism": 2})
			h.step(10 * time.Second)
			const tmpl = "/jobs/{jobid}/vertices/{vertexid}/subtasks/metrics"
			metrics := "/jobs/" + a + "/vertices/" + h.jobInfo(a).VertexIDs[0] + "/subtasks/metrics"
			checkAgainstSpec(t, spec, h, []specRequest{
				{"GET", "/jobs/" + a, "/jobs/{jobid}", nil, 200},
				{"GET", "/jobs/" + a + "/plan", "/jobs/{jobid}/plan", nil, 200},
				{"GET", metrics, tmpl, nil, 200},
				{"GET", metrics + "?get=busyTimeMsPerSecond,Source__Orders.pendingRecords", tmpl, nil, 200},
				{"GET", metrics + "?get=busyTimeMsPerSecond&agg=min,max,avg,sum", tmpl, nil, 200},
				{"GET", metrics + "?get=busyTimeMsPerSecond,unknown", tmpl, nil, 200},
			})
		})
	}
}

// specRequest is one request whose answer is validated against Flink's spec.
type specRequest struct {
	method, path, template string
	body                   any
	status                 int
}

func checkAgainstSpec(t *testing.T, spec *openAPI, h *harness, requests []specRequest) {
	t.Helper()
	for _, rq := range requests {
		t.Run(rq.method+" "+rq.path, func(t *testing.T) {
			status, raw, _ := h.callRaw(rq.method, "/v1"+rq.path, rq.body)
			if status != rq.status {
				t.Fatalf("status %d, want %d: %s", status, rq.status, raw)
			}
			schema, declared := spec.responseSchema(rq.template, rq.method, status)
			if !declared {
				t.Fatalf("status %d is not declared for %s %s", status, rq.method, rq.template)
			}
			doc, err := decodeJSON(raw)
			if err != nil {
				t.Fatalf("invalid JSON: %v", err)
			}
			if schema == nil {
				return
			}
			v := &validator{spec: spec, strict: true, closed: true, optional: omittedByFlink, dispatching: map[string]bool{}}
			v.validate(schema, "response", doc, "$")
			if len(v.errs) > 0 {
				t.Fatalf("%s does not match the spec:\n  %s\nbody: %s", rq.path, strings.Join(v.errs, "\n  "), raw)
			}
		})
	}
}

// TestValidatorCatchesMismatches keeps the validator honest.
func TestValidatorCatchesMismatches(t *testing.T) {
	spec := loadOpenAPI(t)
	tests := []struct {
		name, schema, body string
		wantErr            string
	}{
		{"wrong type", "JobStatusInfo", `{"status":1}`, "want string"},
		{"bad enum", "JobStatusInfo", `{"status":"SLEEPING"}`, "not in enum"},
		{"missing property", "JobIdWithStatus", `{"id":"0123456789abcdef0123456789abcdef"}`, `missing property "status"`},
		{"bad pattern", "JobIdWithStatus", `{"id":"nope","status":"RUNNING"}`, "does not match"},
		{"double is not an integer", "Counts", `{"completed":1.5,"failed":0,"in_progress":0,"restored":0,"total":0}`, "want integer"},
		{"missing discriminator target", "CheckpointStatistics", `{"className":"weird"}`, "names no subtype"},
		{"required className", "CheckpointStatistics", `{"className":"completed"}`, "missing property"},
		{"no oneOf alternative", "AsynchronousOperationResult", `{"status":{"id":"COMPLETED"},"operation":{"nope":1}}`, "matches no oneOf"},
		{"resource requirements with a string bound", "JobResourceRequirementsBody",
			`{"0123456789abcdef0123456789abcdef":{"parallelism":{"lowerBound":"1","upperBound":2}}}`, "want integer"},
		{"an aggregation that is no number", "AggregatedMetricsResponseBody", `[{"id":"busyTimeMsPerSecond","max":"1000"}]`, "want number"},
		{"valid", "JobIdWithStatus", `{"id":"0123456789abcdef0123456789abcdef","status":"RUNNING"}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := decodeJSON([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			v := &validator{spec: spec, strict: true, optional: omittedByFlink, dispatching: map[string]bool{}}
			v.validate(ref(tc.schema), "", doc, "$")
			got := strings.Join(v.errs, "\n")
			if (tc.wantErr == "") != (got == "") || !strings.Contains(got, tc.wantErr) {
				t.Fatalf("errors %q, want %q", got, tc.wantErr)
			}
		})
	}
}
