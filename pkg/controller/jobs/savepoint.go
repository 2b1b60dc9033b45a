package jobs

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Trigger is a savepoint asked of a job: its trigger id and when it was asked for, chosen and
// persisted before the trigger is sent. The zero Trigger is none asked for.
type Trigger struct {
	ID   string
	Time time.Time
	// Sent is when the trigger was, or was about to be, sent to Flink: it is persisted before the
	// request goes out. Zero while it has not been sent.
	Sent time.Time
	// SentToStart is the job's start time as Flink gave it then (epoch milliseconds; 0 when it
	// gave none): the JobMaster that runs the job gives another once it took the job over.
	SentToStart int64
}

// TakeoverSkew is how far apart the operator's clock and a JobManager's may be where the operator
// must compare the start time Flink gives a job with its own times: for a trigger sent while Flink
// gave no start time, or not sent yet. A job started up to this long before counts as started
// after; one that says so wrongly costs a second savepoint. A trigger sent while Flink gave a start
// time is judged by Flink's times alone (Trigger.startedAnotherTime).
const TakeoverSkew = time.Second

// since is when the trigger may have reached Flink at the earliest: when it was sent, else when it
// was asked for.
func (t Trigger) since() time.Time {
	if !t.Sent.IsZero() {
		return t.Sent
	}
	return t.Time
}

// Asked tells whether a savepoint was asked for.
func (t Trigger) Asked() bool { return t.ID != "" }

// SavepointStep is where one savepoint stands after a pass.
type SavepointStep struct {
	// Location is set once the savepoint completed.
	Location string
	// TakenAt is when Flink took the completed savepoint, its trigger timestamp in the job's
	// checkpoint history; zero when Flink does not list it there.
	TakenAt time.Time
	// Failure is set when the savepoint failed or can no longer be had.
	Failure string
	// Unknowable is set with a Failure that is not Flink's word: Flink no longer knows the job, so
	// whether the savepoint completed, with state newer than any recorded, cannot be learned.
	Unknowable bool
	// Wait is non-nil while the savepoint goes on: its trigger is being persisted, it is in
	// progress, or a call failed.
	Wait *Wait
}

