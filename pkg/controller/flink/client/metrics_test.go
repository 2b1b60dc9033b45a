package client

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gathered returns the registry's metric family called name, or nil.
func gathered(t *testing.T, reg prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

// counterValue finds the series of family name whose labels include want.
func counterValue(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	f := gathered(t, reg, name)
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if match {
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

func TestMetricsCountRequestsAndFailures(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{
		"GET /jobs/" + testJobID:   {{status: 200, body: jobDetailsBody}},
		"PATCH /jobs/" + testJobID: {{status: 409, body: cancelFinishedJobBody}},
	})
	reg := prometheus.NewRegistry()
	c := New(DefaultConfig(), reg)
	ctx := context.Background()

	_, err := c.GetJob(ctx, srv.URL, testJobID)
	require.NoError(t, err)
	require.Error(t, c.CancelJob(ctx, srv.URL, testJobID))
	require.Error(t, c.CancelJob(ctx, srv.URL, testJobID))
	_, err = c.GetJob(ctx, srv.URL, "")
	require.Error(t, err)

	assert.Equal(t, 2.0, counterValue(t, reg, requestsMetric, map[string]string{"operation": "GetJob"}))
	assert.Equal(t, 2.0, counterValue(t, reg, requestsMetric, map[string]string{"operation": "CancelJob"}))
	assert.Equal(t, 2.0, counterValue(t, reg, errorsMetric, map[string]string{"operation": "CancelJob", "reason": "409"}))
	assert.Equal(t, 1.0, counterValue(t, reg, errorsMetric, map[string]string{"operation": "GetJob", "reason": reasonInvalid}))

	latency := gathered(t, reg, latencyMetric)
	require.NotNil(t, latency, "latency histogram registered")
	var samples uint64
	for _, m := range latency.GetMetric() {
		samples += m.GetHistogram().GetSampleCount()
	}
	assert.Equal(t, uint64(4), samples)
}

func TestMetricsFailureReasons(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{"GET /jobs": {{status: 200, body: "not json"}}})
	reg := prometheus.NewRegistry()
	c := New(DefaultConfig(), reg)
	_, err := c.GetJobs(context.Background(), srv.URL)
	require.Error(t, err)
	assert.Equal(t, 1.0, counterValue(t, reg, errorsMetric,
		map[string]string{"operation": "GetJobs", "reason": reasonDecode}))
}

func TestSameRegistryTwiceSharesSeries(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{"GET /overview": {{status: 200, body: overviewBody}}})
	reg := prometheus.NewRegistry()
	var first, second *Client
	require.NotPanics(t, func() {
		first = New(DefaultConfig(), reg)
		second = New(DefaultConfig(), reg)
	})
	_, err := first.GetClusterOverview(context.Background(), srv.URL)
	require.NoError(t, err)
	_, err = second.GetClusterOverview(context.Background(), srv.URL)
	require.NoError(t, err)
	assert.Equal(t, 2.0, counterValue(t, reg, requestsMetric,
		map[string]string{"operation": "GetClusterOverview"}))
}

func TestNilRegistererStillWorks(t *testing.T) {
	_, srv := newFakeJobManager(t, "", map[string][]reply{"GET /overview": {{status: 200, body: overviewBody}}})
	_, err := New(Config{}, nil).GetClusterOverview(context.Background(), srv.URL)
	require.NoError(t, err)
}
