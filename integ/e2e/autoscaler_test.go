package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The autoscaler on the local cluster, in Recommend mode: a job whose map cannot keep up with its
// input (the simulator's load model) gets a recommendation of more subtasks for the map, read from
// the vertices' metrics through the JobManager's REST API, in status, an Event and kubectl flink
// status; the job itself is not touched.
func TestTheAutoscalerRecommendsFromTheJobsLoad(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	if err := env.Fleet.SetLoad(s.ns, "orders", flinksim.Load{
		Vertices: []flinksim.LoadVertex{
			{Name: "Source: orders", Capacity: 5000, Partitions: 12, PendingRecords: true},
			{Name: "Map", Capacity: 100},
			{Name: "Sink: store", Capacity: 5000},
		},
		Input: flinksim.Constant(600),
	}); err != nil {
		t.Fatal(err)
	}
	app := s.createRunning("orders", func(spec *v1beta1.FlinkApplicationSpec) {
		spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerRecommend,
			StabilizationInterval: &metav1.Duration{Duration: 5 * time.Second}, MetricsWindow: &metav1.Duration{Duration: 20 * time.Second}}
	})
	got := s.waitFor(app.Name, "a recommendation", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Autoscaler != nil && strings.HasPrefix(a.Status.Autoscaler.Reason, "recommends ")
	}, inPhase(v1beta1.PhaseDeployFailed))
	var mapVertex *v1beta1.VertexScaling
	for i, v := range got.Status.Autoscaler.Vertices {
		if v.Name == "Map" {
			mapVertex = &got.Status.Autoscaler.Vertices[i]
		}
	}
	// 600 records a second at 100 a subtask and 70% utilisation: 9 subtasks at least.
	if mapVertex == nil || mapVertex.Current != 3 || mapVertex.Recommended < 9 {
		t.Fatalf("autoscaler status %+v", got.Status.Autoscaler)
	}
	s.eventually("a ScalingReport Event", func() (bool, string) {
		for _, e := range s.events(app.Name) {
			if e.Reason == "ScalingReport" {
				return true, ""
			}
		}
		return false, "none yet"
	})
	if out := s.pluginOK("status", app.Name); !strings.Contains(out, "vertex Map: parallelism 3, recommended") {
		t.Errorf("kubectl flink status does not show the recommendation:\n%s", out)
	}
	if job := s.onlyJob(s.jobManager(got)); job.ID != app.Status.JobStatus.JobID {
		t.Errorf("the job changed to %s while the autoscaler only recommends", job.ID)
	}
}
