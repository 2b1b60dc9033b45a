package flinksim

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// response is a handler's answer; body is marshalled to JSON. drop closes the
// connection instead, as when the answer is lost.
type response struct {
	status int
	body   any
	drop   bool
}

// reqCtx is one request as handlers see it. Handlers run under jm.mu after the
// model has been advanced to now.
type reqCtx struct {
	r      *http.Request
	params map[string]string
	body   []byte
	// upload is the form of POST /jars/upload, whose body is streamed rather than read into body.
	upload *uploadForm
	now    time.Time
}

type route struct {
	method   string
	segs     []string // literal segments, or ":name" parameters
	endpoint string
	handle   func(jm *JobManager, rc *reqCtx) response
	cached   bool // served through the job-level cache (web.refresh-interval)
}

var routes = buildRoutes()

func newRoute(method, path, endpoint string, h func(*JobManager, *reqCtx) response) route {
	return route{method: method, segs: strings.Split(strings.Trim(path, "/"), "/"), endpoint: endpoint, handle: h}
}

func buildRoutes() []route {
	rs := []route{
		newRoute("GET", "/config", EndpointConfig, (*JobManager).handleConfig),
		newRoute("GET", "/overview", EndpointOverview, (*JobManager).handleOverview),
		newRoute("GET", "/taskmanagers", EndpointTaskManagers, (*JobManager).handleTaskManagers),
		newRoute("GET", "/jobmanager/config", EndpointJobManagerConfig, (*JobManager).handleJobManagerConfig),
		newRoute("GET", "/jars", EndpointJars, (*JobManager).handleJars),
		newRoute("POST", "/jars/upload", EndpointJarUpload, (*JobManager).handleJarUpload),
		newRoute("POST", "/jars/:jarid/run", EndpointJarRun, (*JobManager).handleJarRun),
		newRoute("DELETE", "/jars/:jarid", EndpointJarDelete, (*JobManager).handleJarDelete),
		newRoute("GET", "/jobs", EndpointJobs, (*JobManager).handleJobs),
		newRoute("GET", "/jobs/overview", EndpointJobsOverview, (*JobManager).handleJobsOverview),
		newRoute("GET", "/jobs/:jobid", EndpointJob, (*JobManager).handleJobDetails),
		newRoute("PATCH", "/jobs/:jobid", EndpointCancel, (*JobManager).handleCancel),
		newRoute("GET", "/jobs/:jobid/status", EndpointJobStatus, (*JobManager).handleJobStatus),
		newRoute("GET", "/jobs/:jobid/config", EndpointJobConfig, (*JobManager).handleJobConfig),
		newRoute("GET", "/jobs/:jobid/plan", EndpointJobPlan, (*JobManager).handleJobPlan),
		newRoute("GET", "/jobs/:jobid/exceptions", EndpointExceptions, (*JobManager).handleExceptions),
		newRoute("GET", "/jobs/:jobid/execution-result", EndpointExecutionResult, (*JobManager).handleExecutionResult),
		newRoute("GET", "/jobs/:jobid/metrics", EndpointJobMetrics, (*JobManager).handleJobMetrics),
		newRoute("GET", "/jobs/:jobid/vertices/:vertexid/subtasks/metrics", EndpointSubtaskMetrics, (*JobManager).handleSubtaskMetrics),
		newRoute("GET", "/jobs/:jobid/checkpoints", EndpointCheckpoints, (*JobManager).handleCheckpoints),
		newRoute("GET", "/jobs/:jobid/checkpoints/config", EndpointCheckpointConfig, (*JobManager).handleCheckpointConfig),
		newRoute("GET", "/jobs/:jobid/checkpoints/details/:checkpointid", EndpointCheckpointDetail, (*JobManager).handleCheckpointDetails),
		newRoute("POST", "/jobs/:jobid/checkpoints", EndpointCheckpointTrig, (*JobManager).handleCheckpointTrigger),
		newRoute("GET", "/jobs/:jobid/checkpoints/:triggerid", EndpointCheckpointStatus, (*JobManager).handleCheckpointStatus),
		newRoute("POST", "/jobs/:jobid/savepoints", EndpointSavepointTrigger, (*JobManager).handleSavepointTrigger),
		newRoute("GET", "/jobs/:jobid/savepoints/:triggerid", EndpointSavepointStatus, (*JobManager).handleSavepointStatus),
		newRoute("POST", "/jobs/:jobid/stop", EndpointStop, (*JobManager).handleStop),
		newRoute("GET", "/jobs/:jobid/resource-requirements", EndpointResourceRequirements, (*JobManager).handleResourceRequirements),
		newRoute("PUT", "/jobs/:jobid/resource-requirements", EndpointResourceRequirementsUpdate, (*JobManager).handleUpdateResourceRequirements),
		newRoute("POST", "/savepoint-disposal", EndpointDisposal, (*JobManager).handleDisposal),
		newRoute("GET", "/savepoint-disposal/:triggerid", EndpointDisposalStatus, (*JobManager).handleDisposalStatus),
		newRoute("GET", "/applications/overview", EndpointApplications, (*JobManager).handleApplicationsOverview),
		newRoute("GET", "/applications/:applicationid", EndpointApplication, (*JobManager).handleApplicationDetails),
		newRoute("POST", "/applications/:applicationid/cancel", EndpointApplicationCancel, (*JobManager).handleApplicationCancel),
		newRoute("GET", "/applications/:applicationid/exceptions", EndpointApplicationErrors, (*JobManager).handleApplicationExceptions),
		newRoute("GET", "/applications/:applicationid/jobmanager/config", EndpointApplicationConfig, (*JobManager).handleApplicationJobManagerConfig),
		newRoute("POST", "/jars/:jarid/run-application", EndpointJarRunApplication, (*JobManager).handleJarRunApplication),
		newRoute("GET", "/jobs/:jobid/rescales/config", EndpointRescaleConfig, (*JobManager).handleRescaleConfig),
		newRoute("GET", "/jobs/:jobid/rescales/overview", EndpointRescalesOverview, (*JobManager).handleRescalesOverview),
		newRoute("GET", "/jobs/:jobid/rescales/history", EndpointRescalesHistory, (*JobManager).handleRescalesHistory),
		newRoute("GET", "/jobs/:jobid/rescales/summary", EndpointRescalesSummary, (*JobManager).handleRescalesSummary),
		newRoute("GET", "/jobs/:jobid/rescales/details/:rescaleuuid", EndpointRescaleDetails, (*JobManager).handleRescaleDetails),
	}
	for i := range rs {
		switch rs[i].endpoint {
		case EndpointJob, EndpointJobConfig, EndpointExceptions, EndpointJobPlan:
			// The checkpoint statistics have a copy of their own per job (checkpointStatsOf).
			rs[i].cached = true
		}
	}
	return rs
}

