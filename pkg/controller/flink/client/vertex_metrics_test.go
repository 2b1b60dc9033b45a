package client

import (
	"context"
	"math"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
)

const testVertexID = "cbc357ccb763df2852fee8c4fc7d55f2"

// What an autoscaler reads of a job under load, from the simulator: each vertex's parallelism and
// the metrics of its subtasks, a Kafka source's partitions and backlog among them.
func TestVertexMetricsOfASimulatedJobUnderLoad(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	jm := flinksim.NewJobManager(flinksim.Options{Clock: clk, TaskManagers: 2,
		FlinkConfig: map[string]string{"taskmanager.numberOfTaskSlots": "2"}})
	require.NoError(t, jm.SetLoad(flinksim.Load{
		Vertices: []flinksim.LoadVertex{
			{Name: "Source: Kafka", Capacity: 1000, Partitions: 4, PendingRecords: true},
			{Name: "Map", Capacity: 400},
			{Name: "Sink: Print", Capacity: 5000},
		},
		Input: flinksim.Steps(500, flinksim.Step{At: time.Minute, Rate: 1400}),
	}))
	srv := httptest.NewServer(jm.Handler())
	t.Cleanup(srv.Close)
	c := newTestClient(DefaultConfig())
	id, err := c.SubmitJob(ctx, srv.URL, "app.jar", SubmitJobRequest{Parallelism: 2})
	require.NoError(t, err)
	clk.Step(2 * time.Minute)

	job, err := c.GetJob(ctx, srv.URL, id)
	require.NoError(t, err)
	require.Len(t, job.Vertices, 3)
	source, mapper := job.Vertices[0], job.Vertices[1]
	assert.Equal(t, "Source: Kafka", source.Name)
	assert.Equal(t, int32(2), mapper.Parallelism)
	assert.Equal(t, int32(128), mapper.MaxParallelism)

	names, err := c.VertexMetricNames(ctx, srv.URL, id, source.ID)
	require.NoError(t, err)
	assert.Equal(t, 4, SourcePartitions(names))
	pending, ok := OperatorMetricName(names, MetricPendingRecords)
	require.True(t, ok, "no pendingRecords among %v", names)
	assert.Equal(t, "Source__Kafka.pendingRecords", pending)
	read, ok := OperatorMetricName(names, MetricRecordsInPerSecond)
	require.True(t, ok)

	// The map takes 800 records a second of the 1400 arriving: the source is busy 400ms a second
	// and backpressured for the rest, 600 more records wait each second.
	got, err := c.VertexMetrics(ctx, srv.URL, id, source.ID, []string{MetricBusyTime, MetricBackPressuredTime, read, pending})
	require.NoError(t, err)
	assert.Equal(t, AggregatedMetric{Min: 400, Max: 400, Avg: 400, Sum: 800}, got[MetricBusyTime])
	assert.Equal(t, 600.0, got[MetricBackPressuredTime].Max)
	assert.Equal(t, 800.0, got[read].Sum)
	assert.InDelta(t, 600*60, got[pending].Sum, 2)

	got, err = c.VertexMetrics(ctx, srv.URL, id, mapper.ID, []string{MetricBusyTime, MetricIdleTime, MetricRecordsOutPerSecond})
	require.NoError(t, err)
	assert.Equal(t, 1000.0, got[MetricBusyTime].Min)
	assert.Equal(t, 0.0, got[MetricIdleTime].Max)
	assert.Equal(t, 800.0, got[MetricRecordsOutPerSecond].Sum)

	// One name the vertex does not report, and Flink answers with nothing.
	got, err = c.VertexMetrics(ctx, srv.URL, id, mapper.ID, []string{MetricBusyTime, "Map.pendingRecords"})
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestVertexMetricsAsksForTheNamesAndReadsWhatJacksonWrites(t *testing.T) {
	path := "/jobs/" + testJobID + "/vertices/" + testVertexID + "/subtasks/metrics"
	fake, srv := newFakeJobManager(t, "", map[string][]reply{"GET " + path: {{status: 200, body: `[
		{"id":"busyTimeMsPerSecond","min":"NaN","max":"Infinity","avg":12.5,"sum":25},
		{"id":"Source__Kafka.pendingRecords","sum":1.0E7},
		{"id":"notAsked","min":1,"max":1,"avg":1,"sum":1}]`}}})
	got, err := newTestClient(DefaultConfig()).VertexMetrics(context.Background(), srv.URL, testJobID, testVertexID,
		[]string{MetricBusyTime, "Source__Kafka.pendingRecords"})
	require.NoError(t, err)
	req := fake.last()
	q, err := url.ParseQuery(req.query)
	require.NoError(t, err)
	assert.Equal(t, url.Values{"get": {"busyTimeMsPerSecond,Source__Kafka.pendingRecords"}, "agg": {"min,max,avg,sum"}}, q)

	require.Len(t, got, 2)
	busy := got[MetricBusyTime]
	assert.True(t, math.IsNaN(busy.Min))
	assert.True(t, math.IsInf(busy.Max, 1))
	assert.Equal(t, 12.5, busy.Avg)
	assert.Equal(t, 25.0, busy.Sum)
	pending := got["Source__Kafka.pendingRecords"]
	assert.Equal(t, 1e7, pending.Sum)
	assert.True(t, math.IsNaN(pending.Max), "an aggregation Flink did not send")
}

func TestVertexMetricsNamesNoMoreThanFlinkReads(t *testing.T) {
	fake, srv := newFakeJobManager(t, "", nil)
	c := newTestClient(DefaultConfig())
	many := make([]string, maxVertexMetricNames+1)
	for i := range many {
		many[i] = "m" + strings.Repeat("x", i%3)
	}
	long := []string{strings.Repeat("Source__Kafka.KafkaSourceReader.topic.orders.partition.0.currentOffset", 50)}
	for name, names := range map[string][]string{
		"none": nil, "too many": many, "too long": long, "a comma": {"a,b"}, "an empty name": {MetricBusyTime, ""},
	} {
		_, err := c.VertexMetrics(context.Background(), srv.URL, testJobID, testVertexID, names)
		var e *Error
		if assert.ErrorAs(t, err, &e, name) {
			assert.False(t, e.Retryable, name)
			assert.ErrorIs(t, err, errInvalidArgument, name)
		}
	}
	_, err := c.VertexMetrics(context.Background(), srv.URL, testJobID, "", []string{MetricBusyTime})
	assert.ErrorIs(t, err, errInvalidArgument)
	_, err = c.VertexMetricNames(context.Background(), srv.URL, "", testVertexID)
	assert.ErrorIs(t, err, errInvalidArgument)
	assert.Empty(t, fake.received(), "a request Flink could not read was sent")

	exactly := make([]string, maxVertexMetricNames)
	for i := range exactly {
		exactly[i] = MetricBusyTime
	}
	_, err = c.VertexMetrics(context.Background(), srv.URL, testJobID, testVertexID, exactly)
	assert.NotErrorIs(t, err, errInvalidArgument, "64 names are allowed")
}

func TestVertexMetricNamesOfAVertexWithoutRunningTasksAreNone(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{
		"GET /jobs/" + testJobID + "/vertices/" + testVertexID + "/subtasks/metrics": {{status: 200, body: `[]`}},
	})
	names, err := newTestClient(DefaultConfig()).VertexMetricNames(context.Background(), srv.URL, testJobID, testVertexID)
	require.NoError(t, err)
	assert.Empty(t, names)
}

func TestSourcePartitionsCountsEachPartitionOnce(t *testing.T) {
	names := []string{
		"busyTimeMsPerSecond",
		"Source__Kafka.KafkaSourceReader.topic.orders.partition.0.currentOffset",
		"Source__Kafka.KafkaSourceReader.topic.orders.partition.0.committedOffset",
		"Source__Kafka.KafkaSourceReader.topic.orders.partition.11.currentOffset",
		"Source__Kafka.KafkaSourceReader.topic.refunds.partition.0.currentOffset",
		"KafkaSourceReader.topic.orders.partition.5.currentOffset", // no operator: not Flink's
	}
	assert.Equal(t, 3, SourcePartitions(names))
	assert.Equal(t, 0, SourcePartitions([]string{"Source__Files.numRecordsInPerSecond"}))
	_, ok := OperatorMetricName(names, MetricPendingRecords)
	assert.False(t, ok)
}
