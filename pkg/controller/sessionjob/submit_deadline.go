package sessionjob

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// A session job's Submitting has readinessTimeout, from when the phase began, as an application's
// has, unless its tasks had to wait for slots: a full shared cluster is no failure of the job, so
// while they wait there is no deadline, and once they got them the deadline counts from then
// (the candidate's slotsGrantedAt, the first wait's end: a restart that waits for slots again has
// no deadline while it waits, but does not move it). Only a wait a pass saw is taken for one: the
// time a submission takes to show up, or a jar to be fetched, counts. Counted from the newest start
// of the tasks, which Flink dates, the deadline of a job that keeps restarting moved on with every
// restart and never passed.

// waitingForSlotsReason is the Ready condition's reason while a job waits for task slots: the
// word a pass reads back to tell that the pass before saw it wait.
const waitingForSlotsReason = "WaitingForSlots"

// submitDeadline bounds the time a submitted job takes to run stable; none while its tasks
// wait for slots.
func submitDeadline(p *Pass) time.Duration {
	st := p.Job
	c := jobstate.Candidate(st)
	if c == nil || c.JobID == "" || p.Machine.PhaseStartedAt == nil {
		return p.ReadinessTimeout()
	}
	if waitingForSlots(p, c) != "" {
		return 0
	}
	waited := time.Duration(0)
	if granted := slotsGranted(p, c); !granted.IsZero() {
		waited = max(granted.Sub(p.Machine.PhaseStartedAt.Time), 0)
	}
	return p.ReadinessTimeout() + waited
}

// slotsGranted is when the record's job got the slots it was seen waiting for: as recorded, or,
// on the first pass after the wait, which records it only after the deadline was judged, when its
// tasks started. Zero when no wait was seen.
func slotsGranted(p *Pass, c *v1beta1.DeploymentRecord) time.Time {
	switch {
	case c.SlotsGrantedAt != nil:
		return c.SlotsGrantedAt.Time
	case sawWaitingForSlots(p):
		return tasksStarted(p, c).Truncate(time.Second)
	}
	return time.Time{}
}

// sawWaitingForSlots tells whether the pass before this one saw the job wait for slots, from the
// Ready condition it wrote.
func sawWaitingForSlots(p *Pass) bool {
	ready := meta.FindStatusCondition(p.Machine.Conditions, v1beta1.ConditionReady)
	return ready != nil && ready.Reason == waitingForSlotsReason
}

// noteSlotWait says, with a Warning, that the record's job waits for task slots, once as the wait
// begins (the wait has no deadline, and is not silent), and records when a wait seen ended: when
// the tasks started after it, as Flink dates their start, the first time only.
func noteSlotWait(p *Pass, c *v1beta1.DeploymentRecord, why string) {
	switch {
	case why != "":
		if !sawWaitingForSlots(p) {
			p.Event(true, waitingForSlotsReason, why+"; it waits without a deadline until slots come free")
		}
		p.Machine.Reason, p.Waiting = why, waitingForSlotsReason
	case c.SlotsGrantedAt == nil && sawWaitingForSlots(p):
		t := metav1.NewTime(slotsGranted(p, c))
		c.SlotsGrantedAt = &t
	}
}

// tasksStarted is when the record's job's tasks last started, as Flink dates it (the latest of its
// vertices' start), or now when the pass did not see it.
func tasksStarted(p *Pass, c *v1beta1.DeploymentRecord) time.Time {
	v := p.Flink().Seen(c.ClusterHash, c.JobID)
	if v == nil || v.Details == nil {
		return p.Now
	}
	var from int64
	for _, vx := range v.Details.Vertices {
		from = max(from, vx.StartTime)
	}
	if from <= 0 {
		return p.Now
	}
	return time.UnixMilli(from)
}

// giveUpSubmission ends a Submitting that cannot finish in DeployFailed. The job it submitted
// may run on (a job that keeps restarting runs, only never stable), or a submission that got no
// answer may still bring it up: it becomes the session job's recorded job, from the state it was
// submitted from, so that its checkpoints are recorded, the next change stops it per upgradeMode
// before anything else is submitted, and a delete stops it per deleteMode. Forgotten, it ran on in
// the shared cluster unowned, and the next submission's fence took it for the new spec's job.
func giveUpSubmission(p *Pass, cause string) fsm.Outcome {
	st := p.Job
	c := jobstate.Candidate(st)
	if _, live := jobstate.LiveJob(st); c != nil && c.JobID != "" && live == "" && !neverSubmitted(p, c) {
		deleteUploadedJar(p, c)
		lifecycle.KeepAsSessionJobsJob(st)
	}
	return p.DeployFailed("DeployFailed", cause)
}

// neverSubmitted tells whether the record's job id has nothing behind it: its JobManager answered
// this pass that it knows no such job, no submission went out unanswered that could still bring one
// up, and no state of it was recorded. Kept, such an id would have the next change stop a job that
// is not there, and find no state of it to go on from. A job that was lost with state recorded is
// kept: the next change goes on from that state.
func neverSubmitted(p *Pass, c *v1beta1.DeploymentRecord) bool {
	v := p.Flink().Seen(c.ClusterHash, c.JobID)
	return v != nil && v.Liveness == jobs.Stopped && v.Details == nil && c.SubmittedAt == nil &&
		len(p.JobState().Recorded(c.JobID).Completed) == 0
}
