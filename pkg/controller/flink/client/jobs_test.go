package client

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadsDecodeFlinkBodies(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{
		"GET /overview":                           {{status: 200, body: overviewBody}},
		"GET /jobs":                               {{status: 200, body: jobsBody}},
		"GET /jobs/" + testJobID:                  {{status: 200, body: jobDetailsBody}},
		"GET /jobs/" + testJobID + "/exceptions":  {{status: 200, body: exceptionsBody}},
		"GET /jobs/" + testJobID + "/checkpoints": {{status: 200, body: checkpointsBody}},
		"GET /taskmanagers":                       {{status: 200, body: taskManagersBody}},
	})
	c := newTestClient(DefaultConfig())
	ctx := context.Background()

	ov, err := c.GetClusterOverview(ctx, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, ClusterOverview{TaskManagers: 2, SlotsTotal: 4, SlotsAvailable: 1, JobsRunning: 1,
		FlinkVersion: "1.20.0", FlinkCommit: "b1fe7b4"}, *ov)

	jobs, err := c.GetJobs(ctx, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, []JobSummary{{ID: testJobID, Status: JobRunning},
		{ID: "00000000000000000000000000000001", Status: JobCanceled}}, jobs)

	job, err := c.GetJob(ctx, srv.URL, testJobID)
	require.NoError(t, err)
	assert.Equal(t, testJobID, job.JID)
	assert.Equal(t, JobRunning, job.State)
	assert.Equal(t, int64(1700000000000), job.StartTime)
	assert.Equal(t, int64(-1), job.EndTime)
	assert.Equal(t, int64(1700000012345), job.Now)
	assert.Equal(t, "STREAMING", job.JobType)
	assert.Equal(t, int64(1700000000500), job.Timestamps.Running)
	require.Len(t, job.Vertices, 2)
	assert.Equal(t, 3, job.Vertices[1].Tasks.Running)
	assert.Equal(t, 1, job.Vertices[1].Tasks.Deploying)
	assert.Equal(t, int32(4), job.Parallelism())

	exc, err := c.GetJobExceptions(ctx, srv.URL, testJobID)
	require.NoError(t, err)
	require.Len(t, exc.ExceptionHistory.Entries, 1)
	entry := exc.ExceptionHistory.Entries[0]
	assert.Equal(t, "java.lang.RuntimeException", entry.ExceptionName)
	assert.Equal(t, "Flat Map -> Sink: Print (2/4)", entry.TaskName)
	assert.Equal(t, map[string]string{"type": "user"}, entry.FailureLabels)
	require.Len(t, entry.ConcurrentExceptions, 1)
	assert.Equal(t, "app-abc123-taskmanager-1-2", entry.ConcurrentExceptions[0].TaskManagerID)
	assert.True(t, strings.HasPrefix(exc.RootException, "java.lang.RuntimeException: boom"))

	cp, err := c.GetCheckpoints(ctx, srv.URL, testJobID)
	require.NoError(t, err)
	assert.Equal(t, CheckpointCounts{Restored: 1, Total: 7, InProgress: 1, Completed: 5, Failed: 1}, cp.Counts)
	require.NotNil(t, cp.Latest.Completed)
	assert.Equal(t, Checkpoint{ID: 9, Status: "COMPLETED", TriggerTimestamp: 1700000060000,
		LatestAckTimestamp: 1700000060090, StateSize: 9, EndToEndDuration: 90,
		ExternalPath:   "s3://bucket/ckpt/3f2a1b4c5d6e7f8091a2b3c4d5e6f708/chk-9",
		CheckpointType: "CHECKPOINT"}, *cp.Latest.Completed)
	assert.Nil(t, cp.Latest.Savepoint)
	require.NotNil(t, cp.Latest.Failed)
	assert.Equal(t, "Checkpoint expired before completing.", cp.Latest.Failed.FailureMessage)
	assert.Equal(t, &RestoredCheckpoint{ID: 3, RestoreTimestamp: 1700000000400, IsSavepoint: true,
		ExternalPath: "s3://bucket/sp/savepoint-3f2a1b-8a68e674325b"}, cp.Latest.Restored)
	require.Len(t, cp.History, 2)
	assert.Equal(t, "IN_PROGRESS", cp.History[0].Status)

	tms, err := c.GetTaskManagers(ctx, srv.URL)
	require.NoError(t, err)
	require.Len(t, tms, 1)
	assert.Equal(t, TaskManager{ID: "app-abc123-taskmanager-1-1",
		Path: "pekko.tcp://flink@10.0.0.5:6122/user/rpc/taskmanager_0", DataPort: 6121, JMXPort: -1,
		TimeSinceLastHeartbeat: 1700000010000, SlotsNumber: 2, FreeSlots: 1,
		Hardware: TaskManagerHardware{CPUCores: 4, PhysicalMemory: 8589934592, FreeMemory: 402653184,
			ManagedMemory: 536870912}}, tms[0])
}

