package watch

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	applisters "github.com/flinkfsm/flinkfsm/pkg/client/listers/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// A session job runs with its session cluster's configuration under its own, so a checkpoint
// interval set once for the whole cluster is the interval the job's series reports; a job's own
// interval wins.
func TestASessionJobsCheckpointIntervalComesFromItsClusterUnlessItSetsOne(t *testing.T) {
	index := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	clusters, jobs := index(), index()
	require.NoError(t, clusters.Add(&v1beta1.FlinkSessionCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "shared"},
		Spec: v1beta1.FlinkSessionClusterSpec{ClusterSpec: v1beta1.ClusterSpec{FlinkConfig: v1beta1.FlinkConfig{flink.CheckpointIntervalKey: "30s"}}}}))
	job := func(name string, conf v1beta1.FlinkConfig) *v1beta1.FlinkSessionJob {
		j := &v1beta1.FlinkSessionJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}}
		j.Spec.ClusterName, j.Spec.FlinkConfig = "shared", conf
		j.Status.JobStatus.JobID = "0123456789abcdef0123456789abcdef"
		return j
	}
	require.NoError(t, jobs.Add(job("inherits", nil)))
	require.NoError(t, jobs.Add(job("own", v1beta1.FlinkConfig{flink.CheckpointIntervalKey: "5s"})))
	apps := index()
	obs := &Listers{byNamespace: map[string]*namespaceListers{"team": {
		apps:            applisters.NewFlinkApplicationLister(apps),
		sessionClusters: applisters.NewFlinkSessionClusterLister(clusters),
		sessionJobs:     applisters.NewFlinkSessionJobLister(jobs), sessionJobIndex: jobs,
	}}}
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register((&Watch{listers: obs}).Collector(shownAsNamed)))
	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "job_checkpoint_interval_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			got[label(m, "name")] = m.GetGauge().GetValue()
		}
	}
	assert.Equal(t, map[string]float64{"inherits": 30, "own": 5}, got)
}

// shownAsNamed shows each vertex by its name, or its id when it has none, and up to 200 of them, as
// the operator does.
var shownAsNamed = ObjectMetrics{MaxVertices: 200, VertexName: func(v v1beta1.VertexScaling) string {
	if v.Name != "" {
		return v.Name
	}
	return v.ID
}}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// An autoscaled application reports each vertex's parallelism and recommendation.
func TestAnAutoscaledApplicationReportsItsVerticesParallelism(t *testing.T) {
	apps := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	app := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "orders"}}
	app.Status.Autoscaler = &v1beta1.AutoscalerStatus{Vertices: []v1beta1.VertexScaling{
		{ID: "a", Name: "Source: orders", Current: 3, Recommended: 3}, {ID: "b", Name: "Map", Current: 3, Recommended: 8}}}
	require.NoError(t, apps.Add(app))
	empty := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	obs := &Listers{byNamespace: map[string]*namespaceListers{"team": {
		apps: applisters.NewFlinkApplicationLister(apps), sessionClusters: applisters.NewFlinkSessionClusterLister(empty),
		sessionJobs: applisters.NewFlinkSessionJobLister(empty), sessionJobIndex: empty,
	}}}
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register((&Watch{listers: obs}).Collector(shownAsNamed)))
	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == "autoscaler_vertex_parallelism" || f.GetName() == "autoscaler_vertex_recommended_parallelism" {
				got[f.GetName()+"/"+label(m, "vertex")] = m.GetGauge().GetValue()
			}
		}
	}
	assert.Equal(t, map[string]float64{
		"autoscaler_vertex_parallelism/Source: orders": 3, "autoscaler_vertex_parallelism/Map": 3,
		"autoscaler_vertex_recommended_parallelism/Source: orders": 3, "autoscaler_vertex_recommended_parallelism/Map": 8,
	}, got)
}

// Vertex names come from the JobManager, and many a job has two vertices of one name ("Map"): each
// vertex is its own series, by id, and a scrape of /metrics answers for every object whatever the
// names and ids an object's status holds (two of one id, here, as a hostile JobManager may answer).
func TestVerticesOfOneNameNeverFailAScrape(t *testing.T) {
	apps := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	app := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "orders"}}
	app.Status.Autoscaler = &v1beta1.AutoscalerStatus{Vertices: []v1beta1.VertexScaling{
		{ID: "a", Name: "Map", Current: 3, Recommended: 3}, {ID: "b", Name: "Map", Current: 2, Recommended: 8},
		{ID: "b", Name: "Sink", Current: 1, Recommended: 1}}}
	require.NoError(t, apps.Add(app))
	other := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "clicks"}}
	other.Status.Phase = v1beta1.PhaseRunning
	require.NoError(t, apps.Add(other))
	empty := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	obs := &Listers{byNamespace: map[string]*namespaceListers{"team": {
		apps: applisters.NewFlinkApplicationLister(apps), sessionClusters: applisters.NewFlinkSessionClusterLister(empty),
		sessionJobs: applisters.NewFlinkSessionJobLister(empty), sessionJobIndex: empty,
	}}}
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register((&Watch{listers: obs}).Collector(shownAsNamed)))

	scrape := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(scrape, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, scrape.Code, scrape.Body.String())
	assert.Contains(t, scrape.Body.String(), `application_phase{kind="FlinkApplication",name="clicks",namespace="team",phase="Running"} 1`)

	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == "autoscaler_vertex_recommended_parallelism" {
				got[label(m, "vertex_id")+"/"+label(m, "vertex")] = m.GetGauge().GetValue()
			}
		}
	}
	assert.Equal(t, map[string]float64{"a/Map": 3, "b/Map": 8}, got, "one series per vertex id, the first of two")
}
