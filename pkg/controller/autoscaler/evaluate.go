package autoscaler

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Decision is what one evaluation decided, and why.
type Decision struct {
	// Apply is set when the caller should run the job with Parallelism now.
	Apply bool
	// Reason says in a sentence what changes and why, or why nothing does.
	Reason string
	// Parallelism is every vertex's parallelism as the decision has it, by vertex id: what to run
	// when Apply, what would run otherwise (in recommend-only mode, or while a rule holds the
	// change back); the current parallelism when nothing was decided, and nil when WayBack does
	// not go back.
	Parallelism map[string]int
	// Vertices report each vertex, in the order they were given.
	Vertices []VertexDecision
	// WayBack is set when the decision returns a rescaled job to its last stable parallelism.
	WayBack bool
	// History is what the caller persists, whether or not the decision applies.
	History History
}

// VertexDecision is one vertex's part of a decision.
type VertexDecision struct {
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	Current int    `json:"current"`
	// Recommended is what this evaluation's rates and limits ask for; a scale-down waits for
	// ScaleDownDelay before Decision.Parallelism takes it.
	Recommended int    `json:"recommended"`
	Reason      string `json:"reason,omitempty"`
	Rates       Rates  `json:"rates"`
}

// Evaluate decides the job's parallelism per vertex from the metrics of the last window: each
// vertex gets the fewest subtasks that take its target rate at the target utilization, within its
// limits. It decides nothing while the job has failed, restarts or its checkpoints fail, during
// the cool-down after a way back, before the job ran stable since its last change, during the
// stabilization interval after it, and without a full window of metrics; it applies nothing in
// recommend-only mode, nor when a rescale would restart the job and there is no fresh state to
// restart it from.
func Evaluate(now time.Time, cfg Config, vertices []Vertex, samples []Sample, state JobState, history History) Decision {
	h := history.clone()
	h.noteStable(state.Stable)
	d := Decision{Parallelism: map[string]int{}, History: h}
	for _, v := range vertices {
		d.Parallelism[v.ID] = v.Parallelism
		d.Vertices = append(d.Vertices, VertexDecision{ID: v.ID, Name: v.Name, Current: v.Parallelism, Recommended: v.Parallelism})
	}
	if err := cfg.Validate(); err != nil {
		return d.hold("the autoscaler's configuration is invalid: " + err.Error())
	}
	order, err := topological(vertices)
	if err != nil {
		return d.hold(err.Error())
	}
	if why := holdReason(now, cfg, state, h); why != "" {
		return d.hold(why)
	}
	w, why := readWindow(now, cfg, samples, state.LastRescale)
	if why != "" {
		return d.hold(why)
	}
	// The decision reads the samples since the load last changed, once they are enough; until
	// then it rescales nothing (settle).
	changed := latestRegime(order, w, cfg.UtilizationTolerance)
	settling := false
	if !changed.since.IsZero() {
		if recent, enough := w.sinceRegime(changed, cfg); enough {
			w = recent
		} else {
			settling = true
		}
	}
	rates := map[string]*Rates{}
	for _, v := range order {
		r, ok := observe(v, w)
		if !ok {
			return d.hold(fmt.Sprintf("no metrics of vertex %s in the window", label(v)))
		}
		rates[v.ID] = &r
	}
	target(order, rates, cfg.CatchUpDuration)
	applies := !cfg.RecommendOnly && (state.InPlaceRescale || state.FreshState)
	downs := d.decideVertices(now, cfg, vertices, rates, !settling, applies)
	waiting := d.batchScaleDowns(now, cfg, vertices, downs)

	var changes []VertexChange
	var summary, reasons []string
	for i, v := range vertices {
		if p := d.Parallelism[v.ID]; p != v.Parallelism {
			changes = append(changes, VertexChange{ID: v.ID, From: v.Parallelism, To: p})
			summary = append(summary, fmt.Sprintf("%s %d→%d", label(v), v.Parallelism, p))
			reasons = append(reasons, label(v)+": "+d.Vertices[i].Reason)
		}
	}
	switch {
	case settling && len(changes) > 0:
		// The window's mean is of neither load: what it asks for would be undone.
		return d.settle(vertices, changed, cfg)
	case len(changes) == 0 && waiting != "":
		d.Reason = waiting
	case len(changes) == 0:
		d.Reason = "every vertex keeps its parallelism"
	case cfg.RecommendOnly:
		d.Reason = "recommend-only: would rescale " + strings.Join(summary, ", ") + "; " + strings.Join(reasons, "; ")
		if last := d.History.last(Recommended); last == nil || !slices.Equal(last.Vertices, changes) {
			d.History.record(Change{Time: now, Kind: Recommended, Vertices: changes, Reason: d.Reason})
		}
	case !state.InPlaceRescale && !state.FreshState:
		d.Reason = "no rescale: it would restart the job, and the ledger has no fresh state to restore; it " +
			"would rescale " + strings.Join(summary, ", ")
	default:
		d.Apply = true
		d.Reason = "rescale " + strings.Join(summary, ", ") + "; " + strings.Join(reasons, "; ")
		d.History.record(Change{Time: now, Kind: Scaled, Vertices: changes, Reason: d.Reason})
	}
	return d
}

