package flinkapplication

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// newID returns 32 lowercase hex characters, the form Flink uses for job and trigger ids.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newJobID is a job id that names its application: its first 12 hex characters derive from the
// application's namespace and name, the rest is random. A job found on a cluster with that prefix
// was started by this application, so the fence before a submission adopts it; any other job alive
// there was not, and blocks the submission.
func newJobID(app *v1beta1.FlinkApplication) string {
	prefix := jobIDPrefix(app)
	return prefix + newID()[len(prefix):]
}

func jobIDPrefix(app *v1beta1.FlinkApplication) string {
	name := app.Namespace + "/" + app.Name
	if k := kindName(app); k != applicationKindName {
		// A session job may share its name with a FlinkApplication; their jobs are told apart.
		name = k + "/" + name
	}
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:6])
}

func startedByApp(app *v1beta1.FlinkApplication, jobID string) bool {
	return strings.HasPrefix(jobID, jobIDPrefix(app))
}

// savepointStep is where one savepoint stands after a pass.
type savepointStep struct {
	// Location is set once the savepoint completed.
	Location string
	// Failure is set when the savepoint failed or can no longer be had; the trigger id is cleared
	// so that a later attempt takes a new one.
	Failure string
	// Wait is non-nil while the caller must return it: the intent is being persisted, the savepoint is
	// in progress, or a call failed.
	Wait *Outcome
}

func waitStep(o Outcome) savepointStep { return savepointStep{Wait: &o} }

// takeSavepoint drives a savepoint of a job, safely across operator restarts. The trigger id and
// time are chosen and persisted first, and the id is sent to Flink as the trigger id, so a restart
// polls the savepoint it already asked for instead of taking a second. When Flink does not know the
// trigger id (it restarted, it forgot the result after five minutes, or, before Flink 1.15, it
// chose an id of its own), the job's checkpoint history is read for a savepoint triggered since
// the recorded time before anything is triggered again. With mayTrigger false, or once the phase
// is overdue, it only follows a savepoint already asked for.
func takeSavepoint(rc *Context, rec *v1beta1.DeploymentRecord, ref JobRef, cancelJob, mayTrigger bool) savepointStep {
	if rec.Savepoint == nil {
		switch {
		case !mayTrigger:
			return savepointStep{Failure: "no savepoint was asked for"}
		case rc.Overdue:
			return savepointStep{Failure: "the deadline passed before the savepoint was asked for"}
		}
		rec.Savepoint = &v1beta1.SavepointTrigger{TriggerID: newID(), Time: metav1.NewTime(rc.Now)}
		return waitStep(persistThenContinue())
	}
	status, err := rc.Flink().GetSavepointStatus(rc, ref.URL, ref.ID, rec.Savepoint.TriggerID)
	if client.IsNotFound(err) {
		if step, found := savepointInHistory(rc, rec, ref); found {
			return step
		}
		if !mayTrigger || rc.Overdue {
			rec.Savepoint = nil
			return savepointStep{Failure: "Flink no longer knows the savepoint that was asked for, and lists none taken since"}
		}
		return triggerSavepoint(rc, rec, ref, cancelJob)
	}
	if err != nil {
		return waitStep(failed(err))
	}
	switch {
	case status.Succeeded():
		rc.event(false, "SavepointCompleted", fmt.Sprintf("savepoint of job %s completed at %s", ref.ID, status.Location))
		return savepointStep{Location: status.Location}
	case status.Failed():
		rec.Savepoint = nil
		cause := client.Excerpt(status.FailureCause)
		if cause == "" {
			cause = "Flink reported no cause"
		}
		return savepointStep{Failure: fmt.Sprintf("savepoint of job %s failed: %s", ref.ID, cause)}
	}
	return waitStep(stay(0))
}

// triggerSavepoint sends the recorded trigger. Flink before 1.15 ignores the trigger id it is sent
// and answers with one of its own: that one is recorded in its place. Between the trigger and that
// record a restart finds the savepoint by its trigger time in the job's checkpoint history, once
// Flink lists it there; only a restart before that may trigger a second savepoint.
func triggerSavepoint(rc *Context, rec *v1beta1.DeploymentRecord, ref JobRef, cancelJob bool) savepointStep {
	id, err := rc.Flink().TriggerSavepoint(rc, ref.URL, ref.ID, client.SavepointRequest{
		CancelJob: cancelJob, TriggerID: rec.Savepoint.TriggerID,
	})
	if err != nil {
		return waitStep(failed(err))
	}
	if id != "" && id != rec.Savepoint.TriggerID {
		rec.Savepoint.TriggerID = id
	}
	verb := "savepoint"
	if cancelJob {
		verb = "savepoint and cancel"
	}
	rc.event(false, "SavepointTriggered", fmt.Sprintf("triggered %s of job %s (trigger %s)", verb, ref.ID, rec.Savepoint.TriggerID))
	return waitStep(stay(0))
}

// savepointInHistory looks for the savepoint of the record's trigger in the job's checkpoint
// statistics: the newest savepoint triggered since the recorded trigger time.
func savepointInHistory(rc *Context, rec *v1beta1.DeploymentRecord, ref JobRef) (savepointStep, bool) {
	cp := savepointSince(rc, ref, rec.Savepoint)
	if cp == nil {
		return savepointStep{}, false
	}
	switch cp.Status {
	case "COMPLETED":
		rc.event(false, "SavepointCompleted", fmt.Sprintf("savepoint of job %s completed at %s (found in its checkpoint history)", ref.ID, cp.ExternalPath))
		return savepointStep{Location: cp.ExternalPath}, true
	case "FAILED":
		rec.Savepoint = nil
		return savepointStep{Failure: fmt.Sprintf("savepoint %d of job %s failed", cp.ID, ref.ID)}, true
	}
	return waitStep(stay(0)), true
}

// savepointSince is the newest savepoint Flink lists for the job as triggered at or after since,
// completed or not; nil when there is none or Flink cannot say. No allowance is made for a
// JobManager clock behind the operator's: missing a savepoint only costs another, while taking an
// older one for it would restore older state.
func savepointSince(rc *Context, ref JobRef, trigger *v1beta1.SavepointTrigger) *client.Checkpoint {
	if trigger == nil {
		return nil
	}
	cps, err := rc.checkpointsOf(ref)
	if err != nil {
		return nil
	}
	from := trigger.Time.UnixMilli()
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
	return best
}

// stopJob cancels a job that is alive and reports how it stands: Stopped once Flink says so or the
// evidence of judgeLiveness holds; Unknown (with the cause) while nothing says. Cancelling twice is
// harmless: Flink answers a cancel of a cancelling job with 202.
func stopJob(rc *Context, v *JobView) (Liveness, error) {
	switch v.Liveness {
	case Stopped:
		return Stopped, nil
	case Unknown:
		return Unknown, retryable("ObserveJob", fmt.Errorf("%s", v.Evidence))
	}
	if v.State() != client.JobCancelling {
		err := rc.Flink().CancelJob(rc, v.Ref.URL, v.Ref.ID)
		rc.forget()
		switch {
		case client.IsJobNotFound(err, v.Ref.ID):
			return Stopped, nil
		case client.IsConflict(err):
			// It reached another terminal state on its own; the next look says which.
			return Alive, nil
		case err != nil:
			return Unknown, err
		}
		rc.event(false, "CancellingJob", fmt.Sprintf("cancelling job %s", v.Ref.ID))
	}
	return Alive, nil
}
