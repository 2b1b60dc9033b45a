package flinkapplication

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// subject is the object one pass runs for, in its own kind: the machine's view of it
// (fsm.Subject), and the status parts the handlers read and write, which every kind that has them
// embeds as one type.
type subject = lifecycle.Subject

// Subject is a FlinkApplication.
type Subject struct{ *v1beta1.FlinkApplication }

func (s Subject) Object() runtime.Object   { return s.FlinkApplication }
func (s Subject) Meta() *metav1.ObjectMeta { return &s.ObjectMeta }
func (s Subject) Phase() Phase             { return Phase(s.FlinkApplication.Status.Phase) }
func (s Subject) SetPhase(p Phase) {
	s.FlinkApplication.Status.Phase = v1beta1.FlinkApplicationPhase(p)
}
func (s Subject) Machine() *v1beta1.MachineStatus {
	return &s.FlinkApplication.Status.MachineStatus
}
func (s Subject) Job() *v1beta1.JobOwnerStatus {
	return &s.FlinkApplication.Status.JobOwnerStatus
}
func (s Subject) Clusters() *v1beta1.ClusterOwnerStatus {
	return &s.FlinkApplication.Status.ClusterOwnerStatus
}
func (s Subject) Status() interface{} { return &s.FlinkApplication.Status }
func (s Subject) SaveStatus() func() {
	saved := s.FlinkApplication.Status.DeepCopy()
	return func() { s.FlinkApplication.Status = *saved }
}

func (s Subject) Enter(from, to Phase, at metav1.Time, reason string) {
	st := &s.FlinkApplication.Status
	st.Phase = v1beta1.FlinkApplicationPhase(to)
	st.History = fsm.AppendHistory(st.History, v1beta1.PhaseTransition{From: v1beta1.FlinkApplicationPhase(from),
		To: v1beta1.FlinkApplicationPhase(to), Time: at, Reason: reason})
}

func (s Subject) LastTransition() (Phase, string) {
	if n := len(s.FlinkApplication.Status.History); n > 0 {
		return Phase(s.FlinkApplication.Status.History[n-1].To), s.FlinkApplication.Status.History[n-1].Reason
	}
	return "", ""
}

func (s Subject) EscapeHistory(escape func(string) string) {
	for i := range s.FlinkApplication.Status.History {
		s.FlinkApplication.Status.History[i].Reason = escape(s.FlinkApplication.Status.History[i].Reason)
	}
}
