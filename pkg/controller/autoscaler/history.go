package autoscaler

import (
	"maps"
	"slices"
	"time"
	"unicode/utf8"
)

// MaxChanges is how many past decisions a History keeps, the newest.
const MaxChanges = 10

// maxReason is the most bytes a decision's reason takes in a History's JSON.
const maxReason = 200

// History is what the autoscaler remembers between evaluations; the caller persists it in the
// application's status and hands it back. Encoded as JSON it takes at most 4 KiB plus 1 KiB
// per vertex (with Flink's 32-character vertex ids): the last MaxChanges decisions with reasons of
// at most 200 bytes, the last stable parallelism, and each vertex's load over the scale-down delay.
type History struct {
	// Changes are the last decisions that changed, or in recommend-only mode would have changed,
	// the parallelism, oldest first.
	Changes []Change `json:"changes,omitempty"`
	// Stable is the newest parallelism the job ran stable with: where the way back returns to.
	Stable StableRun `json:"stable,omitzero"`
	// Load holds, by vertex id, the vertex's load over the last ScaleDownDelay: it scales down once
	// the highest is below the tolerance band at its parallelism.
	Load map[string]LoadRecord `json:"load,omitempty"`
	// HoldUntil is the end of the cool-down after a way back: nothing is decided before it.
	HoldUntil time.Time `json:"holdUntil,omitzero"`
}

// ChangeKind is what a decision in the history did.
type ChangeKind string

const (
	// Scaled: the autoscaler changed the parallelism.
	Scaled ChangeKind = "Scaled"
	// Recommended: in recommend-only mode, the autoscaler would have changed it.
	Recommended ChangeKind = "Recommended"
	// WentBack: a rescaled job failed or did not run stable in time, and the autoscaler returned
	// it to the last stable parallelism.
	WentBack ChangeKind = "WentBack"
)

// Change is one past decision.
type Change struct {
	Time time.Time  `json:"time"`
	Kind ChangeKind `json:"kind"`
	// Vertices are the vertices whose parallelism it changed.
	Vertices []VertexChange `json:"vertices"`
	Reason   string         `json:"reason,omitempty"`
}

// VertexChange is one vertex's parallelism before and after a decision.
type VertexChange struct {
	ID   string `json:"id"`
	From int    `json:"from"`
	To   int    `json:"to"`
}

// clone is a copy that shares nothing with h, so that a decision never changes the caller's.
func (h History) clone() History {
	h.Changes = slices.Clone(h.Changes)
	for i := range h.Changes {
		h.Changes[i].Vertices = slices.Clone(h.Changes[i].Vertices)
	}
	h.Stable.Parallelism = maps.Clone(h.Stable.Parallelism)
	h.Load = maps.Clone(h.Load)
	for id, r := range h.Load {
		r.Peaks = slices.Clone(r.Peaks)
		h.Load[id] = r
	}
	return h
}

// noteStable keeps the newer of the history's stable run and the one the job state reports.
func (h *History) noteStable(s StableRun) {
	if len(s.Parallelism) > 0 && s.At.After(h.Stable.At) {
		h.Stable = StableRun{At: s.At, Parallelism: maps.Clone(s.Parallelism)}
	}
}

// record adds a decision, dropping the oldest beyond MaxChanges.
func (h *History) record(c Change) {
	c.Reason = truncate(c.Reason, maxReason)
	h.Changes = append(h.Changes, c)
	if n := len(h.Changes) - MaxChanges; n > 0 {
		h.Changes = slices.Delete(h.Changes, 0, n)
	}
}

// last is the newest decision of one of the kinds; nil when none.
func (h History) last(kinds ...ChangeKind) *Change {
	for i := len(h.Changes) - 1; i >= 0; i-- {
		if slices.Contains(kinds, h.Changes[i].Kind) {
			return &h.Changes[i]
		}
	}
	return nil
}

// scaledUp is when the autoscaler last scaled the vertex up; zero when it is not in the history.
func (h History) scaledUp(id string) time.Time {
	for i := len(h.Changes) - 1; i >= 0; i-- {
		if c := h.Changes[i]; c.Kind == Scaled {
			for _, v := range c.Vertices {
				if v.ID == id && v.To > v.From {
					return c.Time
				}
			}
		}
	}
	return time.Time{}
}

// truncate cuts s so that its JSON encoding takes at most n bytes, quotes aside: Flink's vertex
// names are full of "->", and JSON writes a > in six bytes.
func truncate(s string, n int) string {
	size := 0
	for _, r := range s {
		size += encodedLen(r)
	}
	if size <= n {
		return s
	}
	size = len("…")
	for i, r := range s {
		if size += encodedLen(r); size > n {
			return s[:i] + "…"
		}
	}
	return s
}

// encodedLen is how many bytes encoding/json writes for the rune, an invalid byte taken as the
// six of its replacement.
func encodedLen(r rune) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029' || r == utf8.RuneError:
		return 6
	}
	return utf8.RuneLen(r)
}
