package autoscaler

import (
	"math"
	"slices"
	"time"
)

// LoadRecord is one vertex's load over the last ScaleDownDelay, in busy subtasks (its target rate
// over what one subtask processes: utilization times parallelism), as a sliding maximum: only the
// loads higher than every later one are kept, oldest first, so the highest over the delay is the
// first. The load does not depend on the parallelism it was measured at, so the record outlives a
// rescale: a vertex's scale-down delay does not start over because it, or another vertex, was
// rescaled, and the tolerance band still applies to the parallelism it has now.
type LoadRecord struct {
	// Since is the record's first evaluation: it speaks for the time from then on.
	Since time.Time `json:"since"`
	// Peaks are the loads kept, each with the last time it held.
	Peaks []Peak `json:"peaks"`
	// Due is since when the vertex's scale-down has been due, waiting to go with another.
	Due time.Time `json:"due,omitzero"`
}

// Peak is a load and the last time it held: the evaluation that measured it, or the next one that
// counted, since what was not observed in between is taken to have stayed.
type Peak struct {
	Until time.Time `json:"until"`
	Busy  float64   `json:"busy"`
}

// maxPeaks bounds a record. Beyond it the two neighbouring peaks closest in load merge into the
// higher load holding until the later time: a record cut short only ever overstates the load, by
// the least it can, and so at most delays a scale-down.
const maxPeaks = 4

// add records an evaluation at t that measured the load busy, and forgets what is older than keep.
// A record whose last evaluation is more than maxGap before t starts again: the load in between
// was not seen.
func (r *LoadRecord) add(t time.Time, busy float64, keep, maxGap time.Duration) {
	busy = math.Ceil(busy*1000) / 1000 // short in JSON, and never less than measured
	if n := len(r.Peaks); n > 0 && t.Sub(r.Peaks[n-1].Until) > maxGap {
		*r = LoadRecord{}
	}
	if len(r.Peaks) == 0 {
		r.Since = t
	}
	r.Peaks = slices.Clone(r.Peaks)
	if n := len(r.Peaks); n > 0 {
		r.Peaks[n-1].Until = t
	}
	for n := len(r.Peaks); n > 0 && r.Peaks[n-1].Busy <= busy; n-- {
		r.Peaks = r.Peaks[:n-1]
	}
	r.Peaks = append(r.Peaks, Peak{Until: t, Busy: busy})
	for len(r.Peaks) > 1 && !r.Peaks[0].Until.After(t.Add(-keep)) {
		r.Peaks = r.Peaks[1:]
	}
	for len(r.Peaks) > maxPeaks {
		closest := 0
		for i := 1; i+1 < len(r.Peaks); i++ {
			if r.Peaks[i].Busy/r.Peaks[i+1].Busy < r.Peaks[closest].Busy/r.Peaks[closest+1].Busy {
				closest = i
			}
		}
		r.Peaks[closest+1].Busy = r.Peaks[closest].Busy
		r.Peaks = slices.Delete(r.Peaks, closest, closest+1)
	}
}

// highestSince is the highest load recorded by an evaluation after t; false when none was.
func (r LoadRecord) highestSince(t time.Time) (Peak, bool) {
	for _, p := range r.Peaks {
		if p.Until.After(t) {
			return p, true
		}
	}
	return Peak{}, false
}
