package sessioncluster

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
)

// Subject is a FlinkSessionCluster as the phase machine sees it (fsm.Subject) and its pass works
// on it (lifecycle.Subject).
type Subject struct{ *v1beta1.FlinkSessionCluster }

func (s Subject) Object() runtime.Object   { return s.FlinkSessionCluster }
func (s Subject) Meta() *metav1.ObjectMeta { return &s.ObjectMeta }
func (s Subject) Phase() fsm.Phase {
	return fsm.Phase(s.FlinkSessionCluster.Status.Phase)
}
func (s Subject) Machine() *v1beta1.MachineStatus {
	return &s.FlinkSessionCluster.Status.MachineStatus
}
func (s Subject) Job() *v1beta1.JobOwnerStatus { return nil }
func (s Subject) Clusters() *v1beta1.ClusterOwnerStatus {
	return &s.FlinkSessionCluster.Status.ClusterOwnerStatus
}
func (s Subject) Status() interface{} { return &s.FlinkSessionCluster.Status }
func (s Subject) SaveStatus() func() {
	saved := s.FlinkSessionCluster.Status.DeepCopy()
	return func() { s.FlinkSessionCluster.Status = *saved }
}

func (s Subject) SetPhase(p fsm.Phase) {
	s.FlinkSessionCluster.Status.Phase = v1beta1.FlinkSessionClusterPhase(p)
}

func (s Subject) Enter(from, to fsm.Phase, at metav1.Time, reason string) {
	s.FlinkSessionCluster.Status.Phase = v1beta1.FlinkSessionClusterPhase(to)
	s.FlinkSessionCluster.Status.History = fsm.AppendHistory(s.FlinkSessionCluster.Status.History, v1beta1.SessionClusterPhaseTransition{
		From: v1beta1.FlinkSessionClusterPhase(from), To: v1beta1.FlinkSessionClusterPhase(to), Time: at, Reason: reason})
}

func (s Subject) LastTransition() (fsm.Phase, string) {
	if n := len(s.FlinkSessionCluster.Status.History); n > 0 {
		return fsm.Phase(s.FlinkSessionCluster.Status.History[n-1].To), s.FlinkSessionCluster.Status.History[n-1].Reason
	}
	return "", ""
}

func (s Subject) EscapeHistory(escape func(string) string) {
	for i := range s.FlinkSessionCluster.Status.History {
		s.FlinkSessionCluster.Status.History[i].Reason = escape(s.FlinkSessionCluster.Status.History[i].Reason)
	}
}
