package autoscaler

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// WayBack returns a job the autoscaler rescaled to the last parallelism that ran stable, when the
// job failed since the rescale took effect or did not run stable within ReadinessTimeout of it;
// Evaluate then decides nothing for CoolDown (the decision's History holds it off). A pass asks
// WayBack first, and Evaluate only when it does not go back.
//
// The caller restarts the job with state, as for any restart: the restore policy chooses it, and
// refuses to start without state unless the application allows that. WayBack goes back once: the
// parallelism it returns to ran stable before, and a failure there is the job's own, which the
// operator's restart rules handle.
func WayBack(now time.Time, cfg Config, state JobState, history History) Decision {
	h := history.clone()
	h.noteStable(state.Stable)
	d := Decision{History: h}
	if err := cfg.Validate(); err != nil {
		d.Reason = "the autoscaler's configuration is invalid: " + err.Error()
		return d
	}
	last := h.last(Scaled, WentBack)
	if last == nil || last.Kind != Scaled {
		d.Reason = "no rescale by the autoscaler to go back from"
		return d
	}
	if state.LastRescale.Before(last.Time) {
		d.Reason = fmt.Sprintf("the rescale decided at %s has not taken effect", stamp(last.Time))
		return d
	}
	started := state.LastRescale
	deadline := started.Add(cfg.ReadinessTimeout)
	var why string
	switch {
	case !h.Stable.At.Before(started):
		d.Reason = fmt.Sprintf("the rescaled job ran stable at %s", stamp(h.Stable.At))
		return d
	case state.Failed:
		why = fmt.Sprintf("the job failed after the rescale at %s", stamp(started))
	case now.Before(deadline):
		d.Reason = fmt.Sprintf("the rescaled job has until %s to run stable", stamp(deadline))
		return d
	default:
		why = fmt.Sprintf("the job did not run stable within readinessTimeout (%s) of the rescale at %s",
			cfg.ReadinessTimeout, stamp(started))
	}
	if len(h.Stable.Parallelism) == 0 {
		d.Reason = why + "; no parallelism ran stable before it, so there is nothing to go back to"
		return d
	}

	current := maps.Clone(h.Stable.Parallelism)
	for _, c := range last.Vertices {
		current[c.ID] = c.To
	}
	var changes []VertexChange
	d.Parallelism = map[string]int{}
	for _, id := range slices.Sorted(maps.Keys(current)) {
		back, ok := h.Stable.Parallelism[id]
		if !ok {
			// A vertex the stable run did not have keeps what it has: there is nothing to go back to.
			back = current[id]
		}
		d.Parallelism[id] = back
		d.Vertices = append(d.Vertices, VertexDecision{ID: id, Current: current[id], Recommended: back,
			Reason: fmt.Sprintf("ran stable with %d at %s", back, stamp(h.Stable.At))})
		if back != current[id] {
			changes = append(changes, VertexChange{ID: id, From: current[id], To: back})
		}
	}
	d.Apply, d.WayBack = true, true
	d.History.HoldUntil = now.Add(cfg.CoolDown)
	d.Reason = fmt.Sprintf("%s: back to the parallelism that ran stable at %s; no rescale until %s",
		why, stamp(h.Stable.At), stamp(d.History.HoldUntil))
	d.History.record(Change{Time: now, Kind: WentBack, Vertices: changes, Reason: d.Reason})
	d.History.Load = nil
	return d
}
