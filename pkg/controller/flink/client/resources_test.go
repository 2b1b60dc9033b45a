package client

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
)

const (
	sourceVertex = "cbc357ccb763df2852fee8c4fc7d55f2"
	sinkVertex   = "90bea66de1c231edf33913ecd54406c1"

	resourceRequirementsBody = `{"cbc357ccb763df2852fee8c4fc7d55f2":{"parallelism":{"lowerBound":1,"upperBound":2}},
"90bea66de1c231edf33913ecd54406c1":{"parallelism":{"lowerBound":1,"upperBound":4}}}`

	defaultSchedulerBody = `{"errors":["Internal server error.","<Exception on server side:\njava.lang.UnsupportedOperationException: The DefaultScheduler does not support changing the parallelism without a job restart. This feature is currently only expected to work with the AdaptiveScheduler.\n\tat org.apache.flink.runtime.scheduler.SchedulerNG.updateJobResourceRequirements(SchedulerNG.java:214)\n\tat org.apache.flink.runtime.jobmaster.JobMaster.updateJobResourceRequirements(JobMaster.java:1156)\n\nEnd of exception on server side>"]}`

	requirementsInvalidBody = `{"errors":["org.apache.flink.runtime.rest.handler.RestHandlerException: The request is incomplete, missing job vertex [90bea66de1c231edf33913ecd54406c1] resource requirements.\n\tat org.apache.flink.runtime.dispatcher.Dispatcher.validateMaxParallelism(Dispatcher.java:1290)\n"]}`

	// Flink never formats this message: the "[%s]" is what it sends.
	requirementsConflictBody = `{"errors":["org.apache.flink.runtime.rest.handler.RestHandlerException: Another update to the job [%s] resource requirements is in progress.\n\tat org.apache.flink.runtime.dispatcher.Dispatcher.updateJobResourceRequirements(Dispatcher.java:1238)\n"]}`

	requirementsUnknownJobBody = `{"errors":["Internal server error.","<Exception on server side:\norg.apache.flink.runtime.messages.FlinkJobNotFoundException: Could not find Flink job (3f2a1b4c5d6e7f8091a2b3c4d5e6f708)\n\tat org.apache.flink.runtime.dispatcher.Dispatcher.getJobMasterGateway(Dispatcher.java:1487)\n\nEnd of exception on server side>"]}`
)

func TestGetJobResourceRequirements(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{
		"GET /jobs/" + testJobID + "/resource-requirements": {{status: 200, body: resourceRequirementsBody}},
	})
	got, err := newTestClient(DefaultConfig()).GetJobResourceRequirements(context.Background(), srv.URL, testJobID)
	require.NoError(t, err)
	assert.Equal(t, JobResourceRequirements{
		sourceVertex: {Parallelism: ParallelismBounds{LowerBound: 1, UpperBound: 2}},
		sinkVertex:   {Parallelism: ParallelismBounds{LowerBound: 1, UpperBound: 4}},
	}, got)
}

func TestUpdateJobResourceRequirementsSendsFlinkKeys(t *testing.T) {
	fake, srv := newFakeJobManager(t, "", map[string][]reply{
		"PUT /jobs/" + testJobID + "/resource-requirements": {{status: 200, body: `{}`}},
	})
	err := newTestClient(DefaultConfig()).UpdateJobResourceRequirements(context.Background(), srv.URL, testJobID,
		JobResourceRequirements{
			sourceVertex: {Parallelism: ParallelismBounds{LowerBound: 1, UpperBound: 2}},
			sinkVertex:   {Parallelism: ParallelismBounds{LowerBound: -1, UpperBound: 4}},
		})
	require.NoError(t, err)
	req := fake.last()
	assert.Equal(t, "PUT", req.method)
	assert.Equal(t, "application/json", req.contentType)
	var got, want any
	require.NoError(t, json.Unmarshal([]byte(req.body), &got))
	require.NoError(t, json.Unmarshal([]byte(`{
		"cbc357ccb763df2852fee8c4fc7d55f2":{"parallelism":{"lowerBound":1,"upperBound":2}},
		"90bea66de1c231edf33913ecd54406c1":{"parallelism":{"lowerBound":-1,"upperBound":4}}}`), &want))
	assert.Equal(t, want, got)
}

