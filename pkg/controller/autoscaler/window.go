package autoscaler

import (
	"fmt"
	"sort"
	"time"
)

// maxGapFraction is the longest stretch of the window, as a fraction of it, that may pass without
// a sample: at its start, between two samples or before now. A window with a longer hole (the
// collector stopped, the operator restarted) does not describe the whole window.
const maxGapFraction = 0.2

// window is the samples a decision reads, oldest first.
type window struct {
	from, to time.Time
	samples  []Sample
}

// readWindow is the last MetricsWindow of samples, all taken after the stabilization interval
// that follows the last change; a problem says why there is no full window yet.
func readWindow(now time.Time, cfg Config, samples []Sample, lastRescale time.Time) (window, string) {
	from := now.Add(-cfg.MetricsWindow)
	if settled := lastRescale.Add(cfg.StabilizationInterval); !lastRescale.IsZero() && settled.After(from) {
		return window{}, fmt.Sprintf("the metrics window is not full: metrics count from %s, the end of the "+
			"stabilization interval, and fill the window at %s", stamp(settled), stamp(settled.Add(cfg.MetricsWindow)))
	}
	w := window{from: from, to: now}
	for _, s := range samples {
		if !s.Time.Before(from) && !s.Time.After(now) {
			w.samples = append(w.samples, s)
		}
	}
	if len(w.samples) == 0 {
		return window{}, fmt.Sprintf("no metrics since %s", stamp(from))
	}
	sort.SliceStable(w.samples, func(i, j int) bool { return w.samples[i].Time.Before(w.samples[j].Time) })
	maxGap := time.Duration(float64(cfg.MetricsWindow) * maxGapFraction)
	prev := from
	for _, s := range append(w.samples, Sample{Time: now}) {
		if gap := s.Time.Sub(prev); gap > maxGap {
			return window{}, fmt.Sprintf("the metrics window has no sample from %s to %s (at most %s may pass "+
				"without one)", stamp(prev), stamp(s.Time), maxGap)
		}
		prev = s.Time
	}
	return w, ""
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
