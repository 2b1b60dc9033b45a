package fsm

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Subject is the object one pass runs for, as the machine sees it in any kind: its phase and its
// history, which each kind keeps in types of its own and the machine works on by their names, and
// the status parts every kind has (MachineStatus, and the whole status, as it is written).
type Subject interface {
	Object() runtime.Object
	Meta() *metav1.ObjectMeta
	Phase() Phase
	// Enter moves the object into phase to and records the transition in its history.
	Enter(from, to Phase, at metav1.Time, reason string)
	// SetPhase sets the phase without a transition: a first phase, or a migrated name.
	SetPhase(p Phase)
	// LastTransition is the newest history entry: the phase entered and why; "" without one.
	LastTransition() (to Phase, reason string)
	// EscapeHistory escapes the free text of the history (package printable).
	EscapeHistory(escape func(string) string)
	Machine() *v1beta1.MachineStatus
	// Status is the whole status, as it is written: a pointer to it, which SameStatus compares
	// without copying or boxing anything.
	Status() interface{}
	// SaveStatus copies the status (not the spec, which a pass does not change) and returns what
	// sets it back to the copy, in place.
	SaveStatus() (restore func())
}

// AppendHistory appends a transition and keeps the newest MaxHistory.
func AppendHistory[T any](h []T, entry T) []T {
	h = append(h, entry)
	if n := len(h); n > v1beta1.MaxHistory {
		h = append([]T(nil), h[n-v1beta1.MaxHistory:]...)
	}
	return h
}

// AtRest tells whether, as far as the machine can tell, the object rests: in a steady phase, with
// its spec acted on and nothing to retry. A kind may know more that keeps an object from resting.
func AtRest(s Subject) bool {
	m, st := s.Meta(), s.Machine()
	if m.DeletionTimestamp != nil || st.ObservedGeneration != m.Generation || !s.Phase().Normalized().IsSteady() {
		return false
	}
	e := st.LastSeenError
	return e == nil || e.IsFailFast
}
