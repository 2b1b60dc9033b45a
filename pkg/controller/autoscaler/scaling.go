package autoscaler

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// The rules that read a vertex's load record (LoadRecord). A scale-down waits for the scale-down
// delay, so that a dip in the load shorter than it never scales the job down; since each rescale
// restarts the job and the metrics, the scale-downs that come due within one rescale's time go
// together. Both directions read the record rather than this evaluation alone, so that a vertex
// at an edge of the tolerance band, in and out of it with the noise, keeps showing the same.

// scaleDown is a vertex's scale-down under the delay: the parallelism it goes to (its own when
// none), whether that is due now, and the next time its record lets it go lower still (zero when
// not known).
type scaleDown struct {
	to   int
	due  bool
	next time.Time
}

// decideVertices sets each vertex's recommendation and the decision's parallelism from the
// vertex's rates and its load record, to which this evaluation is added when record is set (not
// while the load just changed: its window is of neither load); applies tells whether a decision
// would be applied. It returns the vertices that do not scale up, with what their record says of
// scaling down.
func (d *Decision) decideVertices(now time.Time, cfg Config, vertices []Vertex, rates map[string]*Rates, record, applies bool) map[string]scaleDown {
	held := d.History.Load
	d.History.Load = map[string]LoadRecord{}
	downs := map[string]scaleDown{}
	for i, v := range vertices {
		r := rates[v.ID]
		want, why := recommend(v, r, cfg)
		rec := held[v.ID]
		if r.ProcessingRate > 0 && record {
			load := r.Target / r.ProcessingRate
			if !applies {
				want, why = scaleUpFor(now, cfg, v, rec, load, want, why)
			}
			rec.add(now, load, cfg.ScaleDownDelay, cfg.recordGap())
		}
		vd := &d.Vertices[i]
		vd.Rates = *r
		vd.Recommended, vd.Reason = v.Parallelism, why
		var down scaleDown
		if want < v.Parallelism {
			down = delayScaleDown(now, cfg, v, vd, rec, d.History.scaledUp(v.ID))
			want = down.to
		}
		rec.Due = time.Time{}
		if down.due {
			rec.Due = cmp.Or(held[v.ID].Due, now)
		}
		if len(rec.Peaks) > 0 {
			d.History.Load[v.ID] = rec
		}
		p := v.Parallelism
		if want != v.Parallelism {
			var bounded string
			if p, bounded = limit(v, want, cfg); bounded != "" {
				vd.Reason += "; " + bounded
			}
			vd.Recommended = p
		}
		if p > v.Parallelism || p < v.Parallelism && down.due {
			d.Parallelism[v.ID] = p
		}
		if p <= v.Parallelism {
			down.to, down.next = p, lowerAt(now, cfg, v, rec, p, d.History.scaledUp(v.ID))
			downs[v.ID] = down
		}
	}
	if len(d.History.Load) == 0 {
		d.History.Load = nil
	}
	return downs
}

// scaleUpFor sizes a scale-up that is not applied (recommend-only, or a restart without fresh
// state) for the highest load of the evaluations within the stabilization interval: this one's
// and those rec holds from before it. So a vertex at the top of the band, in and out of it with the
// noise, keeps recommending the same. Where decisions apply, a scale-up is this evaluation's alone:
// the vertex is rescaled at once, and the next evaluation reads the load at its new parallelism.
func scaleUpFor(now time.Time, cfg Config, v Vertex, rec LoadRecord, load float64, want int, why string) (int, string) {
	top := Peak{Until: now, Busy: load}
	if p, ok := rec.highestSince(now.Add(-cfg.StabilizationInterval)); ok && p.Busy > load {
		top = p
	}
	u := top.Busy / float64(v.Parallelism)
	if p := subtasksFor(top.Busy, cfg); u > cfg.TargetUtilization+cfg.UtilizationTolerance && p > want {
		return p, why + fmt.Sprintf("; at the highest load within the stabilization interval, until %s, its utilization "+
			"was %.2f: %s at %.2f", stamp(top.Until), u, subtasksTake(p), cfg.TargetUtilization)
	}
	return want, why
}

