package main

import (
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"
)

func TestAPIRequestsAreCountedByVerbAndResourceWithoutWatches(t *testing.T) {
	scrape := `# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="POST",version="v1"} 4
apiserver_request_total{code="409",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="POST",version="v1"} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="flink.k8s.io",resource="flinkapplications",scope="resource",subresource="status",verb="PATCH",version="v1beta1"} 6
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 9
`
	before, err := parseAPIRequests(strings.NewReader(scrape))
	require.NoError(t, err)
	require.Equal(t, map[string]float64{"POST deployments": 5, "PATCH flinkapplications/status": 6}, before)

	after := map[string]float64{"POST deployments": 25, "PATCH flinkapplications/status": 6.1}
	per := requestsPerApp(before, after, 10)
	require.Equal(t, map[string]float64{"POST deployments": 2}, per, "a change under 0.05 per app is left out")
	require.Equal(t, "POST deployments 2.0", formatRequests(per))
}

func TestProcessCPUIsReadFromStatWhateverTheName(t *testing.T) {
	name, seconds, ok := parseProcStat("4242 (kube (api) server) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0")
	require.True(t, ok)
	require.Equal(t, "kube (api) server", name)
	require.InDelta(t, 3.0, seconds, 1e-9)
	require.Equal(t, "total 3.5 s, a 3.0, b 0.5", formatCPU(cpuSpent(map[string]float64{"a": 1}, map[string]float64{"a": 4, "b": 0.5, "c": 0.05})))
}

func TestGarbageCollectionsAreCountedFromTheGoCollectorsSummary(t *testing.T) {
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(strings.NewReader(`# HELP go_gc_duration_seconds A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0"} 1.5e-05
go_gc_duration_seconds{quantile="1"} 0.002
go_gc_duration_seconds_sum 0.25
go_gc_duration_seconds_count 417
`))
	require.NoError(t, err)
	require.Equal(t, uint64(417), gcCycles(families))
	require.Zero(t, gcCycles(nil), "a process without the Go collector")
}
