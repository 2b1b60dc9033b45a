package realflink

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// The autoscaler on real Flink: the throttled build's counter is busy all the time and its source
// backpressured, as Flink's own vertex metrics say, and the autoscaler recommends more subtasks
// for the counter than it runs, and changes nothing (mode Recommend). The test job's source, as
// any whose reader does not extend SourceReaderBase, counts no records read: what it read is what
// its operator emitted.
func TestTheAutoscalerRecommendsMoreSubtasksForABusyVertexFromRealMetrics(t *testing.T) {
	env, fleet, releases := operatorOnRealFlink(t)
	for _, r := range releases {
		t.Run(r.name, func(t *testing.T) { autoscalerRecommends(t, env, fleet, r) })
	}
}

func autoscalerRecommends(t *testing.T, env *localenv.Env, fleet *Fleet, r realRelease) {
	began := time.Now()
	ns := realNamespace(t, env)
	out := t.TempDir()
	app := lyftManifest(t, ns, r, out)
	app.Name = "autoscaled"
	app.Spec.ProgramArgs = fmt.Sprintf("--out %s --keys %d --variant throttled --work-millis 20 --rate 2000", out, testKeys)
	minute, half := metav1.Duration{Duration: time.Minute}, metav1.Duration{Duration: 20 * time.Second}
	// A savepoint of a job this backpressured waits for its barriers behind every queued record (20
	// ms each): the delete cancels it, which is all this test needs of it.
	app.Spec.DeleteMode = v1beta1.DeleteModeForceCancel
	app.Spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerRecommend, MetricsWindow: &minute, StabilizationInterval: &half,
		MaxParallelism: 8}
	s := &lifecycle{t: t, env: env, fleet: fleet, ns: ns, name: app.Name, out: out, api: client.New(client.DefaultConfig(), nil)}
	s.create(app)
	job := s.awaitNewJob("", "")
	var counter v1beta1.VertexScaling
	eventually(t, 4*time.Minute, "a recommendation for the counter", func() (bool, error) {
		a := s.current()
		if a.Status.Autoscaler == nil {
			return false, nil
		}
		for _, v := range a.Status.Autoscaler.Vertices {
			if strings.Contains(v.Name, "counter") && v.Recommended > v.Current {
				counter = v
				return true, nil
			}
		}
		return false, fmt.Errorf("autoscaler: %q, vertices %+v", a.Status.Autoscaler.Reason, a.Status.Autoscaler.Vertices)
	})
	a := s.current()
	if a.Status.JobStatus.JobID != job.id || a.Spec.Parallelism != 2 {
		t.Errorf("mode Recommend changed the job: job %s (was %s), parallelism %d", a.Status.JobStatus.JobID, job.id, a.Spec.Parallelism)
	}
	t.Logf("Flink %s: the counter (%s) runs %d subtasks, %d recommended, after %s: %s", r.dist.Version, counter.Name, counter.Current,
		counter.Recommended, time.Since(began).Round(time.Second), counter.Reason)

	s.deleteAndWait()
}
