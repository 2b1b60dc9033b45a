package lifecycle

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// Summarize derives the parts of status that follow from the rest: the fields the kind derives from
// its records, the observed generation and the Ready, Progressing and JobHealthy conditions.
func (p *Pass) Summarize() {
	st, m := p.Job, p.Machine
	p.Kind.DeriveStatus()
	p.showJobAsSeen()
	p.Kind.SummarizeKind()
	m.ObservedGeneration = p.Meta.Generation
	st.UpgradeMode = p.Settings.UpgradeMode
	phase := p.Subject.Phase().Normalized()
	// Not ready for the reason the object entered its phase: JobLost, SpecChanged, RolledBack...
	notReady := string(phase)
	if to, why := p.Subject.LastTransition(); to == p.Subject.Phase() && why != "" {
		notReady = why
	}
	if p.Waiting != "" {
		notReady = p.Waiting
	}
	ready := metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: notReady,
		ObservedGeneration: p.Meta.Generation, Message: m.Reason}
	if phase == fsm.PhaseRunning && st.JobStatus.State == v1beta1.JobRunning {
		// Ready says what the pass saw, not what an earlier one did: a job whose JobManager does
		// not answer is not known to run.
		if hash, jobID := jobstate.LiveJob(st); jobID != "" && p.Flink().View(hash, jobID).Liveness != jobs.Alive {
			ready.Reason, ready.Message = "JobStateUnknown", p.Flink().View(hash, jobID).Evidence
		} else {
			ready.Status, ready.Reason, ready.Message = metav1.ConditionTrue, "JobRunning",
				fmt.Sprintf("job %s is running", st.JobStatus.JobID)
		}
	}
	progressing := metav1.Condition{Type: v1beta1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: string(phase),
		ObservedGeneration: p.Meta.Generation}
	if !phase.IsSteady() && phase != fsm.PhaseDeleting {
		progressing.Status = metav1.ConditionTrue
	}
	fsm.SetCondition(m, ready, p.Now)
	fsm.SetCondition(m, progressing, p.Now)
	p.summarizeJobHealth()
}

// showJobAsSeen keeps jobStatus.state from saying a job runs when the pass saw it stopped: a job its
// JobManager no longer knows, or one gone with its JobManager, has no state; one Flink reports
// terminal shows that state. A job the pass did not look at keeps what was seen last. So does one
// shown ended for good (FAILED, CANCELED, FINISHED) that its JobManager forgot since (restarted
// without HA): it ended all the same, and a FAILED job is then not taken for one lost with its
// JobManager (an application in Running, say).
func (p *Pass) showJobAsSeen() {
	js := &p.Job.JobStatus
	if js.JobID == "" || p.FlinkAsked() == nil {
		return
	}
	v := p.FlinkAsked().Seen(js.ClusterHash, js.JobID)
	if v == nil || v.Liveness != jobs.Stopped {
		return
	}
	if v.State() != "" || !client.IsGloballyTerminal(string(js.State)) {
		js.State = v1beta1.JobState(v.State())
	}
	switch _, live := jobstate.LiveJob(p.Job); {
	case js.State != "":
	case live != js.JobID:
		// A deployment's job in the making: its id goes out ahead of the submission, so a
		// JobManager that does not list it yet has lost nothing. Its health is not known.
		js.Health = ""
	default:
		js.Health = v1beta1.Red
	}
}

// summarizeJobHealth sets the JobHealthy condition from the health the pass observed of the live
// job; without a live job the condition is left out.
func (p *Pass) summarizeJobHealth() {
	st, m := p.Job, p.Machine
	if _, jobID := jobstate.LiveJob(st); jobID == "" || st.JobStatus.Health == "" {
		meta.RemoveStatusCondition(&m.Conditions, v1beta1.ConditionJobHealthy)
		return
	}
	c := metav1.Condition{Type: v1beta1.ConditionJobHealthy, Status: metav1.ConditionFalse, ObservedGeneration: p.Meta.Generation,
		Reason: string(st.JobStatus.Health), Message: fmt.Sprintf("job %s is %s", st.JobStatus.JobID, st.JobStatus.Health)}
	if old := meta.FindStatusCondition(m.Conditions, v1beta1.ConditionJobHealthy); p.HealthReason == "" && old != nil {
		// Not observed this pass: the condition stays as it was.
		return
	}
	if p.HealthReason != "" {
		c.Reason = p.HealthReason
	}
	if st.JobStatus.Health == v1beta1.Green {
		c.Status = metav1.ConditionTrue
	}
	fsm.SetCondition(m, c, p.Now)
}
