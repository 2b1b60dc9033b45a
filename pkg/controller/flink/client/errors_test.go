package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{
			name:   "unknown route",
			status: 404,
			body:   `{"errors":["Not found: /v1/foo"]}`,
			want:   "Not found: /v1/foo",
		},
		{
			name:   "handler exception keeps first line and root cause",
			status: 409,
			body:   cancelFinishedJobBody,
			want: "org.apache.flink.runtime.rest.handler.RestHandlerException: Job cancellation failed because the job has already reached another terminal state (FINISHED)." +
				" (caused by org.apache.flink.runtime.messages.FlinkJobTerminatedWithoutCancellationException: Flink job (" + testJobID + ") was not canceled, but instead FINISHED.)",
		},
		{
			name:   "internal server error takes the root cause from errors[1]",
			status: 500,
			body:   submitMissingJarBody,
			want:   "org.apache.flink.runtime.rest.handler.RestHandlerException: Jar file " + missingJarPath + " does not exist",
		},
		{
			name:   "internal server error without cause takes the first exception line",
			status: 500,
			body:   submitInternalErrorBody,
			want:   "java.util.concurrent.CompletionException: java.io.IOException: Could not create the BlobServer cache directory.",
		},
		{
			name:   "internal server error alone",
			status: 500,
			body:   `{"errors":["Internal server error."]}`,
			want:   "Internal server error.",
		},
		{
			name:   "non-JSON body is collapsed to one line",
			status: 502,
			body:   "<html>\n  <body>Bad Gateway</body>\n</html>\n",
			want:   "<html> <body>Bad Gateway</body> </html>",
		},
		{
			name:   "non-JSON body is truncated",
			status: 502,
			body:   strings.Repeat("x", 1000),
			want:   strings.Repeat("x", maxRawMessage) + "...",
		},
		{
			name:   "empty body falls back to the status text",
			status: 503,
			body:   "",
			want:   "Service Unavailable",
		},
		{
			name:   "JSON without errors is shown raw",
			status: 500,
			body:   `{"message":"boom"}`,
			want:   `{"message":"boom"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, errorMessage(tt.status, []byte(tt.body)))
		})
	}
}

func TestTruncateKeepsUTF8(t *testing.T) {
	s := strings.Repeat("é", 10) // two bytes each
	got := truncate(s, 5)
	assert.Equal(t, "éé...", got)
}

func TestPredicates(t *testing.T) {
	notFound := &Error{Method: "GetJob", StatusCode: 404, Message: "Job x not found", Retryable: true}
	conflict := &Error{Method: "CancelJob", StatusCode: 409, Message: "already terminal"}
	tests := []struct {
		name                          string
		err                           error
		retryable, notFound, conflict bool
	}{
		{name: "nil", err: nil},
		{name: "foreign error counts as retryable", err: context.DeadlineExceeded, retryable: true},
		{name: "not found", err: notFound, retryable: true, notFound: true},
		{name: "wrapped not found", err: fmt.Errorf("observe: %w", notFound), retryable: true, notFound: true},
		{name: "conflict", err: conflict, conflict: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.retryable, IsRetryable(tt.err))
			assert.Equal(t, tt.notFound, IsNotFound(tt.err))
			assert.Equal(t, tt.conflict, IsConflict(tt.err))
		})
	}
}

func TestErrorText(t *testing.T) {
	cause := errors.New("dial tcp 10.0.0.1:8081: connect: connection refused")
	transport := &Error{Method: "GetJobs", Message: cause.Error(), Retryable: true, Cause: cause}
	assert.Equal(t, "flink GetJobs: dial tcp 10.0.0.1:8081: connect: connection refused", transport.Error())
	assert.ErrorIs(t, transport, cause)

	status := &Error{Method: "CancelJob", StatusCode: 409, Message: "already terminal"}
	assert.Equal(t, "flink CancelJob: HTTP 409: already terminal", status.Error())
}

func TestIsGloballyTerminal(t *testing.T) {
	for state, want := range map[string]bool{
		JobInitializing: false, JobCreated: false, JobRunning: false, JobFailing: false,
		JobFailed: true, JobCancelling: false, JobCanceled: true, JobFinished: true,
		JobRestarting: false, JobSuspended: false, JobReconciling: false, "": false,
	} {
		assert.Equal(t, want, IsGloballyTerminal(state), state)
	}
}

func TestParallelismOfJobWithoutVertices(t *testing.T) {
	assert.Equal(t, int32(0), (&JobDetails{State: JobInitializing}).Parallelism())
}