// Savepoint drives a savepoint of a job, safely across operator restarts. The trigger id and time
// are chosen first and the step asks for them to be persisted; the id is then sent to Flink as the
// trigger id, so a restart polls the savepoint it already asked for instead of taking a second.
// When Flink does not know the trigger id (it restarted, it forgot the result after five minutes,
// or, before Flink 1.15, it chose an id of its own), the job's checkpoint history is read for a
// savepoint triggered since the recorded time before anything is triggered again. With mayTrigger
// false, or once the pass is overdue, it only follows a savepoint already asked for. The trigger is
// cleared only when Flink reports the savepoint failed: one the caller gives up on for any other
// reason may still complete, and a later pass finds it by the trigger's time.
func (p *Pass) Savepoint(ref Ref, t *Trigger, cancelJob, mayTrigger bool) SavepointStep {
	if !t.Asked() {
		switch {
		case !mayTrigger:
			return SavepointStep{Failure: "no savepoint was asked for"}
		case p.Overdue:
			return SavepointStep{Failure: "the deadline passed before the savepoint was asked for"}
		}
		*t = Trigger{ID: NewID(), Time: p.Now}
		return SavepointStep{Wait: persist()}
	}
	status, err := p.flink.GetSavepointStatus(p.ctx, ref.URL, ref.ID, t.ID)
	if client.IsNotFound(err) {
		step, found, err := p.savepointInHistory(ref, t)
		if found {
			return step
		}
		takenOver, detailsErr := p.takenOverSince(ref, *t)
		switch {
		case client.IsNotFound(err), client.IsNotFound(detailsErr):
			return SavepointStep{Unknowable: true, Failure: fmt.Sprintf(
				"Flink no longer knows job %s, so whether its savepoint (trigger %s) completed cannot be learned", ref.ID, t.ID)}
		case detailsErr != nil:
			// Only the job's details say whether the JobMaster that got the trigger still runs it:
			// nothing is sent again until they do.
			return SavepointStep{Wait: retry(detailsErr)}
		case takenOver:
			// The JobMaster that got the trigger may have taken the savepoint before another took
			// the job over; that one knows neither the trigger nor what the first completed, and
			// sent again, the trigger's failure would say nothing of the first sending (explorer
			// seeds 47000405 and 49000041: a failed resend was taken for the savepoint's end, and
			// the job went back to a checkpoint older than the savepoint completed before the
			// failover).
			return SavepointStep{Unknowable: true, Failure: fmt.Sprintf(
				"job %s was taken over by another JobMaster since its savepoint (trigger %s) was asked for, and whether the savepoint completed before cannot be learned", ref.ID, t.ID)}
		case mayTrigger && !p.Overdue && t.Sent.IsZero():
			// When it is sent is persisted before it is: Flink takes the savepoint once it gets the
			// trigger, so a checkpoint recorded since may be newer or older than the savepoint, one
			// before it is older (ledger.CompleteSavepoint); and a JobMaster that starts the job
			// after it never got it (takenOverSince), which an operator that stops between the
			// request and its status write must still be able to tell (explorer seed 49000041).
			// The trigger's time stays when it was asked for: Flink's history is searched from it,
			// which a JobManager clock a little behind the operator's does not defeat.
			started, err := p.StartedAt(ref)
			if err != nil {
				return SavepointStep{Wait: retry(err)}
			}
			t.Sent, t.SentToStart = p.Now, 0
			if !started.IsZero() {
				t.SentToStart = started.UnixMilli()
			}
			return SavepointStep{Wait: persist()}
		case mayTrigger && !p.Overdue:
			// A second savepoint, should the first have been sent after all, costs only itself.
			return p.trigger(ref, t, cancelJob)
		case err != nil:
			// Only Flink's list of the job's savepoints tells whether one it no longer knows by its
			// trigger completed: nothing is decided until it answers.
			return SavepointStep{Wait: retry(err)}
		}
		return SavepointStep{Failure: "Flink no longer knows the savepoint that was asked for, and lists none taken since"}
	}
	if err != nil {
		return SavepointStep{Wait: retry(err)}
	}
	switch {
	case status.Succeeded():
		taken, found, err := p.savepointTakenAt(ref, status.Location)
		switch {
		case err != nil && !p.Overdue && p.Now.Sub(t.Time) < savepointTakenWait:
			// When Flink took the savepoint orders it against the checkpoints completed around it:
			// the savepoint is read again next pass, with the job's checkpoints, for a while, as one
			// in progress is (the failed read is no failure of the savepoint's).
			return SavepointStep{Wait: later(0)}
		case err == nil && !found:
			// Flink lists newer savepoints and checkpoints of the job than this one, not this one:
			// it is older than all of them, and no older than its trigger.
			taken = t.Time
		}
		p.announce(false, "SavepointCompleted", fmt.Sprintf("savepoint of job %s completed at %s", ref.ID, status.Location))
		return SavepointStep{Location: status.Location, TakenAt: taken}
	case status.Failed():
		*t = Trigger{}
		return SavepointStep{Failure: fmt.Sprintf("savepoint of job %s failed: %s", ref.ID, failureCause(status.FailureCause))}
	}
	return SavepointStep{Wait: later(0)}
}

