package flinkapplication

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// subject is the object one pass runs for, in its own kind: the machine reads and writes its phase
// and its history through it, and the handlers its status parts (MachineStatus, JobOwnerStatus,
// ClusterOwnerStatus), which every kind that has them embeds as one type. Each kind's phase and
// history have a type of their own; the machine works on their names.
type subject interface {
	object() runtime.Object
	meta() *metav1.ObjectMeta
	phase() Phase
	// enter moves the object into phase to and records the transition in its history.
	enter(from, to Phase, at metav1.Time, reason string)
	// setPhase sets the phase without a transition: a first phase, or a migrated name.
	setPhase(p Phase)
	// lastTransition is the newest history entry: the phase entered and why; "" without one.
	lastTransition() (to Phase, reason string)
	// escapeHistory escapes the free text of the history (see showable).
	escapeHistory(escape func(string) string)
	machine() *v1beta1.MachineStatus
	// job is nil for a kind that owns no job; clusters is nil for a kind that owns no cluster.
	job() *v1beta1.JobOwnerStatus
	clusters() *v1beta1.ClusterOwnerStatus
	// status is the whole status, as it is written: a pointer to it, which fsm.SameStatus compares
	// without copying or boxing anything.
	status() interface{}
	// saveStatus copies the status (not the spec, which a pass does not change) and returns what
	// sets it back to the copy, in place.
	saveStatus() (restore func())
}

// appendHistory appends a transition and keeps the newest MaxHistory.
func appendHistory[T any](h []T, entry T) []T {
	h = append(h, entry)
	if n := len(h); n > v1beta1.MaxHistory {
		h = append([]T(nil), h[n-v1beta1.MaxHistory:]...)
	}
	return h
}

// applicationSubject is a FlinkApplication.
type applicationSubject struct{ *v1beta1.FlinkApplication }

func (s applicationSubject) object() runtime.Object          { return s.FlinkApplication }
func (s applicationSubject) meta() *metav1.ObjectMeta        { return &s.ObjectMeta }
func (s applicationSubject) phase() Phase                    { return Phase(s.Status.Phase) }
func (s applicationSubject) setPhase(p Phase)                { s.Status.Phase = v1beta1.FlinkApplicationPhase(p) }
func (s applicationSubject) machine() *v1beta1.MachineStatus { return &s.Status.MachineStatus }
func (s applicationSubject) job() *v1beta1.JobOwnerStatus    { return &s.Status.JobOwnerStatus }
func (s applicationSubject) clusters() *v1beta1.ClusterOwnerStatus {
	return &s.Status.ClusterOwnerStatus
}
func (s applicationSubject) status() interface{} { return &s.Status }
func (s applicationSubject) saveStatus() func() {
	saved := s.Status.DeepCopy()
	return func() { s.Status = *saved }
}

func (s applicationSubject) enter(from, to Phase, at metav1.Time, reason string) {
	s.Status.Phase = v1beta1.FlinkApplicationPhase(to)
	s.Status.History = appendHistory(s.Status.History, v1beta1.PhaseTransition{From: v1beta1.FlinkApplicationPhase(from),
		To: v1beta1.FlinkApplicationPhase(to), Time: at, Reason: reason})
}

func (s applicationSubject) lastTransition() (Phase, string) {
	if n := len(s.Status.History); n > 0 {
		return Phase(s.Status.History[n-1].To), s.Status.History[n-1].Reason
	}
	return "", ""
}

func (s applicationSubject) escapeHistory(escape func(string) string) {
	for i := range s.Status.History {
		s.Status.History[i].Reason = escape(s.Status.History[i].Reason)
	}
}

// sessionJobSubject is a FlinkSessionJob.
type sessionJobSubject struct{ *v1beta1.FlinkSessionJob }

func (s sessionJobSubject) object() runtime.Object   { return s.FlinkSessionJob }
func (s sessionJobSubject) meta() *metav1.ObjectMeta { return &s.ObjectMeta }
func (s sessionJobSubject) phase() Phase {
	return Phase(s.Status.Phase)
}
func (s sessionJobSubject) machine() *v1beta1.MachineStatus       { return &s.Status.MachineStatus }
func (s sessionJobSubject) job() *v1beta1.JobOwnerStatus          { return &s.Status.JobOwnerStatus }
func (s sessionJobSubject) clusters() *v1beta1.ClusterOwnerStatus { return nil }
func (s sessionJobSubject) status() interface{}                   { return &s.Status }
func (s sessionJobSubject) saveStatus() func() {
	saved := s.Status.DeepCopy()
	return func() { s.Status = *saved }
}

func (s sessionJobSubject) setPhase(p Phase) {
	s.Status.Phase = v1beta1.FlinkSessionJobPhase(p)
}

func (s sessionJobSubject) enter(from, to Phase, at metav1.Time, reason string) {
	s.Status.Phase = v1beta1.FlinkSessionJobPhase(to)
	s.Status.History = appendHistory(s.Status.History, v1beta1.SessionJobPhaseTransition{
		From: v1beta1.FlinkSessionJobPhase(from), To: v1beta1.FlinkSessionJobPhase(to), Time: at, Reason: reason})
}

func (s sessionJobSubject) lastTransition() (Phase, string) {
	if n := len(s.Status.History); n > 0 {
		return Phase(s.Status.History[n-1].To), s.Status.History[n-1].Reason
	}
	return "", ""
}

func (s sessionJobSubject) escapeHistory(escape func(string) string) {
	for i := range s.Status.History {
		s.Status.History[i].Reason = escape(s.Status.History[i].Reason)
	}
}

// sessionClusterSubject is a FlinkSessionCluster.
type sessionClusterSubject struct{ *v1beta1.FlinkSessionCluster }

func (s sessionClusterSubject) object() runtime.Object   { return s.FlinkSessionCluster }
func (s sessionClusterSubject) meta() *metav1.ObjectMeta { return &s.ObjectMeta }
func (s sessionClusterSubject) phase() Phase {
	return Phase(s.Status.Phase)
}
func (s sessionClusterSubject) machine() *v1beta1.MachineStatus { return &s.Status.MachineStatus }
func (s sessionClusterSubject) job() *v1beta1.JobOwnerStatus    { return nil }
func (s sessionClusterSubject) clusters() *v1beta1.ClusterOwnerStatus {
	return &s.Status.ClusterOwnerStatus
}
func (s sessionClusterSubject) status() interface{} { return &s.Status }
func (s sessionClusterSubject) saveStatus() func() {
	saved := s.Status.DeepCopy()
	return func() { s.Status = *saved }
}

func (s sessionClusterSubject) setPhase(p Phase) {
	s.Status.Phase = v1beta1.FlinkSessionClusterPhase(p)
}

func (s sessionClusterSubject) enter(from, to Phase, at metav1.Time, reason string) {
	s.Status.Phase = v1beta1.FlinkSessionClusterPhase(to)
	s.Status.History = appendHistory(s.Status.History, v1beta1.SessionClusterPhaseTransition{
		From: v1beta1.FlinkSessionClusterPhase(from), To: v1beta1.FlinkSessionClusterPhase(to), Time: at, Reason: reason})
}

func (s sessionClusterSubject) lastTransition() (Phase, string) {
	if n := len(s.Status.History); n > 0 {
		return Phase(s.Status.History[n-1].To), s.Status.History[n-1].Reason
	}
	return "", ""
}

func (s sessionClusterSubject) escapeHistory(escape func(string) string) {
	for i := range s.Status.History {
		s.Status.History[i].Reason = escape(s.Status.History[i].Reason)
	}
}