// delayScaleDown holds back a vertex's scale-down until its load stayed below the tolerance band,
// at the parallelism it has now, over the whole scale-down delay, and then sizes it for the
// highest load of the delay: the lower load must have lasted, and its highest must still fit.
// The load is recorded in busy subtasks, which do not depend on the parallelism it was measured
// at, so evaluations before a rescale count: one vertex's rescale does not start the others'
// delays over, and a vertex scaled down once scales down again when its load went on falling, not
// an hour after. A vertex at the band's edge, in and out of it with the noise, keeps its
// parallelism and shows it, since the highest load of the delay is in the band. Nor is a vertex
// the autoscaler scaled up (scaledUp) scaled down within the delay. rec holds this evaluation; the
// parallelism returned is before the limits.
func delayScaleDown(now time.Time, cfg Config, v Vertex, vd *VertexDecision, rec LoadRecord, scaledUp time.Time) scaleDown {
	if len(rec.Peaks) == 0 {
		// Nothing recorded (the load just changed): no lower load is known to have lasted.
		return scaleDown{to: v.Parallelism}
	}
	top := rec.Peaks[0]
	if now.Before(scaledUp.Add(cfg.ScaleDownDelay)) {
		// A scale-up aligned to a divisor of the key groups may leave the load that asked for it
		// below the band; it still stands for the delay, as any scale-up does.
		vd.Reason += fmt.Sprintf("; keeps %d: scaled up at %s, within the scale-down delay", v.Parallelism, stamp(scaledUp))
		return scaleDown{to: v.Parallelism}
	}
	if u := top.Busy / float64(v.Parallelism); u >= cfg.TargetUtilization-cfg.UtilizationTolerance {
		vd.Reason += fmt.Sprintf("; keeps %d: at the highest load within the scale-down delay, until %s, its "+
			"utilization was %.2f", v.Parallelism, stamp(top.Until), u)
		return scaleDown{to: v.Parallelism}
	}
	if at := rec.Since.Add(cfg.ScaleDownDelay); now.Before(at) {
		vd.Reason += fmt.Sprintf("; scales down at %s if the load does not come back into the band until then", stamp(at))
		return scaleDown{to: subtasksFor(top.Busy, cfg)}
	}
	vd.Reason += fmt.Sprintf("; below the band since %s, the whole scale-down delay, at a load of %.1f busy subtasks "+
		"at most", stamp(now.Add(-cfg.ScaleDownDelay)), top.Busy)
	return scaleDown{to: subtasksFor(top.Busy, cfg), due: true}
}

// lowerAt is the next time after now at which the vertex's record lets it go lower than to, if no
// higher load comes: when the record comes to span the delay (and the delay has passed since the
// vertex was scaled up), or when its highest load ages out of it and the next is lower. Zero when
// none is known: then loads not yet measured decide.
func lowerAt(now time.Time, cfg Config, v Vertex, rec LoadRecord, to int, scaledUp time.Time) time.Time {
	edge := (cfg.TargetUtilization - cfg.UtilizationTolerance) * float64(v.Parallelism)
	spans := rec.Since.Add(cfg.ScaleDownDelay)
	if up := scaledUp.Add(cfg.ScaleDownDelay); up.After(spans) {
		spans = up
	}
	lower := func(busy float64) bool {
		p, _ := limit(v, subtasksFor(busy, cfg), cfg)
		return busy < edge && p < to
	}
	if len(rec.Peaks) > 0 && spans.After(now) && lower(rec.Peaks[0].Busy) {
		return spans
	}
	for i := 0; i+1 < len(rec.Peaks); i++ {
		at := rec.Peaks[i].Until.Add(cfg.ScaleDownDelay)
		if spans.After(at) {
			at = spans
		}
		if at.After(now) && lower(rec.Peaks[i+1].Busy) {
			return at
		}
	}
	return time.Time{}
}

// batchScaleDowns holds back the scale-downs due now while another, or a deeper one, comes due
// before the next decision a rescale now would allow (the stabilization interval and a new
// window), as long as none has waited that long: one rescale then does what two would, sooner
// than the second would come. A scale-up never waits, and takes the scale-downs due with it. It
// returns why nothing changes now while scale-downs wait, "" when none does.
func (d *Decision) batchScaleDowns(now time.Time, cfg Config, vertices []Vertex, downs map[string]scaleDown) string {
	horizon := cfg.StabilizationInterval + cfg.MetricsWindow
	var next, first time.Time
	due := false
	for _, v := range vertices {
		if d.Parallelism[v.ID] > v.Parallelism {
			return ""
		}
		s := downs[v.ID]
		if !s.next.IsZero() && (next.IsZero() || s.next.Before(next)) {
			next = s.next
		}
		if s.due {
			due = true
			if since := d.History.Load[v.ID].Due; first.IsZero() || since.Before(first) {
				first = since
			}
		}
	}
	hold := due && !next.IsZero() && !next.After(first.Add(horizon))
	var delayed, batched []string
	for i, v := range vertices {
		s := downs[v.ID]
		if s.to >= v.Parallelism || s.due && !hold {
			continue
		}
		change := fmt.Sprintf("%s %d→%d", label(v), v.Parallelism, s.to)
		if !s.due {
			delayed = append(delayed, change)
			continue
		}
		batched = append(batched, change)
		d.Parallelism[v.ID] = v.Parallelism
		d.Vertices[i].Reason += fmt.Sprintf("; waits until %s, when another scale-down comes due, to go with it", stamp(next))
	}
	var why []string
	if len(batched) > 0 {
		why = append(why, fmt.Sprintf("%s waits until %s to go with the scale-down that comes due then",
			strings.Join(batched, ", "), stamp(next)))
	}
	if len(delayed) > 0 {
		why = append(why, strings.Join(delayed, ", ")+" waits for the scale-down delay")
	}
	if len(why) == 0 {
		return ""
	}
	return "nothing changes now; " + strings.Join(why, "; ")
}
