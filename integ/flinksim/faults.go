package flinksim

import (
	"hash/fnv"
	mrand2 "math/rand/v2"
	"net/http"
	"time"
)

// Endpoint names for per-endpoint faults. AnyEndpoint applies to every endpoint
// that has no entry of its own.
const (
	AnyEndpoint              = "*"
	EndpointConfig           = "config"            // GET /config
	EndpointOverview         = "overview"          // GET /overview
	EndpointJobs             = "jobs"              // GET /jobs
	EndpointJobsOverview     = "jobs-overview"     // GET /jobs/overview
	EndpointJob              = "job"               // GET /jobs/:jobid
	EndpointJobStatus        = "job-status"        // GET /jobs/:jobid/status
	EndpointJobConfig        = "job-config"        // GET /jobs/:jobid/config
	EndpointJobPlan          = "job-plan"          // GET /jobs/:jobid/plan
	EndpointCancel           = "cancel"            // PATCH /jobs/:jobid
	EndpointExceptions       = "exceptions"        // GET /jobs/:jobid/exceptions
	EndpointExecutionResult  = "execution-result"  // GET /jobs/:jobid/execution-result
	EndpointJobMetrics       = "job-metrics"       // GET /jobs/:jobid/metrics
	EndpointCheckpoints      = "checkpoints"       // GET /jobs/:jobid/checkpoints
	EndpointCheckpointConfig = "checkpoint-config" // GET /jobs/:jobid/checkpoints/config
	EndpointCheckpointDetail = "checkpoint-detail" // GET /jobs/:jobid/checkpoints/details/:checkpointid
	EndpointCheckpointTrig   = "checkpoint-trigger"
	EndpointCheckpointStatus = "checkpoint-status"
	EndpointSavepointTrigger = "savepoint-trigger" // POST /jobs/:jobid/savepoints
	EndpointSavepointStatus  = "savepoint-status"  // GET /jobs/:jobid/savepoints/:triggerid
	EndpointStop             = "stop"              // POST /jobs/:jobid/stop
	EndpointJars             = "jars"              // GET /jars
	EndpointJarUpload        = "jar-upload"        // POST /jars/upload
	EndpointJarRun           = "jar-run"           // POST /jars/:jarid/run
	EndpointJarDelete        = "jar-delete"        // DELETE /jars/:jarid
	EndpointTaskManagers     = "taskmanagers"      // GET /taskmanagers
	EndpointJobManagerConfig = "jobmanager-config" // GET /jobmanager/config
	EndpointDisposal         = "savepoint-disposal"
	EndpointDisposalStatus   = "savepoint-disposal-status"

	EndpointSubtaskMetrics = "subtask-metrics" // GET /jobs/:jobid/vertices/:vertexid/subtasks/metrics

	EndpointResourceRequirements       = "resource-requirements"        // GET /jobs/:jobid/resource-requirements
	EndpointResourceRequirementsUpdate = "resource-requirements-update" // PUT /jobs/:jobid/resource-requirements

	// 2.3's applications and rescales.
	EndpointApplications      = "applications"        // GET /applications/overview
	EndpointApplication       = "application"         // GET /applications/:applicationid
	EndpointApplicationCancel = "application-cancel"  // POST /applications/:applicationid/cancel
	EndpointApplicationErrors = "application-errors"  // GET /applications/:applicationid/exceptions
	EndpointApplicationConfig = "application-config"  // GET /applications/:applicationid/jobmanager/config
	EndpointJarRunApplication = "jar-run-application" // POST /jars/:jarid/run-application
	EndpointRescaleConfig     = "rescale-config"      // GET /jobs/:jobid/rescales/config
	EndpointRescalesOverview  = "rescales-overview"   // GET /jobs/:jobid/rescales/overview
	EndpointRescalesHistory   = "rescales-history"    // GET /jobs/:jobid/rescales/history
	EndpointRescalesSummary   = "rescales-summary"    // GET /jobs/:jobid/rescales/summary
	EndpointRescaleDetails    = "rescale-details"     // GET /jobs/:jobid/rescales/details/:rescaleuuid
)

