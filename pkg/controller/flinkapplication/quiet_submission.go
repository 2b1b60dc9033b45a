package flinkapplication

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// A FlinkApplication's move from ClusterStarting into Submitting, and its passes in Submitting
// until the job runs stable, are not written to status on their own: a first deploy costs the API
// server three writes of the object (its finalizer; ClusterStarting with the job id the job will
// run under; Running), not five. Nothing a crash could lose is in them: the job id went out ahead,
// with the move into ClusterStarting, so a pass after a crash finds the job it submitted under that
// id and never submits another, and what those passes see of the job (its state, its tasks, the
// cluster's slots) is seen again by the next pass. Anything else such a pass decides (a submission
// that got no answer and must be waited for, a state the ledger records, a failure, a deadline, a
// move on) is written as usual. Until Running, readers see ClusterStarting, with the job id.
//
// The phase's clock survives the unwritten passes in memory: each pass starts again from the
// stored ClusterStarting, and Submitting's deadline and history keep the time the job was first
// found ready to submit. A restarted operator starts that clock again, as it would for any phase
// whose start it did not see written.

// quietSubmission is what the operator remembers of an application's unwritten Submitting: the
// stored object it started from and when.
type quietSubmission struct {
	resourceVersion string
	since           metav1.Time
	// announced are the reasons of the Events the first unwritten pass emitted; the passes after it
	// repeat the same transition, and say nothing again.
	announced []string
}

// submittingUnwritten tells whether the pass's status may go unwritten: the stored object is in
// ClusterStarting with the job id it submits under, the pass is in Submitting, and everything else
// that differs is what the pass saw.
func submittingUnwritten(rc *Context) bool {
	if rc.App == nil || rc.Stored == nil || rc.Meta.DeletionTimestamp != nil || rc.App.Status.Phase != v1beta1.PhaseSubmitting {
		return false
	}
	stored, ok := rc.Stored.Status().(*v1beta1.FlinkApplicationStatus)
	if !ok || stored.Phase != v1beta1.PhaseClusterStarting || !rc.JobIDStored() {
		return false
	}
	seen := rc.App.Status.DeepCopy()
	seen.Phase, seen.Reason, seen.PhaseStartedAt, seen.LastUpdatedAt = stored.Phase, stored.Reason, stored.PhaseStartedAt, stored.LastUpdatedAt
	seen.Conditions, seen.History, seen.StartedAt = stored.Conditions, stored.History, stored.StartedAt
	seen.ClusterStatus = stored.ClusterStatus
	jobID := seen.JobStatus.JobID
	seen.JobStatus = stored.JobStatus
	seen.JobStatus.JobID = jobID
	patch, err := fsm.StatusPatch(stored, *seen)
	return err == nil && patch == nil
}

// repeatsQuietSubmitting tells whether the pass started from the same stored object as an
// unwritten pass before it, and so repeats its move into Submitting: the Events that pass emitted
// for it are not emitted again, whether or not this pass is written.
func (e *Environment) repeatsQuietSubmitting(rc *Context) bool {
	v, ok := e.quiet.Load(rc.Key())
	if !ok || v.(quietSubmission).resourceVersion != rc.Meta.ResourceVersion {
		return false
	}
	announced := v.(quietSubmission).announced
	rc.Events = slices.DeleteFunc(rc.Events, func(ev fsm.Event) bool { return slices.Contains(announced, ev.Reason) })
	return true
}

// noteUnwrittenSubmitting remembers the first unwritten pass in Submitting from a stored object.
func (e *Environment) noteUnwrittenSubmitting(rc *Context) {
	q := quietSubmission{resourceVersion: rc.Meta.ResourceVersion, since: *rc.Machine.PhaseStartedAt}
	for _, ev := range rc.Events {
		q.announced = append(q.announced, ev.Reason)
	}
	e.quiet.Store(rc.Key(), q)
}

// resumeQuietSubmitting is Submitting's entry: in a pass that starts again from the stored
// ClusterStarting, Submitting keeps the start the first unwritten pass gave it.
func resumeQuietSubmitting(rc *Context) {
	if rc.App == nil {
		return
	}
	v, ok := rc.env.quiet.Load(rc.Key())
	if !ok || v.(quietSubmission).resourceVersion != rc.Meta.ResourceVersion {
		return
	}
	since := v.(quietSubmission).since
	rc.Machine.PhaseStartedAt = &since
	if h := rc.App.Status.History; len(h) > 0 && h[len(h)-1].To == v1beta1.PhaseSubmitting {
		h[len(h)-1].Time = since
	}
}

// writeStatus is the application's one status write, held back while a pass repeats an unwritten
// move into Submitting; quiet when such a pass goes no further and says nothing new.
func writeStatus(rc *Context) (bool, error) {
	e := rc.env
	repeat := e.repeatsQuietSubmitting(rc)
	if quiet := submittingUnwritten(rc); quiet && !repeat {
		e.noteUnwrittenSubmitting(rc)
	} else if !quiet {
		if err := kindpass.Persist(rc.Pass); err != nil {
			return false, err
		}
		e.quiet.Delete(rc.Key())
	}
	e.NoteDeadline(rc.Pass)
	return repeat && rc.Subject.Phase().Normalized() == PhaseSubmitting, nil
}
