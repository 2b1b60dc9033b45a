package autoscaler

import (
	"fmt"
	"math"
	"time"
)

// minBusy is the least busy fraction a sample must show for its rate to measure a subtask's
// capacity: below it, a few milliseconds of measuring error make the true rate many times off.
const minBusy = 0.05

// Rates are what a decision read or derived for one vertex; rates are records per second.
type Rates struct {
	// Busy and BackPressured are the window's mean fractions of time its subtasks were busy, and
	// back-pressured (0 to 1).
	Busy          float64 `json:"busy"`
	BackPressured float64 `json:"backPressured"`
	// In and Out are the window's mean rates over all subtasks.
	In  float64 `json:"in"`
	Out float64 `json:"out"`
	// ProcessingRate is the rate one subtask processes when busy all the time: records in over
	// busy time, from the samples busy enough to measure it; 0 when unknown (no records in, or no
	// busy time reported).
	ProcessingRate float64 `json:"processingRate"`
	// ProcessingRateIsBound is set when no sample was busy enough, and ProcessingRate is the
	// least rate the vertex showed, taking it as busy minBusy of the time: the vertex idles, and
	// its capacity is at least that.
	ProcessingRateIsBound bool `json:"processingRateIsBound,omitempty"`
	// Arrival is a source's rate of arrival: what it read, plus how fast its backlog grew.
	Arrival float64 `json:"arrival,omitempty"`
	// Backlog is a source's pending records at the window's newest sample that reports them.
	Backlog float64 `json:"backlog,omitempty"`
	// BacklogKnown is set when the source reports its backlog.
	BacklogKnown bool `json:"backlogKnown,omitempty"`
	// Target is the rate the vertex must take in: for a source its arrival and its backlog over
	// the catch-up duration, for another vertex its upstream's targets carried through their
	// output ratios.
	Target float64 `json:"target"`
	// Utilization is the busy fraction the vertex would run at under Target with its current
	// parallelism; 0 when its ProcessingRate is unknown.
	Utilization float64 `json:"utilization"`
}

// observe reads one vertex's rates from the window, its Target not yet set.
func observe(v Vertex, w window) (r Rates, observed bool) {
	var n, busyN int
	var busy, bp, in, out, measuredIn, measuredBusy float64
	var times, pending []float64
	for _, s := range w.samples {
		m, ok := s.Vertices[v.ID]
		if !ok {
			continue
		}
		n++
		in += m.NumRecordsInPerSecond
		out += m.NumRecordsOutPerSecond
		if b := m.BusyTimeMsPerSecond / 1000; !math.IsNaN(b) {
			busyN++
			busy += b
			if x := m.BackPressuredTimeMsPerSecond / 1000; !math.IsNaN(x) {
				bp += x
			}
			if b >= minBusy && m.NumRecordsInPerSecond > 0 {
				measuredIn += m.NumRecordsInPerSecond
				measuredBusy += b
			}
		}
		if m.PendingKnown {
			times = append(times, s.Time.Sub(w.from).Seconds())
			pending = append(pending, m.PendingRecords)
		}
	}
	if n == 0 {
		return Rates{}, false
	}
	r.In, r.Out = in/float64(n), out/float64(n)
	if busyN > 0 {
		r.Busy, r.BackPressured = busy/float64(busyN), bp/float64(busyN)
	}
	p := float64(max(v.Parallelism, 1))
	switch {
	case measuredBusy > 0:
		// A ratio of sums, not a mean of ratios: a sample counts as much as the time it measured.
		r.ProcessingRate = measuredIn / (p * measuredBusy)
	case r.In > 0 && busyN > 0:
		r.ProcessingRate, r.ProcessingRateIsBound = r.In/(p*minBusy), true
	}
	if v.IsSource {
		r.Arrival = r.In
		if len(pending) > 0 {
			r.Backlog, r.BacklogKnown = math.Max(pending[len(pending)-1], 0), true
			r.Arrival = math.Max(r.In+slope(times, pending), 0)
		}
	}
	return r, true
}

// slope is the least-squares growth per second of ys over xs (seconds); 0 with fewer than two
// points apart in time. A fit, rather than the first and last point, so that one odd reading of
// the backlog does not make a trend.
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if len(xs) < 2 || d <= 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// target sets each vertex's Target, sources first and then along the graph (order is
// topological): a source must take in what arrives and work off its backlog within catchUp; a
// vertex downstream takes its observed input scaled as its upstream's target output is to their
// observed output. Scaling the observed input keeps what the metrics cannot tell apart (which
// share of an upstream's output goes to which of its outputs, broadcast, side outputs) as it is.
func target(order []Vertex, rates map[string]*Rates, catchUp time.Duration) {
	targetOut := map[string]float64{}
	for _, v := range order {
		r := rates[v.ID]
		if v.IsSource || len(v.Upstream) == 0 {
			r.Target = r.In
			if v.IsSource {
				r.Target = r.Arrival + r.Backlog/catchUp.Seconds()
			}
		} else {
			var want, seen float64
			for _, u := range v.Upstream {
				want += targetOut[u]
				seen += rates[u].Out
			}
			r.Target = want
			if seen > 0 {
				r.Target = r.In * want / seen
			}
		}
		ratio := 1.0
		if r.In > 0 {
			ratio = r.Out / r.In
		}
		targetOut[v.ID] = r.Target * ratio
	}
}

// describe is a vertex's rates in a reason.
func (r Rates) describe(v Vertex) string {
	s := fmt.Sprintf("target %s at %s per subtask", perSecond(r.Target), perSecond(r.ProcessingRate))
	if r.ProcessingRateIsBound {
		s = fmt.Sprintf("target %s at least %s per subtask (it idles)", perSecond(r.Target), perSecond(r.ProcessingRate))
	}
	switch {
	case v.IsSource && r.BacklogKnown && r.Backlog > 0:
		s += fmt.Sprintf("; arrival %s and a backlog of %.0f records", perSecond(r.Arrival), r.Backlog)
	case v.IsSource && !r.BacklogKnown && r.BackPressured > 0.1:
		s += "; back-pressured and reporting no backlog, so its demand may exceed what it reads"
	}
	return s
}

func perSecond(x float64) string {
	if x >= 100 || x == 0 {
		return fmt.Sprintf("%.0f/s", x)
	}
	return fmt.Sprintf("%.3g/s", x)
}
