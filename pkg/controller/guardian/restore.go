package guardian

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// The way back never restores older state than the newest completed state of the job it replaces.
// Every path that starts a job again after another (a restart, a rollback, the autoscaler's way
// back, a recovery) builds the replaced job's Job and restores from the newest of its Points. A
// savepoint asked of the job whose end is not known (InDoubt) may be newer than all of them: only
// Flink's word on it, or the user's choice, lets a job replace that one.

// Job is what the operator recorded of one job, for the restore rule.
type Job struct {
	// ID is the job's id.
	ID string
	// Completed are the states the job completed (its savepoints and checkpoints), with when
	// each was taken.
	Completed []jobs.StatePoint
	// StartedFrom is the state the job started from, as a record of this very job says, with when
	// it was taken (or, when that is not known, when the job restored it). nil when the job
	// started without state or no record of it says.
	StartedFrom *jobs.StatePoint
	// InDoubt are the savepoints asked of the job whose end was never learned: in flight, or in
	// flight when Flink lost the job. Each may have completed, newer than any of Points.
	InDoubt []jobs.Trigger
}

// Doubt says why no state of j is known to be its newest: a savepoint asked of it whose end Flink
// was not asked about, or could not say; "" when there is none. answered tells whether Flink has
// just listed the job's completed savepoints, which settles every doubt: those that completed are
// among what it listed.
func (j Job) Doubt(answered bool) string {
	if answered || len(j.InDoubt) == 0 {
		return ""
	}
	t := j.InDoubt[len(j.InDoubt)-1]
	return fmt.Sprintf("the savepoint asked of job %s at %s (trigger %s) may have completed, and Flink no longer knows the job to say",
		j.ID, t.Time.UTC().Format(time.RFC3339), t.ID)
}

// StartState is the state a job started from, when the record it is read from is that job's:
// a record of another job (the one before, whose status has not been replaced yet) says nothing
// about this one, and its state is older than this one's stop.
func StartState(recordJobID, jobID, path string, at time.Time) *jobs.StatePoint {
	if recordJobID != jobID || path == "" || at.IsZero() {
		return nil
	}
	return &jobs.StatePoint{Path: path, At: at}
}

// Points are the states a job that replaces j may start from: what j completed, and the state it
// started from, which holds everything j's predecessors completed before j ran.
func (j Job) Points() []jobs.StatePoint {
	out := append([]jobs.StatePoint(nil), j.Completed...)
	if j.StartedFrom != nil {
		out = append(out, *j.StartedFrom)
	}
	return out
}

// Floor is the newest state known of j: a job that replaces it may start from nothing older.
func (j Job) Floor() *jobs.StatePoint { return jobs.Newest(j.Points()) }
