package sessionjob

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
)

// Subject is a FlinkSessionJob as the phase machine sees it (fsm.Subject) and its pass works on it
// (lifecycle.Subject).
type Subject struct{ *v1beta1.FlinkSessionJob }

func (s Subject) Object() runtime.Object   { return s.FlinkSessionJob }
func (s Subject) Meta() *metav1.ObjectMeta { return &s.ObjectMeta }
func (s Subject) Phase() fsm.Phase {
	return fsm.Phase(s.FlinkSessionJob.Status.Phase)
}
func (s Subject) Machine() *v1beta1.MachineStatus {
	return &s.FlinkSessionJob.Status.MachineStatus
}
func (s Subject) Job() *v1beta1.JobOwnerStatus {
	return &s.FlinkSessionJob.Status.JobOwnerStatus
}
func (s Subject) Clusters() *v1beta1.ClusterOwnerStatus { return nil }
func (s Subject) Status() interface{}                   { return &s.FlinkSessionJob.Status }
func (s Subject) SaveStatus() func() {
	saved := s.FlinkSessionJob.Status.DeepCopy()
	return func() { s.FlinkSessionJob.Status = *saved }
}

func (s Subject) SetPhase(p fsm.Phase) {
	s.FlinkSessionJob.Status.Phase = v1beta1.FlinkSessionJobPhase(p)
}

func (s Subject) Enter(from, to fsm.Phase, at metav1.Time, reason string) {
	s.FlinkSessionJob.Status.Phase = v1beta1.FlinkSessionJobPhase(to)
	s.FlinkSessionJob.Status.History = fsm.AppendHistory(s.FlinkSessionJob.Status.History, v1beta1.SessionJobPhaseTransition{
		From: v1beta1.FlinkSessionJobPhase(from), To: v1beta1.FlinkSessionJobPhase(to), Time: at, Reason: reason})
}

func (s Subject) LastTransition() (fsm.Phase, string) {
	if n := len(s.FlinkSessionJob.Status.History); n > 0 {
		return fsm.Phase(s.FlinkSessionJob.Status.History[n-1].To), s.FlinkSessionJob.Status.History[n-1].Reason
	}
	return "", ""
}

func (s Subject) EscapeHistory(escape func(string) string) {
	for i := range s.FlinkSessionJob.Status.History {
		s.FlinkSessionJob.Status.History[i].Reason = escape(s.FlinkSessionJob.Status.History[i].Reason)
	}
}
