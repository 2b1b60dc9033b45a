package client

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// SubmitJob implements API. A failure that is not retryable after the request was written
// leaves the outcome unknown: list the jobs (ideally with a fixed SubmitJobRequest.JobID) before
// submitting again.
func (c *Client) SubmitJob(ctx context.Context, baseURL, jarID string, req SubmitJobRequest) (_ string, err error) {
	const op = "SubmitJob"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "jar id", jarID); err != nil {
		return "", err
	}
	status, body, err := c.send(ctx, baseURL, request{
		op:      op,
		method:  http.MethodPost,
		path:    []string{"jars", jarID, "run"},
		body:    req,
		timeout: c.cfg.SubmitTimeout,
		policy:  submitPolicy,
	})
	if err != nil {
		return "", err
	}
	var out struct {
		JobID string `json:"jobid"`
	}
	if err := decode(op, status, body, &out); err != nil {
		return "", err
	}
	if out.JobID == "" {
		return "", &Error{Method: op, StatusCode: status, Message: "answer carries no jobid",
			Cause: fmt.Errorf("%w: no jobid", errDecode)}
	}
	return out.JobID, nil
}
