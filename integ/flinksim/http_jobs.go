package flinksim

import (
	"strconv"
	"strings"
	"time"
)

// withJob answers 404 for a job the JobManager does not list.
func (jm *JobManager) withJob(rc *reqCtx, f func(j *job) response) response {
	j := jm.job(rc.params["jobid"])
	if j == nil {
		return jobNotFoundResponse(rc.params["jobid"])
	}
	return f(j)
}

func (jm *JobManager) handleJobs(rc *reqCtx) response {
	out := []any{}
	for _, j := range jm.jobs {
		out = append(out, map[string]string{"id": j.id, "status": j.state})
	}
	return respondOK(map[string]any{"jobs": out})
}

func (j *job) endMillis() int64 {
	if isGloballyTerminal(j.state) {
		return j.endedAt.UnixMilli()
	}
	return -1
}

func (j *job) durationMillis(now time.Time) int64 {
	end := now
	if isGloballyTerminal(j.state) {
		end = j.endedAt
	}
	return end.Sub(j.submittedAt).Milliseconds()
}

func (jm *JobManager) handleJobsOverview(rc *reqCtx) response {
	out := []any{}
	for _, j := range jm.jobs {
		out = append(out, jm.jobOverview(j, rc.now))
	}
	return respondOK(map[string]any{"jobs": out})
}

// jobOverview is a job as /jobs/overview and 2.3's application details list it (JobDetails).
func (jm *JobManager) jobOverview(j *job, now time.Time) map[string]any {
	out := map[string]any{
		"jid":               j.id,
		"name":              j.name,
		"start-time":        j.submittedAt.UnixMilli(),
		"end-time":          j.endMillis(),
		"duration":          j.durationMillis(now),
		"last-modification": j.lastChange.UnixMilli(),
		"state":             j.state,
		"tasks":             lowerKeys(j.jobTaskCounts()),
	}
	if flinkAtLeast(jm.flinkVersion, 2, 0) {
		out["pending-operators"] = 0 // operators of a batch job yet to be built
	}
	if hasApplications(jm.flinkVersion) {
		out["jobType"], out["schedulerType"] = "STREAMING", jm.schedulerType()
	}
	return out
}

func (jm *JobManager) handleJobDetails(rc *reqCtx) response {
	return jm.withJob(rc, func(j *job) response { return respondOK(jm.jobDetails(j, rc.now)) })
}

func (jm *JobManager) handleJobStatus(rc *reqCtx) response {
	return jm.withJob(rc, func(j *job) response {
		return respondOK(map[string]string{"status": j.state})
	})
}

func (jm *JobManager) handleJobPlan(rc *reqCtx) response {
	return jm.withJob(rc, func(j *job) response {
		return respondOK(map[string]any{"plan": jm.plan(j)})
	})
}

func (jm *JobManager) handleJobConfig(rc *reqCtx) response {
	return jm.withJob(rc, func(j *job) response {
		body := map[string]any{"jid": j.id, "name": j.name}
		// A sparse (initialising or init-failed) job has no archived execution config.
		if j.hasGraph() {
			config := map[string]any{
				"restart-strategy":  "Cluster level default restart strategy",
				"job-parallelism":   j.parallelism,
				"object-reuse-mode": false,
				"user-config":       map[string]string{},
			}
			if flinkBefore(jm.flinkVersion, 2, 0) {
				config["execution-mode"] = "PIPELINED" // removed in 2.0
			}
			body["execution-config"] = config
		}
		return respondOK(body)
	})
}

// exceptionInfo is one entry of the exception history: endpoint came with 1.19, and 2.0 removed
// location, which it replaced.
func (jm *JobManager) exceptionInfo(e exceptionEntry) map[string]any {
	info := map[string]any{
		"exceptionName":        e.failure.class,
		"stacktrace":           e.failure.stackTrace(),
		"timestamp":            e.at.UnixMilli(),
		"failureLabels":        map[string]string{},
		"concurrentExceptions": []any{},
	}
	if e.taskName != "" { // NON_NULL fields, absent for global failures
		info["taskName"] = e.taskName
		info["taskManagerId"] = e.tm
		if flinkBefore(jm.flinkVersion, 2, 0) {
			info["location"] = "10.0.0.2:6121"
		}
		if flinkAtLeast(jm.flinkVersion, 1, 19) {
			info["endpoint"] = "10.0.0.2:6121"
		}
	}
	return info
}

