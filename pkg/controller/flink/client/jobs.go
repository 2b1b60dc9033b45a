package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// checkpointingDisabled is the 404 message for jobs without checkpoint settings (batch jobs).
const checkpointingDisabled = "Checkpointing has not been enabled"

// GetClusterOverview implements API.
func (c *Client) GetClusterOverview(ctx context.Context, baseURL string) (_ *ClusterOverview, err error) {
	const op = "GetClusterOverview"
	defer c.metrics.observe(op, time.Now(), &err)
	var out ClusterOverview
	if err := c.getJSON(ctx, baseURL, op, &out, "overview"); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetJobs implements API.
func (c *Client) GetJobs(ctx context.Context, baseURL string) (_ []JobSummary, err error) {
	const op = "GetJobs"
	defer c.metrics.observe(op, time.Now(), &err)
	var out struct {
		Jobs []JobSummary `json:"jobs"`
	}
	if err := c.getJSON(ctx, baseURL, op, &out, "jobs"); err != nil {
		return nil, err
	}
	return out.Jobs, nil
}

// GetJob implements API.
func (c *Client) GetJob(ctx context.Context, baseURL, jobID string) (_ *JobDetails, err error) {
	const op = "GetJob"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "job id", jobID); err != nil {
		return nil, err
	}
	var out JobDetails
	if err := c.getJSON(ctx, baseURL, op, &out, "jobs", jobID); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetJobExceptions implements API.
func (c *Client) GetJobExceptions(ctx context.Context, baseURL, jobID string) (_ *JobExceptions, err error) {
	const op = "GetJobExceptions"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "job id", jobID); err != nil {
		return nil, err
	}
	var out JobExceptions
	if err := c.getJSON(ctx, baseURL, op, &out, "jobs", jobID, "exceptions"); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetCheckpoints implements API.
func (c *Client) GetCheckpoints(ctx context.Context, baseURL, jobID string) (_ *CheckpointStats, err error) {
	const op = "GetCheckpoints"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "job id", jobID); err != nil {
		return nil, err
	}
	var out CheckpointStats
	if err := c.getJSON(ctx, baseURL, op, &out, "jobs", jobID, "checkpoints"); err != nil {
		var e *Error
		if errors.As(err, &e) && e.StatusCode == http.StatusNotFound &&
			strings.Contains(e.Message, checkpointingDisabled) {
			// A job that cannot checkpoint simply has no checkpoints.
			return &CheckpointStats{}, nil
		}
		return nil, err
	}
	out.checkPaths()
	return &out, nil
}

// GetTaskManagers implements API.
func (c *Client) GetTaskManagers(ctx context.Context, baseURL string) (_ []TaskManager, err error) {
	const op = "GetTaskManagers"
	defer c.metrics.observe(op, time.Now(), &err)
	var out struct {
		TaskManagers []TaskManager `json:"taskmanagers"`
	}
	if err := c.getJSON(ctx, baseURL, op, &out, "taskmanagers"); err != nil {
		return nil, err
	}
	return out.TaskManagers, nil
}

// CancelJob implements API. Use IsNotFound and IsConflict to tell a missing job and an already
// FINISHED or FAILED one from real failures.
func (c *Client) CancelJob(ctx context.Context, baseURL, jobID string) (err error) {
	const op = "CancelJob"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "job id", jobID); err != nil {
		return err
	}
	_, _, err = c.send(ctx, baseURL, request{
		op:      op,
		method:  http.MethodPatch,
		path:    []string{"jobs", jobID},
		query:   url.Values{"mode": {"cancel"}},
		timeout: c.cfg.PostTimeout,
		policy:  idempotentWritePolicy,
	})
	return err
}

// DisposeSavepoint implements API. A disposal sent twice is harmless: the second finds nothing to delete.
func (c *Client) DisposeSavepoint(ctx context.Context, baseURL, path string) (err error) {
	const op = "DisposeSavepoint"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "savepoint path", path); err != nil {
		return err
	}
	_, _, err = c.send(ctx, baseURL, request{
		op: op, method: http.MethodPost, path: []string{"savepoint-disposal"},
		body: map[string]string{"savepoint-path": path}, timeout: c.cfg.PostTimeout, policy: idempotentWritePolicy,
	})
	return err
}
