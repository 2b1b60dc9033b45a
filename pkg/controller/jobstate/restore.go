package jobstate

import (
	"fmt"
	"slices"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// Restore is what the restore policy reads in one pass: the owner's records, Flink through the job
// core, and what only the owner's kind can say.
type Restore struct {
	Job   Job
	Flink *jobs.Pass
	Now   time.Time
	// MaxAge is the oldest a checkpoint may be to restore from (maxCheckpointRestoreAgeSeconds).
	MaxAge time.Duration
	// DiscardsAt tells whether the job's checkpoints are discarded as it ends in this state (or
	// the end it is on its way to), by the configuration the job runs with.
	DiscardsAt func(jobID, state string) bool
	// OtherVersion is the job of the version that ran beside the one whose job is jobID (BlueGreen);
	// nil for an owner that runs no versions side by side.
	OtherVersion func(jobID string) string
}

// Choose is the one restore policy, used by every path that starts a job again after its
// predecessor stopped: recovery after a failed savepoint, a LastState stop, JobManager recovery, a
// lost or failed job, a rollback. It takes the newest completed state of the job that last ran
// (jobID): what the ledger recorded of it (savepoints of every purpose, its checkpoints), the state
// it started from, and what Flink reports for it when ref is set (its newest retained checkpoint, the
// savepoints it lists completed since one whose end the operator does not know was asked for, and
// when it took each state it lists, to the millisecond, which orders a savepoint and a checkpoint
// taken within one second where status keeps seconds). That state must be younger than
// maxCheckpointRestoreAgeSeconds. Without such state the job starts without state only when the
// user set fallbackWithoutState: never silently, never from older state than the newest known.
// upgradeMode Stateless starts without state, as the user said. ref is nil when Flink cannot be
// asked (its JobManager is gone or no longer knows the job). When ref is set and Flink does not
// tell the job's checkpoints, nothing is chosen (RestoreChoice.Unanswered, a retryable error): the
// recorded checkpoint may be one Flink has subsumed since, while the job ran on unrecorded.
//
// A savepoint asked of the job whose end the operator never learned (guardian.Job.InDoubt) may be
// newer than all it recorded: unless Flink lists the job's savepoints, nothing is chosen
// (RestoreChoice.InDoubt) and the user names the state to start from, which a savepointRedeployNonce
// still to be used already does, when the job about to start is the one it names the state of: the
// new spec's (an update's, a resume's). A restart in place runs the stable spec again, from the state
// chosen here, and asks with named false.
//
// named tells whether the job about to start starts from a state the user named, which settles any
// doubt.
func (r Restore) Choose(jobID string, ref *jobs.Ref, named bool) jobs.RestoreChoice {
	s := r.Job.Settings
	if s.UpgradeMode == v1beta1.UpgradeModeStateless {
		return jobs.RestoreChoice{}
	}
	job := r.Job.Recorded(jobID)
	points := job.Points()
	answered, covered, discarded := false, false, false
	if ref != nil {
		flinks, err := r.Flink.AskFlinkState(*ref, job.InDoubt...)
		if err != nil && !client.IsNotFound(err) {
			// Not found is Flink's word that it holds nothing more of the job.
			return jobs.RestoreChoice{Unanswered: jobs.Retryable("ReadCheckpoints", err)}
		}
		answered, discarded = err == nil, flinks.Discarded != nil
		covered = answered && flinks.Covers(job.InDoubt)
		if d := flinks.Discarded; d != nil && jobs.Restorable(d.Path) && r.endedInThisPass(jobID) {
			// Said once, while Flink knows the job: kept for a restore after it forgot it. Only of
			// a job Flink shows ended: a running job's statistics may show a newest checkpoint
			// discarded as a newer one subsumed it.
			r.Job.Ledger().RecordDiscarded(jobID, ClusterOfJob(r.Job.Status, jobID), d.Path, TakenByFlink(r.Now, d.At.UnixMilli()), r.Now)
		}
		points = append(TakenAsFlinkSays(points, flinks.TakenAt), flinks.Points...)
		r.Job.RecordFlinksCheckpoint(jobID, flinks.Points)
		restored, problem := r.Job.RestoredAtFailover(jobID, flinks.Restored, points)
		if problem != "" {
			return jobs.RestoreChoice{Problem: problem}
		}
		if restored != nil {
			points = append(points, *restored)
		}
	}
	if doubt := job.Doubt(covered); doubt != "" && !named {
		return jobs.RestoreChoice{Problem: doubt, InDoubt: true}
	}
	switch {
	case discarded:
		// Flink discarded the job's newest checkpoint: the older ones it recorded went before.
		points = WithoutCheckpointsOf(jobID, points)
	case !answered:
		// Flink's statistics, when they answer, say whether the checkpoints are discarded.
		points = r.withoutDiscardedCheckpoints(jobID, points)
	}
	if problem := r.disputedDiscard(jobID, points); problem != "" && !named {
		return jobs.RestoreChoice{Problem: problem, InDoubt: true}
	}
	if problem := r.startBorrowedBeside(jobID, points); problem != "" && !named {
		// A state the user named for the job about to start settles it, as it settles a doubt;
		// fallbackWithoutState says what to do without a state known to be there.
		if s.FallbackWithoutState {
			return jobs.RestoreChoice{WithoutState: true}
		}
		return jobs.RestoreChoice{Problem: problem}
	}
	if newest := jobs.Newest(points); newest != nil && r.Job.Ledger().IsGone(newest.Path) {
		// Nothing older stands in for the newest state Flink could not find: the job may have
		// completed newer state than it, which only Flink's storage holds.
		if s.FallbackWithoutState {
			return jobs.RestoreChoice{WithoutState: true}
		}
		return jobs.RestoreChoice{Problem: GoneState(newest.Path)}
	}
	return jobs.ChooseRestore(points, r.Now, jobs.RestorePolicy{MaxAge: r.MaxAge, WithoutState: s.FallbackWithoutState})
}

// disputedDiscard says why nothing is chosen when Flink disputed its own word that the job's
// checkpoints were discarded (ledger.Disputed) and no state newer than the one in dispute is left
// to choose: the job's checkpoint may be gone, or everything older than it a rewind. "" otherwise.
func (r Restore) disputedDiscard(jobID string, points []jobs.StatePoint) string {
	e := r.Job.Ledger().Disputed(jobID)
	if e == nil {
		return ""
	}
	if newest := jobs.Newest(points); newest != nil && newest.At.After(ledger.TakenAt(e)) {
		return ""
	}
	return fmt.Sprintf("Flink said the checkpoints of job %s up to %s were discarded as the job ended, and later that the job runs "+
		"with %s there; only its storage can say which is true", jobID, e.Path, e.Path)
}

// startBorrowedBeside says why a BlueGreen version's job that has no checkpoint of its own left
// (it never took one, or Flink discarded them as it ended under a retention that keeps none) does
// not go back to the state it started from when that is a checkpoint of the other version's job,
// which ran on beside it (still recorded on another cluster, or torn down since: lastTeardown) and
// subsumes its checkpoints as it takes newer ones (explorer seed 23000498: the new version started
// from the deployed job's checkpoint after a failed savepoint, was promoted, and FAILED with its
// checkpoints discarded; the job torn down had long since subsumed that checkpoint, and every
// update after sent a job from it, which Flink refused). Whether it is still there only storage can
// say: the user names the state to start from. A job started again on its own cluster from the
// checkpoint of the job before it there (a restart, a recovery) is not one: that job had ended, and
// nothing subsumes its checkpoints. "" otherwise.
func (r Restore) startBorrowedBeside(jobID string, points []jobs.StatePoint) string {
	if r.OtherVersion == nil || slices.ContainsFunc(points, func(p jobs.StatePoint) bool { return IsCheckpointOf(jobID, p.Path) }) {
		return ""
	}
	newest := jobs.Newest(points)
	if newest == nil || !r.Job.IsStartOf(jobID, newest.Path) {
		return ""
	}
	other := r.OtherVersion(jobID)
	if other == "" || !IsCheckpointOf(other, newest.Path) {
		return ""
	}
	return fmt.Sprintf("job %s has no checkpoint of its own left, and the state it started from, %s, is a checkpoint of job %s of "+
		"the other version, which ran on beside it and may have subsumed it since", jobID, newest.Path, other)
}

// withoutDiscardedCheckpoints leaves out the job's checkpoints when Flink ended the job in a state
// its retention policy discards them at (a cancel under DELETE_ON_CANCELLATION, any end under
// NO_EXTERNALIZED_CHECKPOINTS): what the operator recorded of them is gone with them, and only
// savepoints are left (explorer seed 11000014: a job cancelled under NO_EXTERNALIZED_CHECKPOINTS
// was resumed from its recorded checkpoint, which Flink had discarded). Flink names a job's
// checkpoints <checkpoint dir>/<job id>/chk-<n>.
func (r Restore) withoutDiscardedCheckpoints(jobID string, points []jobs.StatePoint) []jobs.StatePoint {
	if r.DiscardsAt == nil || !r.endedDiscarding(jobID) {
		return points
	}
	return WithoutCheckpointsOf(jobID, points)
}

// endedDiscarding tells whether the job ended, or is on its way to an end, at which its
// checkpoints are discarded, as Flink shows it in this pass. status's job state is not read: it
// shows whichever job status shows, not this one alone (explorer seed 38000557: a job was taken
// for ended by another's end). What Flink said of an earlier end is the ledger's record of the
// discard (ledger.RecordDiscarded), which leaves the checkpoints out of the job's recorded states.
func (r Restore) endedDiscarding(jobID string) bool {
	if cluster := ClusterOfJob(r.Job.Status, jobID); cluster != "" && r.Flink != nil {
		if v := r.Flink.Seen(cluster, jobID); v != nil && v.Details != nil {
			return Ending(v.Details.State) && r.DiscardsAt(jobID, v.Details.State)
		}
	}
	return false
}

// endedInThisPass tells whether Flink's details of the job, read in this pass, say it ended for good.
func (r Restore) endedInThisPass(jobID string) bool {
	if cluster := ClusterOfJob(r.Job.Status, jobID); cluster != "" && r.Flink != nil {
		if v := r.Flink.Seen(cluster, jobID); v != nil && v.Details != nil {
			return client.IsGloballyTerminal(v.Details.State)
		}
	}
	return false
}

// Ending tells whether a job's state is an end or on its way to one.
func Ending(state string) bool {
	return client.IsGloballyTerminal(state) || state == client.JobFailing || state == client.JobCancelling
}
