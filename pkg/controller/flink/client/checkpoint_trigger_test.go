package client

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A manual checkpoint is triggered with the caller's trigger id, polled by it, and its path read
// from its statistics; a failure carries Flink's cause, and an operation Flink forgot is not
// polled again.
func TestManualCheckpointTriggerStatusAndPath(t *testing.T) {
	fake, srv := newFakeJobManager(t, "", map[string][]reply{
		"POST /jobs/" + testJobID + "/checkpoints": {{status: 202, body: `{"request-id":"` + testTriggerID + `"}`}},
		"GET /jobs/" + testJobID + "/checkpoints/" + testTriggerID: {
			{status: 200, body: `{"status":{"id":"IN_PROGRESS"},"operation":null}`},
			{status: 200, body: `{"status":{"id":"COMPLETED"},"operation":{"checkpointId":7}}`},
			{status: 200, body: `{"status":{"id":"COMPLETED"},"operation":{"failureCause":{"class":"java.lang.Exception","stack-trace":"java.lang.Exception: declined\n\tat x"}}}`},
			{status: 404, body: `{"errors":["There is no checkpoint operation with triggerId=` + testTriggerID + ` for job ` + testJobID + `."]}`},
		},
		"GET /jobs/" + testJobID + "/checkpoints/details/7": {{status: 200, body: `{"id":7,"status":"COMPLETED","is_savepoint":false,"external_path":"file:/cp/chk-7"}`}},
	})
	c := newTestClient(DefaultConfig())
	ctx := context.Background()
	id, err := c.TriggerCheckpoint(ctx, srv.URL, testJobID, CheckpointRequest{CheckpointType: "CONFIGURED", TriggerID: testTriggerID})
	require.NoError(t, err)
	assert.Equal(t, testTriggerID, id)
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(fake.last().body), &body))
	assert.Equal(t, map[string]any{"checkpointType": "CONFIGURED", "triggerId": testTriggerID}, body)

	st, err := c.GetCheckpointStatus(ctx, srv.URL, testJobID, testTriggerID)
	require.NoError(t, err)
	assert.False(t, st.Succeeded() || st.Failed())
	st, err = c.GetCheckpointStatus(ctx, srv.URL, testJobID, testTriggerID)
	require.NoError(t, err)
	assert.True(t, st.Succeeded())
	assert.Equal(t, int64(7), st.CheckpointID)
	cp, err := c.GetCheckpointDetails(ctx, srv.URL, testJobID, 7)
	require.NoError(t, err)
	assert.Equal(t, "file:/cp/chk-7", cp.ExternalPath)
	st, err = c.GetCheckpointStatus(ctx, srv.URL, testJobID, testTriggerID)
	require.NoError(t, err)
	assert.True(t, st.Failed())
	assert.Contains(t, st.FailureCause, "declined")
	_, err = c.GetCheckpointStatus(ctx, srv.URL, testJobID, testTriggerID)
	require.Error(t, err)
	assert.True(t, IsNotFound(err))
	assert.False(t, IsRetryable(err), "a forgotten operation is not polled again")
}