// Faults injects failures. Rates are probabilities in [0,1] drawn from a
// math/rand seeded by Options.Seed, so a run is reproducible.
type Faults struct {
	// ErrorRate answers a request with an error before it is processed: 500
	// Internal server error, or for GETs either that or the 503 Flink gives
	// during leader election (chosen at random).
	ErrorRate map[string]float64
	// DropRate processes the request and then closes the connection without an
	// answer, as when a response is lost: the client cannot tell whether its
	// savepoint, cancel or submission happened.
	DropRate map[string]float64
	// Latency delays the answer with a real sleep (leave it zero with fake clocks).
	Latency map[string]time.Duration
	// Hang leaves requests to these endpoints unprocessed and unanswered until
	// the client gives up, as a wedged JobManager does.
	Hang map[string]bool
	// Hostile processes requests to these endpoints as usual and answers them
	// with a body built to cost the client: huge, deeply nested or sent a few
	// bytes a second (see HostileAnswer). A JobManager runs the tenant's image,
	// so an operator must survive whatever one sends.
	Hostile map[string]HostileAnswer
	// FailFirst answers the first N requests to an endpoint with 500 Internal
	// server error, unprocessed, and serves the ones after as usual: a
	// JobManager that fails a few polls, then recovers. Requests are counted
	// per endpoint (an AnyEndpoint entry gives each endpoint its own N), from
	// the SetFaults call that set it.
	FailFirst map[string]int
	// SubmitRegistersAfter makes POST /jars/:jarid/run, once it accepts a job,
	// drop the connection without an answer; the job only shows in the job
	// listings this long after the request, while its id is already taken (a
	// second submit is a duplicate). Zero disables it.
	SubmitRegistersAfter time.Duration
	// FailSavepoints makes savepoints triggered from now on complete with a
	// failure-cause; the job keeps RUNNING.
	FailSavepoints bool
	// HangSavepoints makes savepoints triggered from now on stay IN_PROGRESS
	// until the job stops running.
	HangSavepoints bool
	// FailJobsAfter makes jobs submitted from now on go FAILING → FAILED this
	// long after they first reach RUNNING, whatever their restart strategy.
	// Zero disables it.
	FailJobsAfter time.Duration
	// RestartJobsEvery makes the tasks of jobs submitted from now on fail this
	// long after each time they start running (the job reaching RUNNING with
	// its slots), so a job never stays up for long. The restart strategy
	// decides what follows, as for a real task failure: RESTARTING and back to
	// RUNNING from the latest checkpoint while it allows another attempt,
	// FAILING → FAILED once it does not (at once without checkpointing or a
	// restart strategy). Zero disables it.
	RestartJobsEvery time.Duration
	// UnmappableRestores makes restores from a savepoint from now on find state that maps to no
	// operator of the new program (a changed uid): the run is refused with "Failed to rollback to
	// checkpoint/savepoint", unless allowNonRestoredState, and the job listed FAILED.
	UnmappableRestores bool
	// RerunUnderNewJobID makes a JobManager that takes over with HA (2.3 and later) run each job it
	// recovers under a new job id, in the application it belonged to. Flink 2.3 does not, as its
	// source reads: its Dispatcher recovers a job under its own id, and a PackagedProgramApplication
	// run again finds its job by its fixed id. It is the other way Flink could go until a test on
	// real Flink settles it, and an operator must follow such a job, never submit beside it.
	RerunUnderNewJobID bool
	// RerunTakes is how long the main() of an application HA runs again takes to submit its job
	// (a PackagedProgramApplication's, or any application's with RerunUnderNewJobID): meanwhile the
	// application is RUNNING and the JobManager lists no job of it.
	RerunTakes time.Duration
}

func (f Faults) clone() Faults {
	c := f
	c.ErrorRate = cloneMap(f.ErrorRate)
	c.DropRate = cloneMap(f.DropRate)
	c.Latency = cloneMap(f.Latency)
	c.Hang = cloneMap(f.Hang)
	c.Hostile = cloneMap(f.Hostile)
	c.FailFirst = cloneMap(f.FailFirst)
	return c
}

func cloneMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func lookup[V any](m map[string]V, endpoint string) V {
	if v, ok := m[endpoint]; ok {
		return v
	}
	return m[AnyEndpoint]
}

// SetFaults replaces the injected faults, and starts FailFirst's counts anew.
func (jm *JobManager) SetFaults(f Faults) {
	jm.faultMu.Lock()
	defer jm.faultMu.Unlock()
	jm.faults = f.clone()
	jm.failedFirst = nil
}

func (jm *JobManager) currentFaults() Faults {
	jm.faultMu.Lock()
	defer jm.faultMu.Unlock()
	return jm.faults
}

// faultDecision is what the fault layer does to one request.
type faultDecision struct {
	latency time.Duration
	status  int // 0: no injected error
	drop    bool
	hang    bool
	hostile HostileAnswer
}

func (jm *JobManager) decideFault(endpoint, method, path string) faultDecision {
	jm.faultMu.Lock()
	defer jm.faultMu.Unlock()
	f := jm.faults
	draws := jm.faultDraws(method + " " + path)
	if lookup(f.Hang, endpoint) {
		return faultDecision{hang: true}
	}
	d := faultDecision{latency: lookup(f.Latency, endpoint), hostile: lookup(f.Hostile, endpoint)}
	if n := lookup(f.FailFirst, endpoint); n > 0 && jm.failedFirst[endpoint] < n {
		if jm.failedFirst == nil {
			jm.failedFirst = map[string]int{}
		}
		jm.failedFirst[endpoint]++
		d.status = http.StatusInternalServerError
		return d
	}
	if rate := lookup(f.ErrorRate, endpoint); rate > 0 && draws.Float64() < rate {
		d.status = http.StatusInternalServerError
		if method == http.MethodGet && draws.IntN(2) == 0 {
			d.status = http.StatusServiceUnavailable
		}
		return d
	}
	if rate := lookup(f.DropRate, endpoint); rate > 0 && draws.Float64() < rate {
		d.drop = true
	}
	return d
}

// faultDraws is the randomness of one request's fault decision: drawn from the seed, the request's
// method and path and how many requests to that path came before, not from one stream shared by
// every request. A client that sends reads side by side sends them in an order the scheduler
// picks; with one shared stream, which of them failed changed from run to run, and a seed did not
// replay.
const maxCountedPaths = 4096

func (jm *JobManager) faultDraws(request string) *mrand2.Rand {
	if jm.requestsByPath == nil || len(jm.requestsByPath) >= maxCountedPaths {
		// Paths carry job and trigger ids: a long-lived JobManager would count without end.
		jm.requestsByPath = map[string]uint64{}
	}
	n := jm.requestsByPath[request]
	jm.requestsByPath[request] = n + 1
	h := fnv.New64a()
	_, _ = h.Write([]byte(request))
	return mrand2.New(mrand2.NewPCG(uint64(jm.faultSeed)^h.Sum64(), n))
}
