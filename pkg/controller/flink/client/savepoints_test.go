package client

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTriggerSavepointSendsFlinkKeys(t *testing.T) {
	tests := []struct {
		name     string
		req      SavepointRequest
		wantBody map[string]any
	}{
		{
			name:     "plain savepoint sends cancel-job false only",
			req:      SavepointRequest{},
			wantBody: map[string]any{"cancel-job": false},
		},
		{
			name: "cancel with savepoint",
			req:  SavepointRequest{TargetDirectory: "s3://bucket/sp", CancelJob: true, TriggerID: testTriggerID},
			wantBody: map[string]any{"target-directory": "s3://bucket/sp", "cancel-job": true,
				"triggerId": testTriggerID},
		},
		{
			name:     "Flink 1.15 and later take a trigger id and a format",
			req:      SavepointRequest{TriggerID: testTriggerID, FormatType: "NATIVE", FlinkVersion: "1.15.4"},
			wantBody: map[string]any{"cancel-job": false, "triggerId": testTriggerID, "formatType": "NATIVE"},
		},
		{
			// Flink before 1.15 refuses them (400): it picks the id, which the caller follows.
			name:     "no trigger id or format before Flink 1.15",
			req:      SavepointRequest{CancelJob: true, TriggerID: testTriggerID, FormatType: "NATIVE", FlinkVersion: "1.11"},
			wantBody: map[string]any{"cancel-job": true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, srv := newFakeJobManager(t, "", map[string][]reply{
				"POST /jobs/" + testJobID + "/savepoints": {{status: 202, body: savepointTriggeredBody}},
			})
			id, err := newTestClient(DefaultConfig()).TriggerSavepoint(context.Background(), srv.URL, testJobID, tt.req)
			require.NoError(t, err)
			assert.Equal(t, testTriggerID, id)

			req := fake.last()
			assert.Equal(t, "application/json", req.contentType)
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(req.body), &got))
			assert.Equal(t, tt.wantBody, got)
		})
	}
}

func TestTriggerSavepointErrors(t *testing.T) {
	tests := []struct {
		name          string
		reply         reply
		wantRetryable bool
		wantMessage   string
	}{
		{
			name:        "no target directory configured",
			reply:       reply{status: 400, body: savepointNoDirBody},
			wantMessage: "Config key [state.savepoints.dir] is not set. Property [target-directory] must be provided.",
		},
		{name: "leader election", reply: reply{status: 503, body: leaderElectionBody}, wantRetryable: true},
		{name: "timeout", reply: reply{status: 202, body: savepointTriggeredBody, delay: 2 * time.Second},
			wantRetryable: true, wantMessage: "no answer within"},
		{name: "202 without request-id", reply: reply{status: 202, body: `{}`}, wantMessage: "no request-id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newFakeJobManager(t, "", map[string][]reply{
				"POST /jobs/" + testJobID + "/savepoints": {tt.reply},
			})
			c := newTestClient(Config{PostTimeout: 50 * time.Millisecond})
			_, err := c.TriggerSavepoint(context.Background(), srv.URL, testJobID, SavepointRequest{})
			require.Error(t, err)
			assert.Equal(t, tt.wantRetryable, IsRetryable(err))
			assert.Contains(t, err.Error(), tt.wantMessage)
		})
	}
}

func TestSavepointStatusPolling(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{
		"GET /jobs/" + testJobID + "/savepoints/" + testTriggerID: {
			{status: 200, body: savepointInProgressBody},
			{status: 200, body: savepointCompletedBody},
		},
	})
	c := newTestClient(DefaultConfig())

	st, err := c.GetSavepointStatus(context.Background(), srv.URL, testJobID, testTriggerID)
	require.NoError(t, err)
	assert.Equal(t, &SavepointStatus{State: SavepointInProgress}, st)
	assert.True(t, st.InProgress())
	assert.False(t, st.Succeeded())
	assert.False(t, st.Failed())

	st, err = c.GetSavepointStatus(context.Background(), srv.URL, testJobID, testTriggerID)
	require.NoError(t, err)
	assert.Equal(t, &SavepointStatus{State: SavepointCompleted,
		Location: "s3://bucket/sp/savepoint-3f2a1b-8a68e674325b"}, st)
	assert.False(t, st.InProgress())
	assert.True(t, st.Succeeded())
	assert.False(t, st.Failed())
}

func TestSavepointStatusFailures(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		cause string
	}{
		{
			name: "tasks not running",
			body: savepointFailedBody,
			cause: "java.util.concurrent.CompletionException: org.apache.flink.runtime.checkpoint.CheckpointException: " +
				"Checkpoint triggering task Source: Socket Stream (1/1) of job " + testJobID +
				" is not being executed at the moment. Aborting checkpoint. Failure reason: Not all required tasks are currently running.",
		},
		{
			name:  "unknown job",
			body:  savepointUnknownJobBody,
			cause: "org.apache.flink.runtime.messages.FlinkJobNotFoundException: Could not find Flink job (" + testJobID + ")",
		},
		{
			name:  "class without stack trace",
			body:  `{"status":{"id":"COMPLETED"},"operation":{"failure-cause":{"class":"java.io.IOException"}}}`,
			cause: "java.io.IOException",
		},
		{
			name: "completed without location",
			body: `{"status":{"id":"COMPLETED"},"operation":{}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newFakeJobManager(t, "", map[string][]reply{
				"GET /jobs/" + testJobID + "/savepoints/" + testTriggerID: {{status: 200, body: tt.body}},
			})
			st, err := newTestClient(DefaultConfig()).GetSavepointStatus(context.Background(), srv.URL, testJobID, testTriggerID)
			require.NoError(t, err)
			assert.Equal(t, SavepointCompleted, st.State)
			assert.Empty(t, st.Location)
			assert.Equal(t, tt.cause, st.FailureCause)
			assert.True(t, st.Failed())
			assert.False(t, st.Succeeded())
			assert.False(t, st.InProgress())
		})
	}
}

func TestSavepointStatusUnknownTriggerIsFinal(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{
		"GET /jobs/" + testJobID + "/savepoints/" + testTriggerID: {{status: 404, body: savepointUnknownTriggerBody}},
	})
	_, err := newTestClient(DefaultConfig()).GetSavepointStatus(context.Background(), srv.URL, testJobID, testTriggerID)
	require.Error(t, err)
	assert.True(t, IsNotFound(err))
	assert.False(t, IsRetryable(err), "polling a forgotten trigger again can never succeed")
}