func (jm *JobManager) handleExceptions(rc *reqCtx) response {
	return jm.withJob(rc, func(j *job) response {
		limit := len(j.exceptions)
		if v := rc.r.URL.Query().Get("maxExceptions"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return badParams("Cannot resolve query parameter (maxExceptions) from value \"" + v + "\".")
			}
			limit = min(max(n, 0), limit)
		}
		entries := []any{}
		for _, e := range j.exceptions[:limit] {
			entries = append(entries, jm.exceptionInfo(e))
		}
		body := map[string]any{
			"exceptionHistory": map[string]any{
				"entries":   entries,
				"truncated": limit < len(j.exceptions),
			},
		}
		if flinkAtLeast(jm.flinkVersion, 2, 0) {
			return respondOK(body) // 2.0 removed the deprecated root exception (FLINK-32688)
		}
		body["root-exception"], body["timestamp"] = nil, nil
		body["all-exceptions"], body["truncated"] = []any{}, false
		if j.rootCause != nil {
			body["root-exception"] = j.rootCause.failure.stackTrace()
			body["timestamp"] = j.rootCause.at.UnixMilli()
		}
		return respondOK(body)
	})
}

func (jm *JobManager) handleExecutionResult(rc *reqCtx) response {
	return jm.withJob(rc, func(j *job) response {
		if !isGloballyTerminal(j.state) {
			return respondOK(map[string]any{"status": map[string]string{"id": "IN_PROGRESS"}})
		}
		result := map[string]any{
			"id":                  j.id,
			"accumulator-results": map[string]any{},
			"net-runtime":         j.durationMillis(rc.now),
		}
		if hasApplications(jm.flinkVersion) {
			// 2.3's JobResult carries the job's name, application and times.
			result["name"], result["application-id"] = j.name, j.applicationID
			result["start-time"], result["end-time"] = j.submittedAt.UnixMilli(), j.endedAt.UnixMilli()
		}
		switch j.state {
		case stateFinished:
			result["application-status"] = "SUCCEEDED"
		case stateCanceled:
			result["application-status"] = "CANCELED"
		default:
			result["application-status"] = "FAILED"
			if j.rootCause != nil {
				result["failure-cause"] = j.rootCause.failure.serialized()
			}
		}
		return respondOK(map[string]any{"status": map[string]string{"id": "COMPLETED"}, "job-execution-result": result})
	})
}

// handleJobMetrics answers from the metric store: an unknown job or metric is
// simply absent, never an error.
func (jm *JobManager) handleJobMetrics(rc *reqCtx) response {
	values := map[string]string{}
	if j := jm.job(rc.params["jobid"]); j != nil && j.hasGraph() {
		uptime := int64(0)
		if j.state == stateRunning && !j.firstRunningAt.IsZero() {
			uptime = rc.now.Sub(j.firstRunningAt).Milliseconds()
		}
		// The adaptive scheduler counts its rescales as restarts.
		restarts := itoa(j.restarts + j.rescales)
		values = map[string]string{
			"numRestarts":                   restarts,
			"fullRestarts":                  restarts,
			"numberOfCompletedCheckpoints":  strconv.FormatInt(j.ckpt.completed, 10),
			"numberOfFailedCheckpoints":     strconv.FormatInt(j.ckpt.failed, 10),
			"numberOfInProgressCheckpoints": itoa(j.ckpt.inProgress()),
			"totalNumberOfCheckpoints":      strconv.FormatInt(j.ckpt.completed+j.ckpt.failed+int64(j.ckpt.inProgress()), 10),
			"uptime":                        strconv.FormatInt(uptime, 10),
		}
	}
	out := []any{}
	get := rc.r.URL.Query().Get("get")
	if get == "" {
		for _, k := range sortedKeys(values) {
			out = append(out, map[string]string{"id": k})
		}
		return respondOK(out)
	}
	for _, k := range strings.Split(get, ",") {
		if v, ok := values[k]; ok {
			out = append(out, map[string]string{"id": k, "value": v})
		}
	}
	return respondOK(out)
}
