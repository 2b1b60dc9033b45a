package flinksim

import (
	"strings"
	"time"
)

// Flink 2.3 puts an application above jobs (FLIP-549, FLIP-560; Flink's "Application Lifecycle"
// page and its Dispatcher, read at the release-2.3 commit SOURCES.md names). POST /jars/:jarid/run
// runs main() in the request as before, and wraps each job main() submits in a SingleJobApplication
// whose id is the job's id: the application lives and ends with its job. POST
// /jars/:jarid/run-application runs main() in the JobManager as a PackagedProgramApplication, whose
// state follows its job unless execution.terminate-application-on-any-job-terminated-exceptionally
// is false, in which case it finishes as soon as main() returns. With HA a JobManager that takes
// over recovers each job under its own id, wrapped in a new SingleJobApplication of the same id, and
// re-runs each unfinished PackagedProgramApplication, whose main() finds its job (fixed id) and
// recovers it rather than submitting another. Releases before 2.3 have none of it.

// Application states (ApplicationState) in Flink's declaration order.
const (
	appCreated   = "CREATED"
	appRunning   = "RUNNING"
	appFailing   = "FAILING"
	appFailed    = "FAILED"
	appCanceling = "CANCELING"
	appCanceled  = "CANCELED"
	appFinished  = "FINISHED"
)

var applicationStates = []string{appCreated, appRunning, appFailing, appFailed, appCanceling, appCanceled, appFinished}

func isTerminalApplication(s string) bool {
	return s == appFailed || s == appCanceled || s == appFinished
}

// terminateOnJobFailureKey decides whether a PackagedProgramApplication follows its jobs (true,
// Flink's default) or finishes once main() returns.
const terminateOnJobFailureKey = "execution.terminate-application-on-any-job-terminated-exceptionally"

// hasApplications tells whether a release has applications: 2.3 and later.
func hasApplications(version string) bool { return flinkAtLeast(version, 2, 3) }

// application is one application of the JobManager.
type application struct {
	id, name string
	// packaged is a PackagedProgramApplication (run-application); otherwise a SingleJobApplication.
	packaged bool
	// decoupled is a PackagedProgramApplication that finishes when main() returns, whatever its jobs do.
	decoupled  bool
	state      string
	stateTimes map[string]time.Time
	jobIDs     []string
	exceptions []applicationException
	// req is what a PackagedProgramApplication's main() submits: HA keeps it to run main() again.
	req submitRequest
}

// applicationException is an entry of /applications/:id/exceptions.
type applicationException struct {
	failure *throwable
	at      time.Time
	jobID   string
}

func (jm *JobManager) application(id string) *application {
	for _, a := range jm.applications {
		if a.id == id {
			return a
		}
	}
	return nil
}

// startApplication registers an application, CREATED and at once RUNNING as Flink's execute() makes it.
func (jm *JobManager) startApplication(id, name string, packaged bool, now time.Time) *application {
	a := &application{id: id, name: name, packaged: packaged, stateTimes: map[string]time.Time{}}
	jm.applications = append(jm.applications, a)
	jm.setApplicationState(a, appCreated, now)
	jm.setApplicationState(a, appRunning, now)
	return a
}

func (jm *JobManager) setApplicationState(a *application, state string, at time.Time) {
	if isTerminalApplication(a.state) {
		return
	}
	a.state = state
	a.stateTimes[state] = at
	if !isTerminalApplication(state) {
		return
	}
	// The application result store: an ended application's id is never taken again, and with HA
	// the JobManager that takes over does not run it again.
	jm.appResults[a.id] = true
	if jm.haKey != "" {
		jm.storage.haApplicationEnded(jm.haKey, a.id)
	}
}

// attachJob adds a job to its application, starting a SingleJobApplication for a job that has none.
func (jm *JobManager) attachJob(j *job, now time.Time) {
	if j.applicationID == "" {
		return
	}
	a := jm.application(j.applicationID)
	if a == nil {
		a = jm.startApplication(j.applicationID, "SingleJobApplication("+j.name+")", false, now)
	}
	a.jobIDs = append(a.jobIDs, j.id)
}

// jobEnded moves a job's application on once the job is globally terminal: a SingleJobApplication,
// and a PackagedProgramApplication that follows its jobs, end as the job did; a failed job's cause
// goes into the application's exception history.
//
// Real 2.3 leaves a SingleJobApplication RUNNING for good when its job failed at its initialisation
// (a run refused for a restore that cannot start): the application lists the FAILED job, and never
// ends.
func (jm *JobManager) jobEnded(j *job, at time.Time) {
	a := jm.application(j.applicationID)
	if a == nil || isTerminalApplication(a.state) || a.decoupled {
		return
	}
	if j.state == stateFailed && !j.hasGraph() && !a.packaged {
		return
	}
	switch j.state {
	case stateFinished:
		jm.setApplicationState(a, appFinished, at)
	case stateCanceled:
		jm.setApplicationState(a, appCanceling, at)
		jm.setApplicationState(a, appCanceled, at)
	case stateFailed:
		if j.rootCause != nil {
			a.exceptions = append(a.exceptions, applicationException{failure: j.rootCause.failure, at: at, jobID: j.id})
		}
		jm.setApplicationState(a, appFailing, at)
		jm.setApplicationState(a, appFailed, at)
	}
}

// cancelApplication cancels an application's jobs; it ends CANCELED once they are. One whose job
// has not been submitted yet (main() still running) ends at once.
func (jm *JobManager) cancelApplication(a *application, at time.Time) {
	jm.setApplicationState(a, appCanceling, at)
	live := false
	for _, id := range a.jobIDs {
		if j := jm.job(id); j != nil && !isGloballyTerminal(j.state) {
			live = true
			jm.cancel(j, at)
		}
	}
	for i := 0; i < len(jm.pending); i++ {
		if jm.pending[i].req.applicationID == a.id {
			jm.pending = append(jm.pending[:i], jm.pending[i+1:]...)
			i--
		}
	}
	if !live {
		jm.setApplicationState(a, appCanceled, at)
	}
}

// applicationGone drops an ended application once none of its jobs is listed any more: both leave
// the JobManager's archive after jobstore.expiration-time.
func (jm *JobManager) applicationGone(j *job) {
	a := jm.application(j.applicationID)
	if a == nil || !isTerminalApplication(a.state) {
		return
	}
	for _, id := range a.jobIDs {
		if id != j.id && jm.job(id) != nil {
			return
		}
	}
	for i, x := range jm.applications {
		if x == a {
			jm.applications = append(jm.applications[:i], jm.applications[i+1:]...)
			return
		}
	}
}

// applicationTaken tells whether an application id is taken: by an application the process runs or
// still lists, one that ended (its application result store, HA's with HA), or a submission not
// registered yet.
func (jm *JobManager) applicationTaken(id string) bool {
	if jm.application(id) != nil || jm.appResults[id] {
		return true
	}
	for _, p := range jm.pending {
		if p.req.applicationID == id {
			return true
		}
	}
	return jm.haKey != "" && jm.storage.haHasApplicationResult(jm.haKey, id)
}

// applicationName is what Flink names a PackagedProgramApplication: its main class.
func applicationName(req submitRequest) string {
	if req.entryClass != "" {
		return req.entryClass
	}
	return strings.TrimSuffix(req.jarID, ".jar")
}
