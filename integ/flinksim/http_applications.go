package flinksim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The application endpoints of Flink 2.3 (applications.go); earlier releases answer them 404, as
// any route they do not have.

// withApplication answers an application the JobManager does not list as Flink does: the
// Dispatcher's FlinkApplicationNotFoundException reaches the handler unmapped, a 500.
func (jm *JobManager) withApplication(rc *reqCtx, f func(a *application) response) response {
	if missing := jm.notYet(rc, 2, 3); missing != nil {
		return *missing
	}
	id := rc.params["applicationid"]
	a := jm.application(id)
	if a == nil {
		return internalError(applicationNotFound(id))
	}
	return f(a)
}

func applicationNotFound(id string) *throwable {
	return newThrowable(classApplicationNotFound, "Could not find Flink application ("+id+")", nil)
}

// startEnd are an application's start, end (-1 while it runs) and duration, from the state it
// entered first as the given answer counts it.
func (a *application) startEnd(first string, now time.Time) (start, end, duration int64) {
	start, end = a.stateTimes[first].UnixMilli(), -1
	until := now
	if isTerminalApplication(a.state) {
		end, until = a.stateTimes[a.state].UnixMilli(), a.stateTimes[a.state]
	}
	return start, end, until.Sub(a.stateTimes[first]).Milliseconds()
}

// handleApplicationsOverview answers MultipleApplicationsDetails: each application with the
// number of its jobs in each state.
func (jm *JobManager) handleApplicationsOverview(rc *reqCtx) response {
	if missing := jm.notYet(rc, 2, 3); missing != nil {
		return *missing
	}
	out := []any{}
	for _, a := range slices.Backward(jm.applications) { // newest first, as Flink lists them
		jobs := map[string]int{}
		for _, id := range a.jobIDs {
			if j := jm.job(id); j != nil {
				jobs[j.state]++
			}
		}
		start, end, duration := a.startEnd(appCreated, rc.now)
		out = append(out, map[string]any{
			"id": a.id, "name": a.name, "status": a.state, "jobs": jobs,
			"start-time": start, "end-time": end, "duration": duration,
		})
	}
	return respondOK(map[string]any{"applications": out})
}

// handleApplicationDetails answers ApplicationDetailsInfo, its jobs as /jobs/overview lists them.
func (jm *JobManager) handleApplicationDetails(rc *reqCtx) response {
	return jm.withApplication(rc, func(a *application) response {
		timestamps := map[string]int64{}
		for _, s := range applicationStates {
			timestamps[s] = 0
			if t, ok := a.stateTimes[s]; ok {
				timestamps[s] = t.UnixMilli()
			}
		}
		jobs := []any{}
		for _, id := range a.jobIDs {
			if j := jm.job(id); j != nil {
				jobs = append(jobs, jm.jobOverview(j, rc.now))
			}
		}
		start, end, duration := a.startEnd(appRunning, rc.now)
		return respondOK(map[string]any{
			"id": a.id, "name": a.name, "status": a.state, "timestamps": timestamps, "jobs": jobs,
			"start-time": start, "end-time": end, "duration": duration,
		})
	})
}

// handleApplicationCancel cancels a running application. An ended application has been archived
// and is no longer the Dispatcher's to cancel: 404, as an unknown one.
func (jm *JobManager) handleApplicationCancel(rc *reqCtx) response {
	if missing := jm.notYet(rc, 2, 3); missing != nil {
		return *missing
	}
	id := rc.params["applicationid"]
	a := jm.application(id)
	if a == nil || isTerminalApplication(a.state) {
		return restError(http.StatusNotFound, classRestHandler, "Application could not be found.", applicationNotFound(id))
	}
	jm.cancelApplication(a, rc.now)
	return respondAccepted(map[string]any{})
}

func (jm *JobManager) handleApplicationExceptions(rc *reqCtx) response {
	return jm.withApplication(rc, func(a *application) response {
		entries := []any{}
		for _, e := range a.exceptions {
			entries = append(entries, map[string]any{
				"exceptionName": e.failure.class, "stacktrace": e.failure.stackTrace(),
				"timestamp": e.at.UnixMilli(), "jobId": e.jobID,
			})
		}
		return respondOK(map[string]any{"exceptionHistory": map[string]any{"entries": entries}})
	})
}

// handleApplicationJobManagerConfig answers the JobManager's configuration: Flink's handler
// answers it for any application id.
func (jm *JobManager) handleApplicationJobManagerConfig(rc *reqCtx) response {
	if missing := jm.notYet(rc, 2, 3); missing != nil {
		return *missing
	}
	return jm.handleJobManagerConfig(rc)
}

