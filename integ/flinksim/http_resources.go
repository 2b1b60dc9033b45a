package flinksim

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

const classUnsupported = "java.lang.UnsupportedOperationException"

// unsupportedByScheduler is what SchedulerNG's default methods throw: only the
// adaptive scheduler reads or changes resource requirements, and the REST
// handlers do not map the exception, so clients get a 500.
func unsupportedByScheduler() *throwable {
	return newThrowable(classUnsupported, "The DefaultScheduler does not support changing the parallelism "+
		"without a job restart. This feature is currently only expected to work with the AdaptiveScheduler.", nil)
}

// withJobMaster finds a job the Dispatcher can reach a JobMaster for. Unlike
// the ExecutionGraph handlers, the resource-requirements handlers pass the
// Dispatcher's exceptions through unmapped: an unknown or finished job and an
// initialising one are 500s, not 404s.
func (jm *JobManager) withJobMaster(rc *reqCtx, f func(j *job) response) response {
	id := rc.params["jobid"]
	j := jm.job(id)
	switch {
	case j == nil || isGloballyTerminal(j.state):
		// A terminal job leaves the JobManagerRunner registry within moments.
		return internalError(jobNotFound(id))
	case j.state == stateInitializing:
		return internalError(unavailableWhileInitializing())
	}
	return f(j)
}

type vertexRequirementsJSON struct {
	Parallelism *parallelismJSON `json:"parallelism"`
}

type parallelismJSON struct {
	LowerBound int `json:"lowerBound"`
	UpperBound int `json:"upperBound"`
}

func (jm *JobManager) handleResourceRequirements(rc *reqCtx) response {
	if missing := jm.notYet(rc, 1, 18); missing != nil {
		return *missing
	}
	return jm.withJobMaster(rc, func(j *job) response {
		if !jm.cfg.adaptive.enabled {
			return internalError(unsupportedByScheduler())
		}
		out := map[string]vertexRequirementsJSON{}
		for v, id := range j.vertexIDs {
			b := j.bounds[v]
			out[id] = vertexRequirementsJSON{Parallelism: &parallelismJSON{LowerBound: b.lower, UpperBound: b.upper}}
		}
		return respondOK(out)
	})
}

// handleUpdateResourceRequirements checks in the order Flink does: the body's
// format, an empty body, the job, the requirements against the job's
// vertices, and last whether the scheduler supports the change at all.
func (jm *JobManager) handleUpdateResourceRequirements(rc *reqCtx) response {
	if missing := jm.notYet(rc, 1, 18); missing != nil {
		return *missing
	}
	const class = "JobResourceRequirementsBody"
	var body map[string]*vertexRequirementsJSON
	if err := decodeBody(rc.body, &body); err != nil {
		return badRequestFormat(class, err)
	}
	requested := map[string]parallelismJSON{}
	for id, req := range body {
		if !hex32.MatchString(id) {
			return badRequestFormat(class, fmt.Errorf("cannot deserialize job vertex id %q", id))
		}
		if req == nil || req.Parallelism == nil {
			return badRequestFormat(class, fmt.Errorf("missing parallelism for job vertex %s", id))
		}
		requested[strings.ToLower(id)] = *req.Parallelism
	}
	if len(requested) == 0 {
		return restError(http.StatusBadRequest, classRestHandler, "Request body does not specify resource requirements.", nil)
	}
	return jm.withJobMaster(rc, func(j *job) response {
		bounds, problems := j.validateRequirements(requested)
		if len(problems) > 0 {
			return restError(http.StatusBadRequest, classRestHandler, strings.Join(problems, "\n"), nil)
		}
		if !jm.cfg.adaptive.enabled {
			return internalError(unsupportedByScheduler())
		}
		jm.updateRequirements(j, rc.now, bounds)
		return respondOK(map[string]any{})
	})
}

// validateRequirements is JobResourceRequirements.validate: -1 stands for the
// default bound (1, or the max parallelism), and every vertex of the job must
// be given, none other. Flink reports problems in hash order; this reports
// them in vertex id order so answers are stable.
func (j *job) validateRequirements(requested map[string]parallelismJSON) ([]parallelismBounds, []string) {
	bounds := make([]parallelismBounds, len(j.vertexIDs))
	var problems []string
	ids := make([]string, 0, len(requested))
	for id := range requested {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		v := j.vertexIndex(id)
		if v < 0 {
			problems = append(problems, fmt.Sprintf("Job vertex [%s] was not found in the JobGraph.", id))
			continue
		}
		lower, upper := requested[id].LowerBound, requested[id].UpperBound
		if lower == -1 {
			lower = 1
		}
		if upper == -1 {
			upper = j.maxParallelism
		}
		bounds[v] = parallelismBounds{lower, upper}
		if lower < 1 || upper < 1 {
			problems = append(problems, fmt.Sprintf("Both, the requested lower bound [%d] and upper bound [%d] "+
				"for job vertex [%s] must be greater than zero.", lower, upper, id))
			continue
		}
		if lower > upper {
			problems = append(problems, fmt.Sprintf("The requested lower bound [%d] for job vertex [%s] is higher "+
				"than the upper bound [%d].", lower, id, upper))
		}
		if j.maxParallelism < upper {
			problems = append(problems, fmt.Sprintf("The newly requested parallelism %d for the job vertex %s "+
				"exceeds its maximum parallelism %d.", upper, id, j.maxParallelism))
		}
	}
	for _, id := range j.vertexIDs {
		if _, ok := requested[id]; !ok {
			problems = append(problems, fmt.Sprintf("The request is incomplete, missing job vertex [%s] resource requirements.", id))
		}
	}
	return bounds, problems
}

func (j *job) vertexIndex(id string) int {
	for v, vid := range j.vertexIDs {
		if vid == id {
			return v
		}
	}
	return -1
}