func TestGetCheckpointsWithoutCheckpointing(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{
		"GET /jobs/" + testJobID + "/checkpoints": {{status: 404, body: checkpointingDisabledBody}},
	})
	cp, err := newTestClient(DefaultConfig()).GetCheckpoints(context.Background(), srv.URL, testJobID)
	require.NoError(t, err)
	assert.Equal(t, &CheckpointStats{}, cp)
}

// TestReadErrors covers the GET column of the classification table in doc.go.
func TestReadErrors(t *testing.T) {
	tests := []struct {
		name          string
		reply         reply
		wantStatus    int
		wantRetryable bool
		wantNotFound  bool
		wantMessage   string
	}{
		{
			name:          "unknown job is retryable and not found",
			reply:         reply{status: 404, body: jobNotFoundBody},
			wantStatus:    404,
			wantRetryable: true,
			wantNotFound:  true,
			wantMessage: "org.apache.flink.runtime.rest.NotFoundException: Job " + testJobID + " not found" +
				" (caused by org.apache.flink.runtime.messages.FlinkJobNotFoundException: Could not find Flink job (" + testJobID + "))",
		},
		{
			name:          "leader election is retryable",
			reply:         reply{status: 503, body: leaderElectionBody},
			wantStatus:    503,
			wantRetryable: true,
			wantMessage:   "Service temporarily unavailable due to an ongoing leader election. Please refresh.",
		},
		{
			name:        "malformed job id is final",
			reply:       reply{status: 400, body: badJobIDBody},
			wantStatus:  400,
			wantMessage: `Bad request, could not parse parameters: Cannot resolve path parameter (jobid) from value "zz".`,
		},
		{
			name:          "proxy HTML is retryable and truncated",
			reply:         reply{status: 502, body: proxyBadGatewayBody + strings.Repeat(" <p>padding</p>", 40)},
			wantStatus:    502,
			wantRetryable: true,
			wantMessage:   "<html><head><title>502 Bad Gateway</title>",
		},
		{
			name:          "timeout is retryable",
			reply:         reply{status: 200, body: jobDetailsBody, delay: 2 * time.Second},
			wantRetryable: true,
			wantMessage:   "no answer within 50ms",
		},
		{
			name:        "undecodable 200 is final",
			reply:       reply{status: 200, body: "<html>Apache Flink Web Dashboard</html>"},
			wantStatus:  200,
			wantMessage: "unexpected response body: <html>Apache Flink Web Dashboard</html>",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newFakeJobManager(t, "", map[string][]reply{"GET /jobs/" + testJobID: {tt.reply}})
			c := newTestClient(Config{GetTimeout: 50 * time.Millisecond})

			job, err := c.GetJob(context.Background(), srv.URL, testJobID)
			require.Error(t, err)
			assert.Nil(t, job)
			var e *Error
			require.True(t, errors.As(err, &e), "want *Error, got %T", err)
			assert.Equal(t, "GetJob", e.Method)
			assert.Equal(t, tt.wantStatus, e.StatusCode)
			assert.Equal(t, tt.wantRetryable, IsRetryable(err))
			assert.Equal(t, tt.wantNotFound, IsNotFound(err))
			assert.False(t, IsConflict(err))
			assert.Contains(t, e.Message, tt.wantMessage)
			assert.LessOrEqual(t, len(e.Message), maxRawMessage+len("unexpected response body: ")+3)
			assert.NotContains(t, e.Message, "\n")
		})
	}
}

