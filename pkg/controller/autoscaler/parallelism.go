package autoscaler

import (
	"fmt"
	"math"
	"strings"
)

// recommend is the parallelism the vertex's rates ask for, before any limit: the fewest subtasks
// that take its Target at TargetUtilization. A vertex whose utilization under its target is
// within the tolerance band keeps its parallelism, so that noise and small drifts never rescale.
func recommend(v Vertex, r *Rates, cfg Config) (int, string) {
	switch {
	case r.ProcessingRate <= 0 && r.In <= 0:
		return v.Parallelism, "no records came in during the window, so its capacity is not known"
	case r.ProcessingRate <= 0:
		return v.Parallelism, "it reports no busy time, so its capacity is not known"
	}
	r.Utilization = r.Target / (r.ProcessingRate * float64(v.Parallelism))
	lo, hi := cfg.TargetUtilization-cfg.UtilizationTolerance, cfg.TargetUtilization+cfg.UtilizationTolerance
	if r.Utilization >= lo && r.Utilization <= hi {
		return v.Parallelism, fmt.Sprintf("utilization %.2f is within %.2f–%.2f (%s)", r.Utilization, lo, hi, r.describe(v))
	}
	p := subtasksFor(r.Target/r.ProcessingRate, cfg)
	return p, fmt.Sprintf("utilization %.2f is outside %.2f–%.2f; %s at %.2f or less (%s)",
		r.Utilization, lo, hi, subtasksTake(p), cfg.TargetUtilization, r.describe(v))
}

// subtasksFor is the fewest subtasks that take a load of busy subtasks (a vertex's target rate over
// one subtask's) at TargetUtilization. The small epsilon keeps a rate that is exactly a multiple of
// the per-subtask target from rounding up a subtask on floating-point noise.
func subtasksFor(busy float64, cfg Config) int {
	return max(int(math.Ceil(busy/cfg.TargetUtilization-1e-9)), 1)
}

// limit bounds a recommended parallelism: by the most one decision may change it, then by the
// hard limits, which win over the factors (the configured least and greatest, the vertex's
// maxParallelism, a source's partitions; of these, the greatest win). A changed parallelism is
// then aligned. It returns the parallelism and what bounded it, "" when nothing did.
func limit(v Vertex, want int, cfg Config) (int, string) {
	cur := v.Parallelism
	var why []string
	up := int(math.Ceil(float64(cur) * cfg.MaxScaleUpFactor))
	down := int(math.Ceil(float64(cur) / cfg.MaxScaleDownFactor))
	p := want
	if p > up {
		p = up
		why = append(why, fmt.Sprintf("at most ×%g per decision", cfg.MaxScaleUpFactor))
	}
	if p < down {
		p = down
		why = append(why, fmt.Sprintf("at most ÷%g per decision", cfg.MaxScaleDownFactor))
	}
	lo, hi, ceiling := hardLimits(v, cfg)
	if p < lo {
		p = lo
		why = append(why, fmt.Sprintf("at least %d", lo))
	}
	if hi > 0 && p > hi {
		p = hi
		why = append(why, "at most "+ceiling)
	}
	if p != cur {
		top := up
		if hi > 0 {
			top = min(top, hi)
		}
		if q := align(v, p, top, cfg.AlignmentMargin); q != p {
			why = append(why, fmt.Sprintf("%d aligned to %d, %s", p, q, alignedTo(v)))
			p = q
		}
	}
	return p, strings.Join(why, ", ")
}

// hardLimits are the vertex's least and greatest parallelism whatever the load (hi 0: none), and
// what sets the greatest.
func hardLimits(v Vertex, cfg Config) (lo, hi int, ceiling string) {
	lo, hi = cfg.bounds(v.ID, v.Name)
	if hi > 0 {
		ceiling = fmt.Sprintf("%d as configured", hi)
	}
	if v.MaxParallelism > 0 && (hi == 0 || v.MaxParallelism < hi) {
		hi, ceiling = v.MaxParallelism, fmt.Sprintf("its maxParallelism %d", v.MaxParallelism)
	}
	if v.IsSource && v.Partitions > 0 && (hi == 0 || v.Partitions < hi) {
		hi, ceiling = v.Partitions, fmt.Sprintf("its %d partitions", v.Partitions)
	}
	if hi > 0 && lo > hi {
		lo = hi
	}
	return max(lo, 1), hi, ceiling
}

// align is the least parallelism from p up that divides the vertex's work evenly (a source's
// partitions, else its key groups), when there is one no more than margin above p and at most
// limit; else p. It only ever rounds a recommendation up, so a needed scale-up is
// never refused for the sake of an even split, and it never turns a scale-down into no change.
func align(v Vertex, p, limit int, margin float64) int {
	units := v.MaxParallelism
	if v.IsSource && v.Partitions > 0 {
		units = v.Partitions
	}
	if units <= 0 || margin <= 0 {
		return p
	}
	top := min(int(math.Floor(float64(p)*(1+margin))), limit)
	if p < v.Parallelism {
		top = min(top, v.Parallelism-1)
	}
	for q := p; q <= top; q++ {
		if units%q == 0 {
			return q
		}
	}
	return p
}

func subtasksTake(n int) string {
	if n == 1 {
		return "1 subtask takes the target"
	}
	return fmt.Sprintf("%d subtasks take the target", n)
}

func alignedTo(v Vertex) string {
	if v.IsSource && v.Partitions > 0 {
		return fmt.Sprintf("a divisor of its %d partitions", v.Partitions)
	}
	return fmt.Sprintf("a divisor of its maxParallelism %d", v.MaxParallelism)
}
