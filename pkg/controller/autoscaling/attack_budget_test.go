package autoscaling

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testclock "k8s.io/utils/clock/testing"

	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/internal/retained"
)

// shiftingVerticesJM is a hostile JobManager's metrics endpoints: every vertex it is asked about
// lists the task metrics and a source's two metrics under the longest names kept, and answers
// values for them. Only the two calls a sample makes are served.
type shiftingVerticesJM struct {
	client.API
	calls int
}

func (f *shiftingVerticesJM) VertexMetricNames(_ context.Context, _, _, vertexID string) ([]string, error) {
	f.calls++
	long := strings.Repeat("x", maxMetricName-40)
	return append(append([]string(nil), taskMetrics...), long+"."+client.MetricRecordsInPerSecond, long+"."+client.MetricPendingRecords), nil
}

func (f *shiftingVerticesJM) VertexMetrics(_ context.Context, _, _, _ string, names []string) (map[string]client.AggregatedMetric, error) {
	f.calls++
	out := map[string]client.AggregatedMetric{}
	for _, n := range names {
		out[n] = client.AggregatedMetric{Avg: 500, Sum: 1000}
	}
	return out, nil
}

// freshVertices are as many vertices as the autoscaler tracks, with ids never seen before: what a
// JobManager answers GET /jobs/:jobid with when it makes up new vertex ids at each call. Each list
// alone passes TrackedVertices (unique Flink vertex ids, at most MaxTrackedVertices).
func freshVertices(t *testing.T, pass int) []autoscaler.Vertex {
	d := &client.JobDetails{}
	for i := range MaxTrackedVertices {
		d.Vertices = append(d.Vertices, client.JobVertex{ID: fmt.Sprintf("%016x%016x", pass, i), Name: "Map", Parallelism: 1})
	}
	vertices, over := TrackedVertices(d)
	require.Empty(t, over)
	return vertices
}

// docs/security.md: the autoscaler keeps, for the job's life, at most 200 vertices of one object
// (about 2 MiB with its samples). A JobManager that makes up new vertex ids at every answer must
// not make the memory kept of its one job grow pass after pass: what is read of each vertex's
// metric names (JobSamples.metrics) is kept by vertex id and never let go while the job runs.
func TestWhatTheAutoscalerKeepsOfAJobIsBoundedWhenItsVertexIdsChangeAtEveryAnswer(t *testing.T) {
	clk := testclock.NewFakeClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	api := &shiftingVerticesJM{}
	mem := &Memory{}
	s := mem.Of("FlinkApplication/jobs/wc", "job")
	ref := jobs.Ref{URL: "http://jm", ID: "job"}
	const passes = 200 // about three minutes of passes, a second apart, while a sample is read
	interval := config.Default().Autoscaler.SampleInterval.Duration
	for pass := range passes {
		if r := s.Reading; r != nil && clk.Now().Sub(r.Time) >= interval {
			s.Reading = nil // as autoscale drops a sample not read within an interval
		}
		_, _, err := s.ReadSample(context.Background(), api, ref, freshVertices(t, pass), clk.Now(), NewCallBudget(clk))
		require.NoError(t, err)
		clk.Step(ResumeSampling)
	}
	t.Logf("%d metrics calls; %d vertices' metric names kept; %d bytes kept of the job", api.calls, len(s.metrics), retained.Bytes(s))
	assert.LessOrEqual(t, len(s.metrics), MaxTrackedVertices, "vertices whose metric names are kept for the job's life")
	assert.Less(t, retained.Bytes(s), 2<<20, "bytes kept of one job")
}