func TestCancelJob(t *testing.T) {
	tests := []struct {
		name          string
		reply         reply
		wantErr       bool
		wantRetryable bool
		wantNotFound  bool
		wantConflict  bool
		wantMessage   string
	}{
		{name: "accepted", reply: reply{status: 202, body: `{}`}},
		{
			name:         "unknown job",
			reply:        reply{status: 404, body: cancelUnknownJobBody},
			wantErr:      true,
			wantNotFound: true,
			wantMessage:  "Job could not be found.",
		},
		{
			name:         "job already finished",
			reply:        reply{status: 409, body: cancelFinishedJobBody},
			wantErr:      true,
			wantConflict: true,
			wantMessage:  "already reached another terminal state (FINISHED)",
		},
		{
			name:          "cancellation timed out in Flink",
			reply:         reply{status: 408, body: cancelTimeoutBody},
			wantErr:       true,
			wantRetryable: true,
			wantMessage:   "Job cancellation timed out.",
		},
		{
			name:          "leader election",
			reply:         reply{status: 503, body: leaderElectionBody},
			wantErr:       true,
			wantRetryable: true,
		},
		{
			name:          "client timeout",
			reply:         reply{status: 202, body: `{}`, delay: 2 * time.Second},
			wantErr:       true,
			wantRetryable: true,
			wantMessage:   "no answer within 50ms",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, srv := newFakeJobManager(t, "", map[string][]reply{"PATCH /jobs/" + testJobID: {tt.reply}})
			c := newTestClient(Config{PostTimeout: 50 * time.Millisecond})

			err := c.CancelJob(context.Background(), srv.URL, testJobID)

			req := fake.last()
			assert.Equal(t, "mode=cancel", req.query)
			assert.Empty(t, req.body)
			if !tt.wantErr {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.wantRetryable, IsRetryable(err))
			assert.Equal(t, tt.wantNotFound, IsNotFound(err))
			assert.Equal(t, tt.wantConflict, IsConflict(err))
			assert.Contains(t, err.Error(), tt.wantMessage)
		})
	}
}

func TestBaseURLWithPathPrefix(t *testing.T) {
	const prefix = "/api/v1/namespaces/flink/services/app-abc123:8081/proxy"
	fake, srv := newFakeJobManager(t, prefix, map[string][]reply{
		"GET /jobs/" + testJobID:           {{status: 200, body: jobDetailsBody}},
		"PATCH /jobs/" + testJobID:         {{status: 202, body: `{}`}},
		"POST /jars/" + testJarID + "/run": {{status: 200, body: submitOKBody}},
	})
	c := newTestClient(DefaultConfig())
	ctx := context.Background()

	for _, base := range []string{srv.URL + prefix, srv.URL + prefix + "/"} {
		_, err := c.GetJob(ctx, base, testJobID)
		require.NoError(t, err, base)
		assert.Equal(t, prefix+"/jobs/"+testJobID, fake.last().path)
	}
	require.NoError(t, c.CancelJob(ctx, srv.URL+prefix, testJobID))
	assert.Equal(t, prefix+"/jobs/"+testJobID, fake.last().path)
	assert.Equal(t, "mode=cancel", fake.last().query)

	_, err := c.SubmitJob(ctx, srv.URL+prefix, testJarID, SubmitJobRequest{})
	require.NoError(t, err)
	assert.Equal(t, prefix+"/jars/"+testJarID+"/run", fake.last().path)

	// Without the prefix the fake answers like Flink for an unknown route.
	_, err = c.GetJob(ctx, srv.URL, testJobID)
	assert.True(t, IsNotFound(err))
}

func TestInvalidArguments(t *testing.T) {
	fake, srv := newFakeJobManager(t, "", nil)
	c := newTestClient(DefaultConfig())
	ctx := context.Background()

	tests := []struct {
		name string
		call func() error
	}{
		{"empty job id", func() error { _, err := c.GetJob(ctx, srv.URL, ""); return err }},
		{"empty trigger id", func() error { _, err := c.GetSavepointStatus(ctx, srv.URL, testJobID, " "); return err }},
		{"empty jar id", func() error { _, err := c.SubmitJob(ctx, srv.URL, "", SubmitJobRequest{}); return err }},
		{"no scheme", func() error { _, err := c.GetJobs(ctx, "app-abc123.ns:8081"); return err }},
		{"unparsable", func() error { return c.CancelJob(ctx, "http://[::1", testJobID) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var e *Error
			require.True(t, errors.As(err, &e), "want *Error, got %v", err)
			assert.Equal(t, 0, e.StatusCode)
			assert.False(t, IsRetryable(err))
		})
	}
	assert.Empty(t, fake.received())
}

func TestUserAgentAndAccept(t *testing.T) {
	fake, srv := newFakeJobManager(t, "", map[string][]reply{"GET /overview": {{status: 200, body: overviewBody}}})
	_, err := newTestClient(Config{UserAgent: "flinkfsm-test/1.0"}).GetClusterOverview(context.Background(), srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "flinkfsm-test/1.0", fake.last().userAgent)
	assert.Equal(t, http.MethodGet, fake.last().method)
}
