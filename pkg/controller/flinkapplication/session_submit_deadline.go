package flinkapplication

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A session job's Submitting ends readinessTimeout after its job's tasks first started. The wait for
// slots before that is no failure of the job: a shared cluster may be full. Every restart starts the
// tasks again, though, and Flink dates only the newest start: counted from that, the deadline of a
// job that keeps restarting moved on with each restart and never passed. So the first start is
// recorded (the candidate's tasksStartedAt), and an operator that restarts reads it back.

// sessionSubmitDeadline bounds the time a submitted job takes to run stable, counted from when its
// tasks first started; none while they wait for slots.
func sessionSubmitDeadline(rc *Context) time.Duration {
	st := rc.Job
	c := candidate(st)
	if c == nil || c.JobID == "" || rc.Machine.PhaseStartedAt == nil {
		return readinessTimeout(rc)
	}
	if waitingForSlots(rc, c) != "" {
		return 0
	}
	waited := time.Duration(0)
	if started := tasksStartedAt(rc, c); started != nil {
		waited = max(started.Sub(rc.Machine.PhaseStartedAt.Time), 0)
	}
	return readinessTimeout(rc) + waited
}

// tasksStartedAt is when the record's job's tasks first started: as recorded, or else as Flink
// dates their newest start (the latest of its vertices'); nil before they started.
func tasksStartedAt(rc *Context, c *v1beta1.DeploymentRecord) *time.Time {
	if c.TasksStartedAt != nil {
		return &c.TasksStartedAt.Time
	}
	v := rc.pass().Seen(c.ClusterHash, c.JobID)
	if v == nil {
		v = rc.pass().View(c.ClusterHash, c.JobID)
	}
	if v.Details == nil {
		return nil
	}
	var from int64
	for _, vx := range v.Details.Vertices {
		from = max(from, vx.StartTime)
	}
	if from <= 0 {
		return nil
	}
	t := time.UnixMilli(from)
	return &t
}

// noteTasksStarted records when the record's job's tasks first started, once they did and do not
// wait for slots, from what the pass saw of the job.
func noteTasksStarted(rc *Context, c *v1beta1.DeploymentRecord) {
	if c.TasksStartedAt != nil || c.JobID == "" || rc.pass().Seen(c.ClusterHash, c.JobID) == nil || waitingForSlots(rc, c) != "" {
		return
	}
	if started := tasksStartedAt(rc, c); started != nil {
		t := metav1.NewTime(started.Truncate(time.Second))
		c.TasksStartedAt = &t
	}
}

// giveUpSessionSubmission ends a Submitting that cannot finish in DeployFailed. The job it submitted
// may run on (a job that keeps restarting runs, only never stable), or a submission that got no
// answer may still bring it up: it becomes the session job's recorded job, from the state it was
// submitted from, so that its checkpoints are recorded, the next change stops it per upgradeMode
// before anything else is submitted, and a delete stops it per deleteMode. Forgotten, it ran on in
// the shared cluster unowned, and the next submission's fence took it for the new spec's job.
func giveUpSessionSubmission(rc *Context, cause string) Outcome {
	st := rc.Job
	c := candidate(st)
	if _, live := liveJob(st); c != nil && c.JobID != "" && live == "" {
		deleteUploadedJar(rc, c)
		kept := *c
		kept.Kind, kept.RestorePath, kept.StableTime, kept.TasksStartedAt = "", st.Deployments.NextRestorePath, nil, nil
		st.Deployments.Stable = &kept
	}
	return deployFailed(rc, "DeployFailed", cause)
}
