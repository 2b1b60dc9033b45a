package autoscaler

import (
	"fmt"
	"math"
	"time"
)

// Config is how the autoscaler decides for one application: the operator's defaults, with the
// application's own settings laid over them by the caller.
type Config struct {
	// RecommendOnly reports what the autoscaler would do, with its reasons, and never applies it.
	RecommendOnly bool
	// TargetUtilization is the busy fraction a vertex should run at under its target rate; the
	// rest is headroom for bursts (greater than 0, at most 1).
	TargetUtilization float64
	// UtilizationTolerance is the band either side of TargetUtilization in which a vertex keeps
	// its parallelism, so that small deviations and noise never rescale.
	UtilizationTolerance float64
	// CatchUpDuration is how long a source may take to work off its backlog.
	CatchUpDuration time.Duration
	// MetricsWindow is how much of the metrics a decision reads, and how long they must have
	// been collected without a gap.
	MetricsWindow time.Duration
	// StabilizationInterval is how long after every change of parallelism the metrics are not
	// read: a restarted job catches up, and its rates say nothing of its steady state.
	StabilizationInterval time.Duration
	// ScaleDownDelay is how long a lower parallelism must have been recommended, at every
	// evaluation, before a vertex is scaled down. A scale-up never waits.
	ScaleDownDelay time.Duration
	// MaxScaleUpFactor is the most one decision multiplies a vertex's parallelism by (at least
	// 1; 1 never scales up).
	MaxScaleUpFactor float64
	// MaxScaleDownFactor is the most one decision divides a vertex's parallelism by (at least
	// 1; 1 never scales down).
	MaxScaleDownFactor float64
	// AlignmentMargin is how much above the recommended parallelism a vertex may go to one that
	// divides its key groups (or a source's partitions) evenly, as a fraction of it; 0 turns
	// alignment off. Alignment only ever rounds up, so it never refuses a scale-up.
	AlignmentMargin float64
	// MinParallelism is every vertex's least parallelism, unless Vertices says otherwise.
	MinParallelism int
	// MaxParallelism is every vertex's greatest parallelism, unless Vertices says otherwise; 0
	// leaves only the vertex's own maxParallelism and a source's partitions.
	MaxParallelism int
	// Vertices are limits for single vertices, by vertex id or, failing that, by name.
	Vertices map[string]VertexLimits
	// CoolDown is how long the autoscaler decides nothing after going back to the last stable
	// parallelism.
	CoolDown time.Duration
	// ReadinessTimeout is how long a rescaled job may take to run stable before the way back
	// returns it to the parallelism that last ran stable: the application's readiness timeout.
	ReadinessTimeout time.Duration
}

// VertexLimits bound one vertex's parallelism; a zero field leaves the Config's bound.
type VertexLimits struct {
	Min int
	Max int
}

// DefaultConfig is the operator's defaults: a decision reads ten minutes of metrics, five minutes
// after a change, and a vertex scales down after an hour of lower recommendations.
func DefaultConfig() Config {
	return Config{
		TargetUtilization:     0.7,
		UtilizationTolerance:  0.1,
		CatchUpDuration:       15 * time.Minute,
		MetricsWindow:         10 * time.Minute,
		StabilizationInterval: 5 * time.Minute,
		ScaleDownDelay:        time.Hour,
		MaxScaleUpFactor:      4,
		MaxScaleDownFactor:    2,
		AlignmentMargin:       0.25,
		MinParallelism:        1,
		CoolDown:              time.Hour,
		ReadinessTimeout:      3 * time.Minute,
	}
}

// Validate names the first field that cannot be used, and why.
func (c Config) Validate() error {
	switch {
	case !(c.TargetUtilization > 0 && c.TargetUtilization <= 1):
		return fmt.Errorf("targetUtilization %v must be greater than 0 and at most 1", c.TargetUtilization)
	case !(c.UtilizationTolerance >= 0 && c.UtilizationTolerance < c.TargetUtilization):
		return fmt.Errorf("utilizationTolerance %v must be at least 0 and less than targetUtilization %v",
			c.UtilizationTolerance, c.TargetUtilization)
	case c.CatchUpDuration <= 0:
		return fmt.Errorf("catchUpDuration %s must be positive", c.CatchUpDuration)
	case c.MetricsWindow <= 0:
		return fmt.Errorf("metricsWindow %s must be positive", c.MetricsWindow)
	case c.StabilizationInterval < 0:
		return fmt.Errorf("stabilizationInterval %s must not be negative", c.StabilizationInterval)
	case c.ScaleDownDelay < 0:
		return fmt.Errorf("scaleDownDelay %s must not be negative", c.ScaleDownDelay)
	case !(c.MaxScaleUpFactor >= 1) || math.IsInf(c.MaxScaleUpFactor, 0):
		return fmt.Errorf("maxScaleUpFactor %v must be a number of at least 1", c.MaxScaleUpFactor)
	case !(c.MaxScaleDownFactor >= 1) || math.IsInf(c.MaxScaleDownFactor, 0):
		return fmt.Errorf("maxScaleDownFactor %v must be a number of at least 1", c.MaxScaleDownFactor)
	case !(c.AlignmentMargin >= 0 && c.AlignmentMargin <= 1):
		return fmt.Errorf("alignmentMargin %v must be between 0 and 1", c.AlignmentMargin)
	case c.MinParallelism < 1:
		return fmt.Errorf("minParallelism %d must be at least 1", c.MinParallelism)
	case c.MaxParallelism < 0:
		return fmt.Errorf("maxParallelism %d must not be negative", c.MaxParallelism)
	case c.MaxParallelism > 0 && c.MaxParallelism < c.MinParallelism:
		return fmt.Errorf("maxParallelism %d must be at least minParallelism %d", c.MaxParallelism, c.MinParallelism)
	case c.CoolDown < 0:
		return fmt.Errorf("coolDown %s must not be negative", c.CoolDown)
	case c.ReadinessTimeout <= 0:
		return fmt.Errorf("readinessTimeout %s must be positive", c.ReadinessTimeout)
	}
	for key, l := range c.Vertices {
		lo, hi := c.bounds(key)
		switch {
		case l.Min < 0:
			return fmt.Errorf("vertices[%s].min %d must not be negative", key, l.Min)
		case l.Max < 0:
			return fmt.Errorf("vertices[%s].max %d must not be negative", key, l.Max)
		case hi > 0 && lo > hi:
			return fmt.Errorf("vertices[%s]: min %d must be at most max %d", key, lo, hi)
		}
	}
	return nil
}

// bounds are the least and greatest parallelism the configuration allows the vertex known by
// key (its id, or its name); a greatest of 0 is no bound.
func (c Config) bounds(keys ...string) (lo, hi int) {
	lo, hi = c.MinParallelism, c.MaxParallelism
	for _, k := range keys {
		if l, ok := c.Vertices[k]; ok && k != "" {
			if l.Min > 0 {
				lo = l.Min
			}
			if l.Max > 0 {
				hi = l.Max
			}
			break
		}
	}
	return lo, hi
}

// recordGap is the longest stretch without an evaluation that a record of recommendations spans:
// what a rescale takes (applying it, the stabilization interval and a new window). A longer one
// starts the record, and with it the scale-down delay, over: the load in between was not seen.
func (c Config) recordGap() time.Duration {
	return c.StabilizationInterval + c.MetricsWindow + c.ReadinessTimeout
}