// match finds the route for a method and path. Like Flink's router, literal
// segments win over parameters, and a wrong method on a known path is not found.
func match(method string, segs []string) (*route, map[string]string) {
	var best *route
	bestLiterals := -1
	for i := range routes {
		rt := &routes[i]
		if rt.method != method || len(rt.segs) != len(segs) {
			continue
		}
		literals, ok := 0, true
		for k, s := range rt.segs {
			if strings.HasPrefix(s, ":") {
				continue
			}
			if s != segs[k] {
				ok = false
				break
			}
			literals++
		}
		if ok && literals > bestLiterals {
			best, bestLiterals = rt, literals
		}
	}
	if best == nil {
		return nil, nil
	}
	params := map[string]string{}
	for k, s := range best.segs {
		if strings.HasPrefix(s, ":") {
			params[s[1:]] = segs[k]
		}
	}
	return best, params
}

var hex32 = regexp.MustCompile(`^[0-9a-fA-F]{32}$`)

// checkParams validates path parameters the way Flink's MessagePathParameters do.
func checkParams(params map[string]string) *response {
	for name, v := range params {
		ok := true
		switch name {
		case "jobid", "triggerid", "vertexid", "applicationid", "rescaleuuid":
			ok = hex32.MatchString(v)
			params[name] = strings.ToLower(v)
		case "checkpointid":
			_, err := strconv.ParseInt(v, 10, 64)
			ok = err == nil
		}
		if !ok {
			resp := badParams("Cannot resolve path parameter (" + name + ") from value \"" + v + "\".")
			return &resp
		}
	}
	return nil
}

// Handler serves the Flink REST API at both /x and /v1/x.
func (jm *JobManager) Handler() http.Handler {
	return http.HandlerFunc(jm.serveHTTP)
}

func (jm *JobManager) serveHTTP(w http.ResponseWriter, req *http.Request) {
	path := req.URL.Path
	if path == "/v1" || strings.HasPrefix(path, "/v1/") {
		path = strings.TrimPrefix(path, "/v1")
	}
	rt, params := match(req.Method, strings.Split(strings.TrimPrefix(path, "/"), "/"))
	if rt == nil {
		writeResponse(w, routeNotFound(req))
		return
	}
	var body []byte
	var upload *uploadForm
	if rt.endpoint == EndpointJarUpload {
		upload = readUploadForm(req)
	} else {
		body, _ = io.ReadAll(io.LimitReader(req.Body, 64<<20))
	}
	fault := jm.decideFault(rt.endpoint, req.Method, req.URL.Path)
	if fault.hang {
		<-req.Context().Done()
		dropConnection(w)
		return
	}
	if fault.latency > 0 {
		time.Sleep(fault.latency)
	}
	if fault.status != 0 {
		writeResponse(w, injectedError(fault.status))
		return
	}
	var resp response
	if bad := checkParams(params); bad != nil {
		resp = *bad
	} else {
		resp = jm.dispatch(rt, &reqCtx{r: req, params: params, body: body, upload: upload})
	}
	if fault.drop || resp.drop {
		dropConnection(w)
		return
	}
	if fault.hostile.appliesTo(resp.status) {
		writeHostile(w, req, resp, rt.endpoint, fault.hostile)
		return
	}
	writeResponse(w, resp)
}

