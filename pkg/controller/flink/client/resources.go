package client

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
)

// JobResourceRequirements is the body of GET and PUT /jobs/:jobid/resource-requirements
// (Flink 1.18+): the parallelism bounds of every vertex of a job, keyed by vertex id (32 hex
// characters, as in JobVertex.ID).
type JobResourceRequirements map[string]VertexResourceRequirements

// VertexResourceRequirements is what one vertex asks of the adaptive scheduler.
type VertexResourceRequirements struct {
	Parallelism ParallelismBounds `json:"parallelism"`
}

// ParallelismBounds limit a vertex's parallelism. The adaptive scheduler runs the vertex with as
// many slots as it can get up to UpperBound, and does not run the job while it cannot give the
// vertex LowerBound. -1 stands for the default bound: 1 for LowerBound, the vertex's maximum
// parallelism for UpperBound.
type ParallelismBounds struct {
	LowerBound int32 `json:"lowerBound"`
	UpperBound int32 `json:"upperBound"`
}

// unsupportedOperation is the exception Flink passes through as a 500 when the job's scheduler
// does not implement a call: the DefaultScheduler for both resource-requirements calls, the
// adaptive scheduler in reactive mode for the update.
const unsupportedOperation = "java.lang.UnsupportedOperationException"

// IsUnsupported reports whether Flink answered that the job's scheduler does not support the
// call, which no retry changes. Resource requirements need the adaptive scheduler
// (jobmanager.scheduler: adaptive).
func IsUnsupported(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == http.StatusInternalServerError &&
		strings.Contains(e.Message, unsupportedOperation)
}

// GetJobResourceRequirements implements API.
func (c *Client) GetJobResourceRequirements(ctx context.Context, baseURL, jobID string) (_ JobResourceRequirements, err error) {
	const op = "GetJobResourceRequirements"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "job id", jobID); err != nil {
		return nil, err
	}
	var out JobResourceRequirements
	if err := c.getJSON(ctx, baseURL, op, &out, "jobs", jobID, "resource-requirements"); err != nil {
		return nil, finalIfUnsupported(err)
	}
	return out, nil
}

// UpdateJobResourceRequirements implements API.
func (c *Client) UpdateJobResourceRequirements(ctx context.Context, baseURL, jobID string, req JobResourceRequirements) (err error) {
	const op = "UpdateJobResourceRequirements"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "job id", jobID); err != nil {
		return err
	}
	if len(req) == 0 {
		// Flink would answer 400 "Request body does not specify resource requirements."
		return invalid(op, errors.New("resource requirements must name the job's vertices"))
	}
	_, _, err = c.send(ctx, baseURL, request{
		op:      op,
		method:  http.MethodPut,
		path:    []string{"jobs", jobID, "resource-requirements"},
		body:    req,
		timeout: c.cfg.PostTimeout,
		policy:  idempotentWritePolicy,
	})
	var e *Error
	if errors.As(err, &e) && e.StatusCode == http.StatusConflict {
		// "Another update to the job [...] resource requirements is in progress.": a later
		// attempt finds the Dispatcher free again.
		e.Retryable = true
	}
	return finalIfUnsupported(err)
}

// finalIfUnsupported marks an unsupported-operation answer as not retryable: the scheduler is
// fixed for the life of the cluster.
func finalIfUnsupported(err error) error {
	var e *Error
	if IsUnsupported(err) && errors.As(err, &e) {
		e.Retryable = false
	}
	return err
}
