package autoscaler

import (
	"fmt"
	"math"
	"time"
)

// A window's mean describes the load only when the load held through it. After a step the window is
// mostly from before it, and its mean is a little of the new load and much of the old: a vertex
// near the band's edge tips over it on one new sample and is sized for a load that is neither. So
// the window is first searched for a change of regime, and a decision reads only the samples since
// the latest one.

// minRegimeFraction is the least part of the window, as a fraction of it, that the samples since a
// change must span before a decision reads them alone; minRegimeSamples the fewest there must be.
// Until then nothing is rescaled: the window's mean is of neither load.
const (
	minRegimeFraction = 0.2
	minRegimeSamples  = 3
)

// minShiftT is how many standard errors apart the means before and after a change must lie, on
// top of the tolerance: a single stray sample, or a drift within the noise, is no change.
const minShiftT = 4

// regime is where the job's load last changed within the window.
type regime struct {
	// since is the newest sample before the change (the change came after it); zero when the load
	// held through the window.
	since time.Time
	// samples are those after the change.
	samples int
	// id and vertex name the vertex whose busy time shows it, before and after its mean busy
	// fraction on either side.
	id, vertex    string
	before, after float64
}

// latestRegime finds the newest change of regime in the window: the latest point where a vertex's
// busy time moved, from the samples before to those after, by at least the utilization tolerance
// and by minShiftT standard errors. Busy time is what the tolerance band is about, and every
// vertex's shows a change of the load it takes, the bottleneck's up to saturation.
func latestRegime(vertices []Vertex, w window, tolerance float64) regime {
	var latest regime
	for _, v := range vertices {
		var times []time.Time
		var busy []float64
		for _, s := range w.samples {
			if m, ok := s.Vertices[v.ID]; ok && !math.IsNaN(m.BusyTimeMsPerSecond) {
				times = append(times, s.Time)
				busy = append(busy, m.BusyTimeMsPerSecond/1000)
			}
		}
		start, k, ok := changePoint(busy, tolerance)
		if !ok || !times[k-1].After(latest.since) {
			continue
		}
		latest = regime{since: times[k-1], samples: len(busy) - k, id: v.ID, vertex: label(v),
			before: mean(busy[start:k]), after: mean(busy[k:])}
	}
	return latest
}

// changePoint is the index of the first sample after the latest significant change in xs, and of
// the first after the change before it (0 when none): the most significant split, then the most
// significant one after it, as long as there is one.
func changePoint(xs []float64, tolerance float64) (start, k int, ok bool) {
	best, bestT := 0, 0.0
	n := len(xs)
	for k := 1; k < n; k++ {
		a, b := xs[:k], xs[k:]
		shift := math.Abs(mean(b) - mean(a))
		if shift < tolerance || shift == 0 {
			continue
		}
		t := math.Inf(1)
		if n > 2 {
			sd := math.Sqrt((squares(a) + squares(b)) / float64(n-2))
			if se := sd * math.Sqrt(1/float64(k)+1/float64(n-k)); se > 0 {
				t = shift / se
			}
		}
		if t >= minShiftT && t > bestT {
			best, bestT = k, t
		}
	}
	if best == 0 {
		return 0, 0, false
	}
	if from, later, ok := changePoint(xs[best:], tolerance); ok {
		return best + from, best + later, true
	}
	return 0, best, true
}

// sinceRegime is the part of the window after the change, and whether it is long enough to decide
// on: it spans at least minRegimeFraction of the window and holds minRegimeSamples.
func (w window) sinceRegime(r regime, cfg Config) (window, bool) {
	out := window{from: r.since, to: w.to}
	for _, s := range w.samples {
		if s.Time.After(r.since) {
			out.samples = append(out.samples, s)
		}
	}
	long := w.to.Sub(r.since) >= time.Duration(float64(cfg.MetricsWindow)*minRegimeFraction) && len(out.samples) >= minRegimeSamples
	return out, long
}

// describe is the change in a reason that stays the same while more samples come in, so that
// status does not change with each.
func (r regime) describe() string {
	return fmt.Sprintf("the load changed after %s (%s's busy time)", stamp(r.since), r.vertex)
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// squares is the sum of the squared deviations from the mean.
func squares(xs []float64) float64 {
	m, sum := mean(xs), 0.0
	for _, x := range xs {
		sum += (x - m) * (x - m)
	}
	return sum
}