func (jm *JobManager) dispatch(rt *route, rc *reqCtx) response {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	rc.now = jm.advance()
	if rc.now.Before(jm.unavailableUntil) {
		return leaderElection()
	}
	if !rt.cached || jm.timings.JobCacheTTL <= 0 {
		return rt.handle(jm, rc)
	}
	key := rt.endpoint + " " + rc.r.URL.RequestURI()
	if c, ok := jm.cache[key]; ok && rc.now.Sub(c.at) < jm.timings.JobCacheTTL {
		return c.resp
	}
	resp := rt.handle(jm, rc)
	if resp.status == http.StatusOK {
		jm.cache[key] = cachedResponse{at: rc.now, resp: resp}
	}
	return resp
}

type cachedResponse struct {
	at   time.Time
	resp response
}

// dropConnection closes the TCP connection without an HTTP answer, which the
// client sees as EOF or a reset: a lost response or an unreachable JobManager.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// Without hijacking support, aborting the handler makes net/http drop the connection.
	panic(http.ErrAbortHandler)
}

func writeResponse(w http.ResponseWriter, resp response) {
	data, err := json.Marshal(resp.body)
	if err != nil {
		data = []byte(`{"errors":["Internal server error."]}`)
		resp.status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(resp.status)
	_, _ = w.Write(data)
}

func respondOK(body any) response       { return response{status: http.StatusOK, body: body} }
func respondAccepted(body any) response { return response{status: http.StatusAccepted, body: body} }

// errorBody is Flink's ErrorResponseBody with plain messages.
func errorBody(status int, messages ...string) response {
	return response{status: status, body: map[string][]string{"errors": messages}}
}

// restError is a RestHandlerException (or subclass): the whole stack trace is errors[0].
func restError(status int, class, message string, cause *throwable) response {
	return errorBody(status, newThrowable(class, message, cause).stackTrace())
}

// internalError is what Flink sends for any exception that is not a RestHandlerException.
// routeNotFound is Flink's answer to a request no REST route takes: a GET goes on to the web UI's
// static file handler (every Flink image has the web UI), which finds no such file; another method
// is the router's 404.
func routeNotFound(req *http.Request) response {
	if req.Method == http.MethodGet {
		return errorBody(http.StatusNotFound, "Unable to load requested file "+req.URL.Path+".")
	}
	return errorBody(http.StatusNotFound, "Not found: "+req.URL.RequestURI())
}

func internalError(t *throwable) response {
	return errorBody(http.StatusInternalServerError, "Internal server error.",
		"<Exception on server side:\n"+t.stackTrace()+"\nEnd of exception on server side>")
}

func badParams(detail string) response {
	return restError(http.StatusBadRequest, classRestHandler, "Bad request, could not parse parameters: "+detail,
		newThrowable(classHandlerRequest, detail, nil))
}

func badRequestFormat(class string, err error) response {
	return restError(http.StatusBadRequest, classRestHandler, "Request did not match expected format "+class+".",
		newThrowable("com.fasterxml.jackson.databind.JsonMappingException", err.Error(), nil))
}

func jobNotFoundResponse(jobID string) response {
	return restError(http.StatusNotFound, classNotFound, "Job "+jobID+" not found", jobNotFound(jobID))
}

// leaderElection is Flink's answer while no JobManager leader is known.
func leaderElection() response {
	return errorBody(http.StatusServiceUnavailable, "Service temporarily unavailable due to an ongoing leader election. Please refresh.")
}

func injectedError(status int) response {
	if status == http.StatusServiceUnavailable {
		return leaderElection()
	}
	rpc := newThrowable("org.apache.flink.runtime.rpc.exceptions.RpcException", "Simulated fault injected by flinksim.", nil)
	return internalError(newThrowable(classCompletion, rpc.String(), rpc))
}

// decodeBody parses a JSON request body without fixed properties (resource requirements); an empty
// body is {} as in Flink. Request classes go through JobManager.decodeRequest.
func decodeBody(body []byte, into any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	return json.Unmarshal(body, into)
}

// jsonDouble writes a float the way Jackson writes a Java double ("0.0", not "0").
func jsonDouble(f float64) json.Number {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return json.Number(s)
}
