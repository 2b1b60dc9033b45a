package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
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
	body, err := req.forRelease()
	if err != nil {
		return "", invalid(op, err)
	}
	var out struct {
		JobID string `json:"jobid"`
	}
	status, _, err := c.send(ctx, baseURL, request{
		op:      op,
		method:  http.MethodPost,
		path:    []string{"jars", jarID, "run"},
		body:    body,
		out:     &out,
		timeout: c.cfg.SubmitTimeout,
		policy:  submitPolicy,
	})
	if err != nil {
		return "", err
	}
	if out.JobID == "" {
		return "", &Error{Method: op, StatusCode: status, Message: "answer carries no jobid",
			Cause: fmt.Errorf("%w: no jobid", errDecode)}
	}
	return out.JobID, nil
}

// jarContentType is what Flink's web frontend sends with an uploaded jar; Flink does not check it.
const jarContentType = "application/x-java-archive"

// UploadJar implements API. The jar's file part is named "jarfile", as in Flink's own curl
// example; Flink takes the one file of the request whatever its part is called.
func (c *Client) UploadJar(ctx context.Context, baseURL, name string, body io.Reader) (_ string, err error) {
	const op = "UploadJar"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "jar name", name); err != nil {
		return "", err
	}
	if body == nil {
		return "", invalid(op, errors.New("jar body must not be nil"))
	}
	// Flink keeps only the base name, and a name with a path would be stored under a different one.
	if strings.ContainsAny(name, `/\`) {
		return "", invalid(op, fmt.Errorf("jar name %q must not contain a path", name))
	}
	var out struct {
		Filename string `json:"filename"`
		Status   string `json:"status"`
	}
	status, answer, err := c.send(ctx, baseURL, request{
		op:      op,
		method:  http.MethodPost,
		path:    []string{"jars", "upload"},
		upload:  &fileUpload{field: "jarfile", name: name, contentType: jarContentType, body: body},
		out:     &out,
		timeout: c.cfg.SubmitTimeout,
		policy:  idempotentWritePolicy,
	})
	if err != nil {
		return "", err
	}
	// filename is the jar's path on the JobManager; its base name is the jar id.
	id := path.Base(out.Filename)
	if out.Status != "success" || out.Filename == "" || id == "." || id == "/" {
		return "", &Error{Method: op, StatusCode: status, Message: "answer carries no uploaded filename: " + bodyExcerpt(answer, maxRawMessage),
			Cause: fmt.Errorf("%w: no filename", errDecode)}
	}
	return id, nil
}

// DeleteJar implements API.
func (c *Client) DeleteJar(ctx context.Context, baseURL, jarID string) (err error) {
	const op = "DeleteJar"
	defer c.metrics.observe(op, time.Now(), &err)
	if err := requireID(op, "jar id", jarID); err != nil {
		return err
	}
	_, _, err = c.send(ctx, baseURL, request{
		op:      op,
		method:  http.MethodDelete,
		path:    []string{"jars", jarID},
		timeout: c.cfg.PostTimeout,
		policy:  idempotentWritePolicy,
	})
	return err
}

// IsJarNotFound reports whether Flink answered that it has no jar of the id: DELETE /jars/:jarid
// answers 400 "File <id> does not exist in <dir>.", not 404.
func IsJarNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == http.StatusBadRequest && strings.Contains(e.Message, "does not exist in")
}