// settle is the decision to wait for enough samples since the load changed.
func (d Decision) settle(vertices []Vertex, r regime, cfg Config) Decision {
	for i, v := range vertices {
		d.Parallelism[v.ID] = v.Parallelism
		d.Vertices[i].Recommended = v.Parallelism
	}
	at := r.since.Add(time.Duration(float64(cfg.MetricsWindow) * minRegimeFraction))
	for i := range d.Vertices {
		if d.Vertices[i].ID == r.id {
			d.Vertices[i].Reason = fmt.Sprintf("busy %.2f before the change, %.2f after; ", r.before, r.after) + d.Vertices[i].Reason
		}
	}
	return d.hold(fmt.Sprintf("%s; decides from %s on the metrics since", r.describe(), stamp(at)))
}

// holdReason says why nothing may be decided now, from the job's state; "" when something may.
func holdReason(now time.Time, cfg Config, state JobState, h History) string {
	switch {
	case now.Before(h.HoldUntil):
		return fmt.Sprintf("cooling down until %s after going back to the last stable parallelism", stamp(h.HoldUntil))
	case state.Failed:
		return "the job failed"
	case state.Restarting:
		return "the job is restarting"
	case state.CheckpointsFailing:
		return "the job's checkpoints are failing"
	case !state.LastRescale.IsZero() && h.Stable.At.Before(state.LastRescale):
		return fmt.Sprintf("the job has not run stable since its parallelism changed at %s", stamp(state.LastRescale))
	case !state.LastRescale.IsZero() && now.Before(state.LastRescale.Add(cfg.StabilizationInterval)):
		return fmt.Sprintf("stabilizing until %s after the change at %s",
			stamp(state.LastRescale.Add(cfg.StabilizationInterval)), stamp(state.LastRescale))
	}
	return ""
}

// hold is the decision to decide nothing, for the reason. Each vertex's load record stays: only a
// stretch without evaluations longer than a rescale takes starts it over (Config.recordGap).
func (d Decision) hold(reason string) Decision {
	d.Reason = reason
	return d
}

// topological orders the vertices so that each comes after its upstream vertices, keeping the
// given order where the graph allows; an error says why the graph cannot be used.
func topological(vertices []Vertex) ([]Vertex, error) {
	if len(vertices) == 0 {
		return nil, fmt.Errorf("the job graph has no vertices")
	}
	byID := map[string]Vertex{}
	for _, v := range vertices {
		switch _, dup := byID[v.ID]; {
		case v.ID == "":
			return nil, fmt.Errorf("vertex %q has no id", v.Name)
		case dup:
			return nil, fmt.Errorf("two vertices have the id %s", v.ID)
		case v.Parallelism < 1:
			return nil, fmt.Errorf("vertex %s has parallelism %d", label(v), v.Parallelism)
		}
		byID[v.ID] = v
	}
	for _, v := range vertices {
		for _, u := range v.Upstream {
			if _, ok := byID[u]; !ok {
				return nil, fmt.Errorf("vertex %s names an upstream vertex %s that is not in the graph", label(v), u)
			}
		}
	}
	done := map[string]bool{}
	var order []Vertex
	for len(order) < len(vertices) {
		progress := false
		for _, v := range vertices {
			if !done[v.ID] && allDone(v.Upstream, done) {
				done[v.ID], progress = true, true
				order = append(order, v)
			}
		}
		if !progress {
			var left []string
			for _, v := range vertices {
				if !done[v.ID] {
					left = append(left, label(v))
				}
			}
			return nil, fmt.Errorf("the job graph has a cycle through %s", strings.Join(left, ", "))
		}
	}
	return order, nil
}

func allDone(ids []string, done map[string]bool) bool {
	for _, id := range ids {
		if !done[id] {
			return false
		}
	}
	return true
}

func label(v Vertex) string { return labelOf(VertexDecision{ID: v.ID, Name: v.Name}) }

func labelOf(vd VertexDecision) string {
	if vd.Name != "" {
		return vd.Name
	}
	return vd.ID
}
