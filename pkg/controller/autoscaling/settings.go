package autoscaling

import (
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaler"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// The autoscaler's settings and record, between the kinds' API and package autoscaler, which knows
// nothing of either: the application's spec.autoscaler laid over the operator's defaults, and the
// part of the autoscaler's history that outlives the operator (the changes, the parallelism that
// last ran stable and a cool-down) kept in status.autoscaler. What only guides the next decisions
// (the samples, how long a lower recommendation has held) stays in the operator's memory: a
// restarted operator collects a full window again before it decides, and a scale-down waits again.

// Config lays spec.autoscaler over the operator's defaults; readiness is how long a job
// may take to run stable, which the way back judges by.
func Config(spec *v1beta1.AutoscalerSpec, d config.AutoscalerDefaults, readiness time.Duration) (autoscaler.Config, error) {
	c := autoscaler.DefaultConfig()
	c.RecommendOnly = spec.Mode != v1beta1.AutoscalerApply
	c.TargetUtilization = float64(d.TargetUtilizationPercent) / 100
	c.UtilizationTolerance = float64(d.UtilizationTolerancePercent) / 100
	c.CatchUpDuration, c.MetricsWindow = d.CatchUpDuration.Duration, d.MetricsWindow.Duration
	c.StabilizationInterval, c.ScaleDownDelay, c.CoolDown = d.StabilizationInterval.Duration, d.ScaleDownDelay.Duration, d.CoolDown.Duration
	c.ReadinessTimeout = readiness
	if spec.TargetUtilizationPercent > 0 {
		c.TargetUtilization = float64(spec.TargetUtilizationPercent) / 100
	}
	if spec.UtilizationTolerancePercent != nil {
		c.UtilizationTolerance = float64(*spec.UtilizationTolerancePercent) / 100
	}
	for _, o := range []struct {
		set *metav1.Duration
		to  *time.Duration
	}{{spec.CatchUpDuration, &c.CatchUpDuration}, {spec.MetricsWindow, &c.MetricsWindow},
		{spec.StabilizationInterval, &c.StabilizationInterval}, {spec.ScaleDownDelay, &c.ScaleDownDelay}, {spec.CoolDown, &c.CoolDown}} {
		if o.set != nil {
			*o.to = o.set.Duration
		}
	}
	if spec.MinParallelism > 0 {
		c.MinParallelism = int(spec.MinParallelism)
	}
	if spec.MaxParallelism > 0 {
		c.MaxParallelism = int(spec.MaxParallelism)
	}
	for _, v := range spec.Vertices {
		if c.Vertices == nil {
			c.Vertices = map[string]autoscaler.VertexLimits{}
		}
		c.Vertices[v.Vertex] = autoscaler.VertexLimits{Min: int(v.Min), Max: int(v.Max)}
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("spec.autoscaler: %w", err)
	}
	return c, nil
}

// History is the history a decision starts from: what status.autoscaler keeps, and the
// load of each vertex over the scale-down delay, which this operator process has recorded.
func History(st *v1beta1.AutoscalerStatus, load map[string]autoscaler.LoadRecord) autoscaler.History {
	h := autoscaler.History{Load: maps.Clone(load)}
	if st == nil {
		return h
	}
	for _, c := range st.Changes {
		ch := autoscaler.Change{Time: c.Time.Time, Kind: autoscaler.ChangeKind(c.Kind), Reason: c.Reason}
		for _, v := range c.Vertices {
			ch.Vertices = append(ch.Vertices, autoscaler.VertexChange{ID: v.ID, From: int(v.From), To: int(v.To)})
		}
		h.Changes = append(h.Changes, ch)
	}
	if s := st.Stable; s != nil {
		h.Stable = autoscaler.StableRun{At: s.Time.Time, Parallelism: map[string]int{}}
		for id, p := range s.Parallelism {
			h.Stable.Parallelism[id] = int(p)
		}
	}
	if st.HoldUntil != nil {
		h.HoldUntil = st.HoldUntil.Time
	}
	return h
}

// Status is what status.autoscaler shows of a decision: each vertex's current and
// recommended parallelism, why, and the history that outlives the operator. Times are kept to the
// second, as the API server keeps them, so that a status read back equals the one written.
func Status(d autoscaler.Decision) *v1beta1.AutoscalerStatus {
	st := &v1beta1.AutoscalerStatus{Reason: d.Reason}
	for _, v := range d.Vertices {
		st.Vertices = append(st.Vertices, v1beta1.VertexScaling{ID: v.ID, Name: v.Name, Current: int32(v.Current),
			Recommended: int32(v.Recommended), Reason: v.Reason})
	}
	for _, c := range d.History.Changes {
		sc := v1beta1.ScalingChange{Time: toSecond(c.Time), Kind: string(c.Kind), Reason: c.Reason}
		for _, v := range c.Vertices {
			sc.Vertices = append(sc.Vertices, v1beta1.VertexChange{ID: v.ID, From: int32(v.From), To: int32(v.To)})
		}
		st.Changes = append(st.Changes, sc)
	}
	if s := d.History.Stable; !s.At.IsZero() {
		st.Stable = &v1beta1.StableParallelism{Time: toSecond(s.At), Parallelism: map[string]int32{}}
		for _, id := range slices.Sorted(maps.Keys(s.Parallelism)) {
			st.Stable.Parallelism[id] = int32(s.Parallelism[id])
		}
	}
	if !d.History.HoldUntil.IsZero() {
		t := toSecond(d.History.HoldUntil)
		st.HoldUntil = &t
	}
	return st
}

func toSecond(t time.Time) metav1.Time { return metav1.NewTime(t).Rfc3339Copy() }
