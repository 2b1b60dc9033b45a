package autoscaling

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

func TestTheApplicationsAutoscalerSettingsOverTheOperators(t *testing.T) {
	d := config.Default().Autoscaler
	c, err := Config(&v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerRecommend}, d, 3*time.Minute)
	require.NoError(t, err)
	assert.True(t, c.RecommendOnly)
	assert.Equal(t, 0.7, c.TargetUtilization)
	assert.Equal(t, 10*time.Minute, c.MetricsWindow)
	assert.Equal(t, 3*time.Minute, c.ReadinessTimeout)

	zero := int32(0)
	c, err = Config(&v1beta1.AutoscalerSpec{Mode: v1beta1.AutoscalerApply, TargetUtilizationPercent: 50,
		UtilizationTolerancePercent: &zero, ScaleDownDelay: &metav1.Duration{Duration: time.Minute}, MaxParallelism: 12,
		Vertices: []v1beta1.VertexLimits{{Vertex: "Source: orders", Max: 8}}}, d, time.Minute)
	require.NoError(t, err)
	assert.False(t, c.RecommendOnly)
	assert.Equal(t, 0.5, c.TargetUtilization)
	assert.Zero(t, c.UtilizationTolerance)
	assert.Equal(t, time.Minute, c.ScaleDownDelay)
	assert.Equal(t, 12, c.MaxParallelism)
	assert.Equal(t, autoscaler.VertexLimits{Max: 8}, c.Vertices["Source: orders"])

	_, err = Config(&v1beta1.AutoscalerSpec{MetricsWindow: &metav1.Duration{Duration: -time.Second}}, d, time.Minute)
	assert.ErrorContains(t, err, "spec.autoscaler")
}

// What status keeps of the autoscaler's history reads back as the history it was written from,
// to the second the API server keeps.
func TestAutoscalerHistoryRoundTripsThroughStatus(t *testing.T) {
	at := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	h := autoscaler.History{
		Changes: []autoscaler.Change{{Time: at, Kind: autoscaler.ChangeKind("Scaled"), Reason: "backlog",
			Vertices: []autoscaler.VertexChange{{ID: "v1", From: 2, To: 4}}}},
		Stable:    autoscaler.StableRun{At: at.Add(time.Minute), Parallelism: map[string]int{"v1": 2}},
		HoldUntil: at.Add(time.Hour),
	}
	st := Status(autoscaler.Decision{Reason: "steady", History: h,
		Vertices: []autoscaler.VertexDecision{{ID: "v1", Name: "Source", Current: 4, Recommended: 4, Reason: "within band"}}})
	assert.Equal(t, []v1beta1.VertexScaling{{ID: "v1", Name: "Source", Current: 4, Recommended: 4, Reason: "within band"}}, st.Vertices)
	back := History(st, nil)
	assert.Equal(t, h.Changes, back.Changes)
	assert.Equal(t, h.Stable, back.Stable)
	assert.True(t, h.HoldUntil.Equal(back.HoldUntil))
}