// trigger sends the recorded trigger. Flink before 1.15 takes no trigger id (the client leaves it
// out for that release) and answers with one of its own: that one is recorded in its place.
// Between the trigger and that record a restart finds the savepoint by its trigger time in the
// job's checkpoint history, once Flink lists it there; only a restart before that may trigger a
// second savepoint.
func (p *Pass) trigger(ref Ref, t *Trigger, cancelJob bool) SavepointStep {
	if d := p.seenDetails(ref); d != nil && comingUp(d, t.Time) {
		return SavepointStep{Wait: later(0)}
	}
	id, err := p.flink.TriggerSavepoint(p.ctx, ref.URL, ref.ID,
		client.SavepointRequest{CancelJob: cancelJob, TriggerID: t.ID, FormatType: p.SavepointFormat, FlinkVersion: ref.FlinkVersion})
	switch {
	case refusedTrigger(err):
		// Flink answered that it will not take this savepoint (no savepoint directory, say): the
		// same request is refused again, and nothing is in flight.
		*t = Trigger{}
		return SavepointStep{Failure: fmt.Sprintf("Flink refused the savepoint of job %s: %v", ref.ID, err)}
	case err != nil:
		return SavepointStep{Wait: retry(err)}
	}
	if id != "" && id != t.ID {
		t.ID = id
	}
	verb := "savepoint"
	if cancelJob {
		verb = "savepoint and cancel"
	}
	p.announce(false, "SavepointTriggered", fmt.Sprintf("triggered %s of job %s (trigger %s)", verb, ref.ID, t.ID))
	return SavepointStep{Wait: later(0)}
}

// savepointInHistory looks for the savepoint of the trigger in the job's checkpoint statistics:
// the newest savepoint triggered since the trigger's time. err is set when Flink did not list the
// job's savepoints: "none found" is then no answer.
func (p *Pass) savepointInHistory(ref Ref, t *Trigger) (SavepointStep, bool, error) {
	cp, err := p.savepointSince(ref, *t)
	if cp == nil {
		return SavepointStep{}, false, err
	}
	switch {
	case cp.Status == "COMPLETED" && !Restorable(cp.ExternalPath):
		// Flink, or the client, says it has no path to restore from (client.Checkpoint).
		*t = Trigger{}
		return SavepointStep{Failure: fmt.Sprintf("savepoint %d of job %s has no path to restore from: %s", cp.ID, ref.ID, cp.ExternalPath)}, true, nil
	case cp.Status == "COMPLETED":
		p.announce(false, "SavepointCompleted", fmt.Sprintf("savepoint of job %s completed at %s (found in its checkpoint history)", ref.ID, cp.ExternalPath))
		return SavepointStep{Location: cp.ExternalPath, TakenAt: time.UnixMilli(cp.TriggerTimestamp)}, true, nil
	case cp.Status == "FAILED":
		*t = Trigger{}
		return SavepointStep{Failure: fmt.Sprintf("savepoint %d of job %s failed", cp.ID, ref.ID)}, true, nil
	}
	return SavepointStep{Wait: later(0)}, true, nil
}

// SavepointSince is the newest savepoint Flink lists for the job as triggered at or after the
// trigger's time, completed or not; nil when there is none or Flink cannot say. No allowance is
// made for a JobManager clock behind the operator's: missing a savepoint only costs another, while
// taking an older one for it would restore older state.
func (p *Pass) SavepointSince(ref Ref, t Trigger) *client.Checkpoint {
	cp, _ := p.savepointSince(ref, t)
	return cp
}

// savepointSince is SavepointSince, with the error when Flink did not tell the job's checkpoints.
func (p *Pass) savepointSince(ref Ref, t Trigger) (*client.Checkpoint, error) {
	if !t.Asked() {
		return nil, nil
	}
	cps, err := p.Checkpoints(ref)
	if err != nil {
		return nil, err
	}
	from := t.Time.UnixMilli()
	var best *client.Checkpoint
	consider := func(c *client.Checkpoint) {
		if c != nil && c.IsSavepoint && c.TriggerTimestamp >= from && (best == nil || c.TriggerTimestamp > best.TriggerTimestamp) {
			best = c
		}
	}
	consider(cps.Latest.Savepoint)
	for i := range cps.History {
		consider(&cps.History[i])
	}
	return best, nil
}

