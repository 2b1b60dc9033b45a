package client

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const runRoute = "POST /jars/" + testJarID + "/run"

func TestSubmitJobSendsRequest(t *testing.T) {
	tests := []struct {
		name     string
		req      SubmitJobRequest
		wantBody map[string]any
	}{
		{name: "empty request sends an empty object", req: SubmitJobRequest{}, wantBody: map[string]any{}},
		{
			name: "restore from savepoint",
			req: SubmitJobRequest{
				EntryClass:            "com.example.WordCount",
				ProgramArgsList:       []string{"--input", "s3://bucket/in"},
				Parallelism:           4,
				JobID:                 testJobID,
				AllowNonRestoredState: true,
				SavepointPath:         "s3://bucket/sp/savepoint-3f2a1b-8a68e674325b",
			},
			wantBody: map[string]any{
				"entryClass":            "com.example.WordCount",
				"programArgsList":       []any{"--input", "s3://bucket/in"},
				"parallelism":           float64(4),
				"jobId":                 testJobID,
				"allowNonRestoredState": true,
				"savepointPath":         "s3://bucket/sp/savepoint-3f2a1b-8a68e674325b",
			},
		},
		{
			name:     "legacy program args string",
			req:      SubmitJobRequest{ProgramArgs: "--port 9000", Parallelism: 2, FlinkVersion: "1.20"},
			wantBody: map[string]any{"programArgs": "--port 9000", "parallelism": float64(2)},
		},
		{
			name:     "the claim mode under its 1.20 name",
			req:      SubmitJobRequest{RestoreMode: "NO_CLAIM", FlinkVersion: "2.2"},
			wantBody: map[string]any{"claimMode": "NO_CLAIM"},
		},
		{
			name:     "the claim mode under its name before 1.20",
			req:      SubmitJobRequest{ClaimMode: "CLAIM", FlinkVersion: "1.19.2"},
			wantBody: map[string]any{"restoreMode": "CLAIM"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, srv := newFakeJobManager(t, "", map[string][]reply{runRoute: {{status: 200, body: submitOKBody}}})
			id, err := newTestClient(DefaultConfig()).SubmitJob(context.Background(), srv.URL, testJarID, tt.req)
			require.NoError(t, err)
			assert.Equal(t, testJobID, id)

			req := fake.last()
			assert.Equal(t, "/jars/"+testJarID+"/run", req.path)
			assert.Equal(t, "application/json", req.contentType)
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(req.body), &got))
			assert.Equal(t, tt.wantBody, got)
		})
	}
}

// A submission the release would refuse, or would run without what it names, is not sent.
func TestSubmitJobRefusesWhatTheReleaseLacks(t *testing.T) {
	for _, req := range []SubmitJobRequest{
		{ProgramArgs: "--port 9000", FlinkVersion: "2.0"}, // 2.x ignores it: the job would run without arguments
		{FlinkConfiguration: map[string]string{"a": "b"}, FlinkVersion: "1.16"},
		{ClaimMode: "NO_CLAIM", FlinkVersion: "1.14"},
	} {
		fake, srv := newFakeJobManager(t, "", map[string][]reply{runRoute: {{status: 200, body: submitOKBody}}})
		_, err := newTestClient(DefaultConfig()).SubmitJob(context.Background(), srv.URL, testJarID, req)
		require.Error(t, err, "%+v", req)
		assert.False(t, IsRetryable(err) || IsNoAnswer(err), "%v", err)
		assert.Empty(t, fake.received(), "%+v was sent", req)
	}
}

// TestSubmitJobErrors covers the SubmitJob row of the classification table in doc.go.
func TestSubmitJobErrors(t *testing.T) {
	tests := []struct {
		name          string
		reply         reply
		wantStatus    int
		wantRetryable bool
		wantMessage   string
	}{
		{
			name:       "missing jar names the jar file",
			reply:      reply{status: 500, body: submitMissingJarBody},
			wantStatus: 500,
			wantMessage: "org.apache.flink.runtime.rest.handler.RestHandlerException: Jar file " + missingJarPath +
				" does not exist",
		},
		{
			name:        "entry class not found",
			reply:       reply{status: 500, body: submitEntryClassMissingBody},
			wantStatus:  500,
			wantMessage: "java.lang.ClassNotFoundException: com.example.Missing",
		},
		{
			name:       "duplicate job id",
			reply:      reply{status: 400, body: submitDuplicateBody},
			wantStatus: 400,
			wantMessage: "org.apache.flink.runtime.rest.handler.RestHandlerException: Could not execute application." +
				" (caused by org.apache.flink.runtime.client.DuplicateJobSubmissionException: Job has already been submitted.)",
		},
		{
			name:          "other internal error is retryable",
			reply:         reply{status: 500, body: submitInternalErrorBody},
			wantStatus:    500,
			wantRetryable: true,
			wantMessage:   "java.util.concurrent.CompletionException: java.io.IOException: Could not create the BlobServer cache directory.",
		},
		{
			name:          "leader election is retryable",
			reply:         reply{status: 503, body: leaderElectionBody},
			wantStatus:    503,
			wantRetryable: true,
		},
		{
			name:        "proxy gateway error may have forwarded the request",
			reply:       reply{status: 502, body: proxyBadGatewayBody},
			wantStatus:  502,
			wantMessage: "502 Bad Gateway",
		},
		{
			name:        "timeout after sending is not retryable",
			reply:       reply{status: 200, body: submitOKBody, delay: 2 * time.Second},
			wantMessage: "no answer within 50ms",
		},
		{
			name:        "200 without jobid",
			reply:       reply{status: 200, body: `{}`},
			wantStatus:  200,
			wantMessage: "no jobid",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newFakeJobManager(t, "", map[string][]reply{runRoute: {tt.reply}})
			c := newTestClient(Config{SubmitTimeout: 50 * time.Millisecond})

			id, err := c.SubmitJob(context.Background(), srv.URL, testJarID, SubmitJobRequest{JobID: testJobID})
			require.Error(t, err)
			assert.Empty(t, id)
			var e *Error
			require.True(t, errors.As(err, &e), "want *Error, got %T", err)
			assert.Equal(t, "SubmitJob", e.Method)
			assert.Equal(t, tt.wantStatus, e.StatusCode)
			assert.Equal(t, tt.wantRetryable, IsRetryable(err))
			assert.Contains(t, e.Message, tt.wantMessage)
		})
	}
}

func TestSubmitJobTimeoutKeepsDeadlineCause(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{runRoute: {{status: 200, body: submitOKBody, delay: 2 * time.Second}}})
	_, err := newTestClient(Config{SubmitTimeout: 50 * time.Millisecond}).
		SubmitJob(context.Background(), srv.URL, testJarID, SubmitJobRequest{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded))
	assert.False(t, IsRetryable(err))
}

// A refused connection proves Flink never saw the request, so the submit may be retried.
func TestSubmitJobConnectionRefusedIsRetryable(t *testing.T) {
	_, srv := newFakeJobManager(t, "", nil)
	base := srv.URL
	srv.Close()

	_, err := newTestClient(DefaultConfig()).SubmitJob(context.Background(), base, testJarID, SubmitJobRequest{})
	require.Error(t, err)
	var e *Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, 0, e.StatusCode)
	assert.True(t, IsRetryable(err))
}
