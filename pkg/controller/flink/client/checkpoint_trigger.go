package client

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Manual checkpoints (POST /jobs/:jobid/checkpoints, Flink 1.17+): triggered with a trigger id the
// caller chose, as savepoints are, so that a restarted operator polls the checkpoint it asked for
// instead of taking another. A completed one is known by its checkpoint id; its path is read from
// the checkpoint's statistics.

// CheckpointRequest is the body of a manual checkpoint trigger.
type CheckpointRequest struct {
	// CheckpointType is CONFIGURED (the job's own kind), or FULL. Flink refuses INCREMENTAL.
	CheckpointType string `json:"checkpointType,omitempty"`
	// TriggerID is the id to poll the checkpoint by; "" lets Flink choose one.
	TriggerID string `json:"triggerId,omitempty"`
}

// CheckpointStatus is the outcome of a manual checkpoint operation.
type CheckpointStatus struct {
	// State is "IN_PROGRESS" or "COMPLETED". COMPLETED alone does not mean success.
	State string
	// CheckpointID is the completed checkpoint's id; 0 when it failed or runs.
	CheckpointID int64
	// FailureCause is Flink's exception summary when the checkpoint failed.
	FailureCause string
}

// Succeeded reports whether the checkpoint completed.
func (s *CheckpointStatus) Succeeded() bool {
	return s.State == SavepointCompleted && s.FailureCause == "" && s.CheckpointID > 0
}

// Failed reports whether the checkpoint ended without completing.
func (s *CheckpointStatus) Failed() bool { return s.State == SavepointCompleted && !s.Succeeded() }

// TriggerCheckpoint implements API.
func (c *Client) TriggerCheckpoint(ctx context.Context, baseURL, jobID string, req CheckpointRequest) (_ string, err error) {
	const op = "TriggerCheckpoint"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "job id", jobID); err != nil {
		return "", err
	}
	return c.trigger(ctx, op, baseURL, req, "jobs", jobID, "checkpoints")
}

// GetCheckpointStatus implements API.
func (c *Client) GetCheckpointStatus(ctx context.Context, baseURL, jobID, triggerID string) (_ *CheckpointStatus, err error) {
	const op = "GetCheckpointStatus"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "job id", jobID); err != nil {
		return nil, err
	}
	if err := requireID(op, "trigger id", triggerID); err != nil {
		return nil, err
	}
	var out struct {
		Status struct {
			ID string `json:"id"`
		} `json:"status"`
		Operation *struct {
			CheckpointID *int64               `json:"checkpointId"`
			FailureCause *serializedThrowable `json:"failureCause"`
		} `json:"operation"`
	}
	if err := c.getJSON(ctx, baseURL, op, &out, "jobs", jobID, "checkpoints", triggerID); err != nil {
		var e *Error
		if errors.As(err, &e) && e.StatusCode == http.StatusNotFound && strings.Contains(e.Message, "no checkpoint operation") {
			// Flink forgot the operation (it restarted, or five minutes passed): polling cannot help.
			e.Retryable = false
		}
		return nil, err
	}
	st := &CheckpointStatus{State: out.Status.ID}
	if o := out.Operation; o != nil {
		if o.CheckpointID != nil {
			st.CheckpointID = *o.CheckpointID
		}
		st.FailureCause = o.FailureCause.summary()
		if st.State == SavepointCompleted && st.FailureCause == "" && st.CheckpointID <= 0 {
			st.FailureCause = "Flink named no checkpoint"
		}
	}
	return st, nil
}

// GetCheckpointDetails implements API.
func (c *Client) GetCheckpointDetails(ctx context.Context, baseURL, jobID string, checkpointID int64) (_ *Checkpoint, err error) {
	const op = "GetCheckpointDetails"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "job id", jobID); err != nil {
		return nil, err
	}
	var out Checkpoint
	if err := c.getJSON(ctx, baseURL, op, &out, "jobs", jobID, "checkpoints", "details", strconv.FormatInt(checkpointID, 10)); err != nil {
		return nil, err
	}
	out.checkPath()
	return &out, nil
}