// savepointTakenAt is how long after its trigger a completed savepoint waits for Flink to tell when
// it was taken, while the job's checkpoint statistics fail. Past it the savepoint counts as taken
// when its completion is read: a JobManager whose statistics keep failing does not keep its
// savepoints from completing.
const savepointTakenWait = time.Minute

// savepointTakenAt is when Flink took the savepoint at location, as the job's checkpoint history
// lists it (found false when it does not), and the error when Flink did not tell the job's
// checkpoints. A savepoint is taken when Flink gets its trigger, which comes after the trigger was
// asked for and persisted, up to a pass or more later: the job's checkpoints between the two are
// older than the savepoint, not newer.
func (p *Pass) savepointTakenAt(ref Ref, location string) (time.Time, bool, error) {
	cps, err := p.Checkpoints(ref)
	if err != nil {
		return time.Time{}, false, err
	}
	if c := cps.Latest.Savepoint; c != nil && c.IsSavepoint && c.ExternalPath == location {
		return time.UnixMilli(c.TriggerTimestamp), true, nil
	}
	for _, c := range cps.History {
		if c.IsSavepoint && c.ExternalPath == location {
			return time.UnixMilli(c.TriggerTimestamp), true, nil
		}
	}
	return time.Time{}, false, nil
}

// takenOverSince tells whether another JobMaster runs the job than the one the trigger was sent
// to: it knows neither the trigger nor what the one before completed. The job's start time as Flink
// gives it tells, compared with what Flink gave when the trigger was sent (both on the JobManager's
// clock); without that, the start time is compared with when the trigger was sent, allowing
// TakeoverSkew. A trigger never sent is no JobMaster's. err is set when Flink did not say.
func (p *Pass) takenOverSince(ref Ref, t Trigger) (bool, error) {
	if t.Sent.IsZero() {
		return false, nil
	}
	started, err := p.StartedAt(ref)
	if err != nil || started.IsZero() {
		return false, err
	}
	return t.startedAnotherTime(started), nil
}

// startedAnotherTime tells whether a job Flink says started at `started` was started again since
// the trigger was sent.
func (t Trigger) startedAnotherTime(started time.Time) bool {
	if t.SentToStart != 0 {
		return started.UnixMilli() != t.SentToStart
	}
	return started.After(t.Sent.Add(-TakeoverSkew))
}

// refusedTrigger tells whether Flink answered a trigger (a savepoint's, a checkpoint's) that it will
// not take it: the same request is refused again, and nothing is in flight. No answer, a conflict
// or an error worth retrying leave the trigger as it was.
func refusedTrigger(err error) bool {
	return err != nil && !client.IsRetryable(err) && !client.IsNoAnswer(err) && !client.IsConflict(err)
}

// failureCause is the excerpt of the cause Flink gave an operation's failure, or says it gave none.
func failureCause(cause string) string {
	if c := client.Excerpt(cause); c != "" {
		return c
	}
	return "Flink reported no cause"
}

// comingUp tells whether a savepoint of the job is to wait: Flink fails the savepoint of a job that
// has no JobMaster yet (INITIALIZING), and declines one of a job whose tasks do not all run. A job
// its JobMaster started after the savepoint was asked (one Flink HA brings back with a JobManager
// created again) is coming up: its savepoint is sent once its tasks run, within the caller's
// deadline (attack reviews s10 and s11: a stop took that failure for the savepoint's and went on
// from older state). A job that ran before is not waited for: a savepoint declined then says that
// the job is failing, and the stop goes on to its newest checkpoint.
func comingUp(d *client.JobDetails, asked time.Time) bool {
	switch {
	case d.State == client.JobInitializing:
		return true
	case d.StartTime <= 0 || time.UnixMilli(d.StartTime).Before(asked):
		return false
	}
	return d.State == client.JobCreated || d.State == client.JobRunning && !AllTasksRunning(d)
}
