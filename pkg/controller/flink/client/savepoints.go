package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// unknownSavepointTrigger starts the 404 message for a trigger id Flink does not know (any
// more): results are dropped 5 minutes after completion and on JobManager restart.
const unknownSavepointTrigger = "There is no savepoint operation"

// TriggerSavepoint implements API.
func (c *Client) TriggerSavepoint(ctx context.Context, baseURL, jobID string, req SavepointRequest) (_ string, err error) {
	const op = "TriggerSavepoint"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "job id", jobID); err != nil {
		return "", err
	}
	return c.trigger(ctx, op, baseURL, req.forRelease(), "jobs", jobID, "savepoints")
}

// trigger starts one of Flink's asynchronous operations (a savepoint, a checkpoint) and returns the
// request id Flink answers with, to poll it by.
func (c *Client) trigger(ctx context.Context, op, baseURL string, body any, path ...string) (string, error) {
	var out struct {
		RequestID string `json:"request-id"`
	}
	status, _, err := c.send(ctx, baseURL, request{
		op: op, method: http.MethodPost, path: path, body: body, out: &out,
		timeout: c.cfg.PostTimeout, policy: idempotentWritePolicy,
	})
	if err != nil {
		return "", err
	}
	if out.RequestID == "" {
		return "", &Error{Method: op, StatusCode: status, Message: "answer carries no request-id",
			Cause: fmt.Errorf("%w: no request-id", errDecode)}
	}
	return out.RequestID, nil
}

// savepointStatusBody is Flink's AsynchronousOperationResult for savepoints.
type savepointStatusBody struct {
	Status struct {
		ID string `json:"id"`
	} `json:"status"`
	Operation *struct {
		Location     string               `json:"location"`
		FailureCause *serializedThrowable `json:"failure-cause"`
	} `json:"operation"`
}

// serializedThrowable is how Flink ships a Java exception; serialized-throwable (Java
// serialisation) is ignored.
type serializedThrowable struct {
	Class      string `json:"class"`
	StackTrace string `json:"stack-trace"`
}

// GetSavepointStatus implements API.
func (c *Client) GetSavepointStatus(ctx context.Context, baseURL, jobID, triggerID string) (_ *SavepointStatus, err error) {
	const op = "GetSavepointStatus"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "job id", jobID); err != nil {
		return nil, err
	}
	if err := requireID(op, "trigger id", triggerID); err != nil {
		return nil, err
	}
	var out savepointStatusBody
	if err := c.getJSON(ctx, baseURL, op, &out, "jobs", jobID, "savepoints", triggerID); err != nil {
		var e *Error
		if errors.As(err, &e) && e.StatusCode == http.StatusNotFound &&
			strings.Contains(e.Message, unknownSavepointTrigger) {
			// The operation is lost for good; polling again cannot help, triggering again can.
			e.Retryable = false
		}
		return nil, err
	}
	st := &SavepointStatus{State: out.Status.ID}
	if out.Operation != nil {
		st.Location = out.Operation.Location
		st.FailureCause = out.Operation.FailureCause.summary()
	}
	if problem := statePathProblem(st.Location); problem != "" {
		// Not restored from, nor recorded: the savepoint failed as far as the operator can tell.
		st.Location, st.FailureCause = "", refusedPathCause(st.Location, problem)
	}
	return st, nil
}

// summary renders the exception as class and first stack-trace line (the trace's first line
// normally starts with the class already), plus the root cause when there is one.
func (t *serializedThrowable) summary() string {
	if t == nil {
		return ""
	}
	msg := summarizeTrace(t.StackTrace)
	switch {
	case msg == "":
		return t.Class
	case t.Class == "" || strings.HasPrefix(msg, t.Class):
		return msg
	default:
		return t.Class + ": " + msg
	}
}
