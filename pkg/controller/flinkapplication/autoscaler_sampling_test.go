package flinkapplication

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaling"
)

// autoscaledChain is an application whose job is a chain of n vertices the cluster keeps up with.
func autoscaledChain(w *world, name string, n int) {
	var vertices []flinksim.LoadVertex
	for i := range n {
		vertices = append(vertices, flinksim.LoadVertex{Name: fmt.Sprintf("Step %d", i), Capacity: 1000})
	}
	w.loads[name] = flinksim.Load{Vertices: vertices, Input: flinksim.Constant(2000)}
	app := wordcount(name)
	app.Spec.Autoscaler = &v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerRecommend}
	w.create(app)
	w.runUntilPhase(name, v1beta1.PhaseRunning)
}

// isMetricsCall tells a request for a vertex's metrics, or their names.
func isMetricsCall(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/subtasks/metrics") }

// passes reconciles the application for a while as the world does, and reports the longest time
// one pass took on the operator's clock, and the most metrics calls one pass made.
func passes(w *world, name string, d time.Duration, calls *atomic.Int64) (longest time.Duration, most int64) {
	for end := w.clock.Now().Add(d); w.clock.Now().Before(end); {
		w.settle()
		start, before := w.clock.Now(), calls.Load()
		after, err := w.env.Reconcile(context.Background(), ns, name)
		longest, most = max(longest, w.clock.Now().Sub(start)), max(most, calls.Load()-before)
		if err != nil || after <= 0 || after > maxStep {
			after = maxStep
		}
		w.clock.Step(after)
	}
	return longest, most
}

// A JobManager that takes a second to answer each metrics call holds a pass a few seconds at
// most: the sample goes on in the passes after, and the autoscaler still decides.
func TestASlowJobManagerHoldsAnAutoscalersPassAFewSecondsAtMost(t *testing.T) {
	w := newWorld(t)
	var calls atomic.Int64
	w.answerTime = func(r *http.Request) time.Duration {
		if isMetricsCall(r) {
			calls.Add(1)
			return time.Second
		}
		return 0
	}
	autoscaledChain(w, "wc", 12)
	longest, _ := passes(w, "wc", 20*time.Minute, &calls)
	t.Logf("the longest pass took %s", longest)
	// The budget, and the call under way when it ran out (here it takes its second whatever the
	// deadline: the fake clock moves on in the JobManager).
	assert.LessOrEqual(t, longest, autoscaling.SamplingBudget+time.Second, "the longest pass")
	st := w.get("wc").Status.Autoscaler
	require.NotNil(t, st)
	assert.Equal(t, "every vertex keeps its parallelism", st.Reason)
	assert.Len(t, st.Vertices, 12)
}

// However fast the JobManager answers, one pass makes a bounded number of metrics calls: a wide
// job's sample is read over several passes.
func TestAnAutoscalersPassMakesABoundedNumberOfCalls(t *testing.T) {
	w := newWorld(t)
	var calls atomic.Int64
	w.answerTime = func(r *http.Request) time.Duration {
		if isMetricsCall(r) {
			calls.Add(1)
		}
		return 0
	}
	autoscaledChain(w, "wc", 100)
	_, most := passes(w, "wc", 16*time.Minute, &calls)
	t.Logf("the most metrics calls of one pass: %d", most)
	assert.LessOrEqual(t, most, int64(autoscaling.MaxSamplingCalls), "the most metrics calls of one pass")
	st := w.get("wc").Status.Autoscaler
	require.NotNil(t, st)
	assert.Equal(t, "every vertex keeps its parallelism", st.Reason)
}