type jarRunApplicationBody struct {
	EntryClass            *string           `json:"entryClass"`
	ProgramArgsList       []string          `json:"programArgsList"`
	Parallelism           *int              `json:"parallelism"`
	JobID                 *string           `json:"jobId"`
	AllowNonRestoredState *bool             `json:"allowNonRestoredState"`
	SavepointPath         *string           `json:"savepointPath"`
	ClaimMode             *string           `json:"claimMode"`
	FlinkConfiguration    map[string]string `json:"flinkConfiguration"`
	ApplicationID         *string           `json:"applicationId"`
}

// handleJarRunApplication runs a jar's main() as a PackagedProgramApplication in the JobManager
// and answers 202 with its id at once. Its job's id is the request's (or
// $internal.pipeline.job-id), else with HA the application's, else random.
func (jm *JobManager) handleJarRunApplication(rc *reqCtx) response {
	if missing := jm.notYet(rc, 2, 3); missing != nil {
		return *missing
	}
	const class = "JarRunApplicationRequestBody"
	var body jarRunApplicationBody
	if bad := jm.decodeRequest(class, rc.body, &body); bad != nil {
		return *bad
	}
	if m := body.ClaimMode; m != nil && *m != "CLAIM" && *m != "NO_CLAIM" && *m != "LEGACY" {
		return badRequestFormat(class, errInvalidEnum("claimMode", *m))
	}
	ids := map[string]string{}
	for name, v := range map[string]*string{"jobId": body.JobID, "applicationId": body.ApplicationID} {
		if v == nil {
			continue
		}
		if !hex32.MatchString(*v) {
			return badRequestFormat(class, fmt.Errorf("cannot parse %s %q", name, *v))
		}
		ids[name] = strings.ToLower(*v)
	}
	jarID := rc.params["jarid"]
	if !jm.jarExists(jarID) {
		missing := newThrowable(classRestHandler, "Jar file "+jm.cfg.uploadDir+"/"+jarID+" does not exist", nil)
		return internalError(newThrowable(classCompletion, missing.String(), missing))
	}
	appID := ids["applicationId"]
	if appID == "" {
		appID = randomHex(32)
	}
	jobID := ids["jobId"]
	if jobID == "" {
		jobID = strings.ToLower(body.FlinkConfiguration["$internal.pipeline.job-id"])
	}
	if jobID == "" && jm.haKey != "" {
		jobID = appID // a fixed id, which HA needs to find the job again
	}
	if jobID == "" {
		jobID = randomHex(32)
	}
	parallelism := jm.cfg.parallelism
	if body.Parallelism != nil && *body.Parallelism > 0 {
		parallelism = *body.Parallelism
	}
	req := submitRequest{jarID: jarID, entryClass: deref(body.EntryClass), jobID: jobID, savepointPath: deref(body.SavepointPath),
		parallelism: parallelism, args: body.ProgramArgsList, userConfig: copyMap(body.FlinkConfiguration), applicationID: appID}
	if jm.applicationTaken(appID) {
		dup := duplicateApplication()
		return restError(http.StatusBadRequest, classRestHandler, "Could not submit application.", newThrowable(classCompletion, dup.String(), dup))
	}
	a := jm.startApplication(appID, applicationName(req), true, rc.now)
	a.req = req
	a.decoupled = strings.EqualFold(strings.TrimSpace(jm.effectiveConfig(req)[terminateOnJobFailureKey]), "false")
	if jm.haKey != "" {
		jm.storage.haApplicationSubmitted(jm.haKey, haApplication{id: appID, name: a.name, decoupled: a.decoupled, req: req})
	}
	if jm.isDuplicate(jobID) {
		// main() fails on its job's submission, and the application with it.
		a.exceptions = append(a.exceptions, applicationException{failure: duplicateJob(), at: rc.now})
		jm.setApplicationState(a, appFailing, rc.now)
		jm.setApplicationState(a, appFailed, rc.now)
		return respondAccepted(map[string]string{"applicationid": appID})
	}
	jm.submit(rc.now, req, nil)
	if a.decoupled {
		// Detached, main() returns once its job is submitted, and the application with it.
		jm.setApplicationState(a, appFinished, rc.now)
	}
	return respondAccepted(map[string]string{"applicationid": appID})
}

// effectiveConfig is the cluster's configuration with a submission's own over it.
func (jm *JobManager) effectiveConfig(req submitRequest) map[string]string {
	out := copyMap(jm.cfg.raw)
	for k, v := range req.userConfig {
		out[k] = v
	}
	return out
}