func TestResourceRequirementsErrors(t *testing.T) {
	tests := []struct {
		name          string
		method        string
		reply         reply
		wantRetryable bool
		wantUnsupp    bool
		wantMessage   string
	}{
		{name: "GET with the DefaultScheduler", method: "GET", reply: reply{status: 500, body: defaultSchedulerBody},
			wantUnsupp: true, wantMessage: "java.lang.UnsupportedOperationException: The DefaultScheduler does not support"},
		{name: "PUT with the DefaultScheduler", method: "PUT", reply: reply{status: 500, body: defaultSchedulerBody},
			wantUnsupp: true, wantMessage: "only expected to work with the AdaptiveScheduler."},
		{name: "invalid requirements", method: "PUT", reply: reply{status: 400, body: requirementsInvalidBody},
			wantMessage: "The request is incomplete, missing job vertex [" + sinkVertex + "] resource requirements."},
		{name: "concurrent update", method: "PUT", reply: reply{status: 409, body: requirementsConflictBody},
			wantRetryable: true, wantMessage: "is in progress."},
		{name: "unknown job", method: "PUT", reply: reply{status: 500, body: requirementsUnknownJobBody},
			wantRetryable: true, wantMessage: "FlinkJobNotFoundException: Could not find Flink job (" + testJobID + ")"},
		{name: "leader election", method: "GET", reply: reply{status: 503, body: leaderElectionBody}, wantRetryable: true},
		{name: "timeout", method: "PUT", reply: reply{status: 200, body: `{}`, delay: 2 * time.Second},
			wantRetryable: true, wantMessage: "no answer within"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newFakeJobManager(t, "", map[string][]reply{
				tt.method + " /jobs/" + testJobID + "/resource-requirements": {tt.reply},
			})
			c := newTestClient(Config{GetTimeout: 50 * time.Millisecond, PostTimeout: 50 * time.Millisecond})
			var err error
			if tt.method == "GET" {
				var got JobResourceRequirements
				got, err = c.GetJobResourceRequirements(context.Background(), srv.URL, testJobID)
				assert.Nil(t, got)
			} else {
				err = c.UpdateJobResourceRequirements(context.Background(), srv.URL, testJobID, JobResourceRequirements{
					sourceVertex: {Parallelism: ParallelismBounds{LowerBound: 1, UpperBound: 2}},
				})
			}
			require.Error(t, err)
			assert.Equal(t, tt.wantRetryable, IsRetryable(err))
			assert.Equal(t, tt.wantUnsupp, IsUnsupported(err))
			assert.False(t, IsNotFound(err))
			assert.Contains(t, err.Error(), tt.wantMessage)
		})
	}
}

func TestUpdateJobResourceRequirementsRejectsEmptyRequirements(t *testing.T) {
	fake, srv := newFakeJobManager(t, "", nil)
	err := newTestClient(DefaultConfig()).UpdateJobResourceRequirements(context.Background(), srv.URL, testJobID, nil)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 0, e.StatusCode)
	assert.False(t, IsRetryable(err))
	assert.Empty(t, fake.received())
}

func TestIsUnsupportedNeedsTheException(t *testing.T) {
	assert.False(t, IsUnsupported(nil))
	assert.False(t, IsUnsupported(&Error{StatusCode: 500, Message: "java.io.IOException: disk full"}))
	assert.False(t, IsUnsupported(&Error{StatusCode: 400, Message: unsupportedOperation}))
	assert.True(t, IsUnsupported(&Error{StatusCode: 500, Message: unsupportedOperation + ": nope"}))
}

// TestResourceRequirementsAgainstTheSimulator checks that the client and the Flink simulator
// agree on the wire format and on the errors the operator branches on.
func TestResourceRequirementsAgainstTheSimulator(t *testing.T) {
	ctx := context.Background()
	start := func(t *testing.T, config map[string]string) (*clocktesting.FakeClock, string, string, []string) {
		clk := clocktesting.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		jm := flinksim.NewJobManager(flinksim.Options{Clock: clk, FlinkConfig: config, TaskManagers: 2})
		srv := httptest.NewServer(jm.Handler())
		t.Cleanup(srv.Close)
		c := newTestClient(DefaultConfig())
		id, err := c.SubmitJob(ctx, srv.URL, "app.jar", SubmitJobRequest{Parallelism: 2})
		require.NoError(t, err)
		clk.Step(time.Second)
		job, err := c.GetJob(ctx, srv.URL, id)
		require.NoError(t, err)
		require.Equal(t, JobRunning, job.State)
		var vertices []string
		for _, v := range job.Vertices {
			vertices = append(vertices, v.ID)
		}
		return clk, srv.URL, id, vertices
	}
	bounds := func(vertices []string, lower, upper int32) JobResourceRequirements {
		req := JobResourceRequirements{}
		for _, v := range vertices {
			req[v] = VertexResourceRequirements{Parallelism: ParallelismBounds{LowerBound: lower, UpperBound: upper}}
		}
		return req
	}

	t.Run("adaptive scheduler", func(t *testing.T) {
		clk, url, id, vertices := start(t, map[string]string{
			"jobmanager.scheduler": "adaptive", "taskmanager.numberOfTaskSlots": "2",
			"jobmanager.adaptive-scheduler.scaling-interval.min": "0s",
		})
		c := newTestClient(DefaultConfig())
		got, err := c.GetJobResourceRequirements(ctx, url, id)
		require.NoError(t, err)
		assert.Equal(t, bounds(vertices, 1, 2), got)

		require.NoError(t, c.UpdateJobResourceRequirements(ctx, url, id, bounds(vertices, 1, 4)))
		clk.Step(time.Second)
		job, err := c.GetJob(ctx, url, id)
		require.NoError(t, err)
		assert.Equal(t, JobRunning, job.State)
		assert.Equal(t, int32(4), job.Parallelism())

		err = c.UpdateJobResourceRequirements(ctx, url, id, bounds(vertices[:1], 1, 4))
		assert.False(t, IsRetryable(err))
		assert.Equal(t, 400, err.(*Error).StatusCode)
		assert.Contains(t, err.Error(), "The request is incomplete, missing job vertex ["+vertices[1]+"]")
	})

	t.Run("default scheduler", func(t *testing.T) {
		_, url, id, vertices := start(t, map[string]string{"taskmanager.numberOfTaskSlots": "2"})
		c := newTestClient(DefaultConfig())
		_, err := c.GetJobResourceRequirements(ctx, url, id)
		assert.True(t, IsUnsupported(err), "%v", err)
		assert.False(t, IsRetryable(err))
		err = c.UpdateJobResourceRequirements(ctx, url, id, bounds(vertices, 1, 4))
		assert.True(t, IsUnsupported(err), "%v", err)
		assert.False(t, IsRetryable(err))
	})
}
