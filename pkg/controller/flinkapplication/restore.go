package flinkapplication

import (
	"fmt"
	"slices"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// chooseRestore is the one restore policy, used by every path that starts a job again after its
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
// chosen here, and asks chooseRestoreInPlace.
func chooseRestore(rc *Context, jobID string, ref *jobs.Ref) jobs.RestoreChoice {
	return choose(rc, jobID, ref, rc.jobState().RedeployPending())
}

// chooseRestoreInPlace is chooseRestore for a job started again under the stable spec
// (restartInPlace). A savepointRedeployNonce still to be used names the state the update after it
// starts from, not this job's (explorer seed 90042: the JobManager Deployment was deleted as the
// user asked for a redeploy, and the restart in place went back to a checkpoint older than a
// savepoint in doubt): it stands in for no savepoint in doubt.
func chooseRestoreInPlace(rc *Context, jobID string, ref *jobs.Ref) jobs.RestoreChoice {
	return choose(rc, jobID, ref, false)
}

// choose is the restore policy; named tells whether the job about to start starts from a state the
// user named, which settles any doubt.
func choose(rc *Context, jobID string, ref *jobs.Ref, named bool) jobs.RestoreChoice {
	if rc.Settings.UpgradeMode == v1beta1.UpgradeModeStateless {
		return jobs.RestoreChoice{}
	}
	job := rc.jobState().Recorded(jobID)
	points := job.Points()
	answered, discarded := false, false
	if ref != nil {
		flinks, err := rc.pass().AskFlinkState(*ref, job.InDoubt...)
		if err != nil && !client.IsNotFound(err) {
			// Not found is Flink's word that it holds nothing more of the job.
			return jobs.RestoreChoice{Unanswered: jobs.Retryable("ReadCheckpoints", err)}
		}
		answered, discarded = err == nil, flinks.CheckpointsDiscarded
		points = append(jobstate.TakenAsFlinkSays(points, flinks.TakenAt), flinks.Points...)
		rc.jobState().RecordFlinksCheckpoint(jobID, flinks.Points)
		restored, problem := rc.jobState().RestoredAtFailover(jobID, flinks.Restored, points)
		if problem != "" {
			return jobs.RestoreChoice{Problem: problem}
		}
		if restored != nil {
			points = append(points, *restored)
		}
	}
	if doubt := job.Doubt(answered); doubt != "" && !named {
		return jobs.RestoreChoice{Problem: doubt, InDoubt: true}
	}
	switch {
	case discarded:
		// Flink discarded the job's newest checkpoint: the older ones it recorded went before.
		points = jobstate.WithoutCheckpointsOf(jobID, points)
	case !answered:
		// Flink's statistics, when they answer, say whether the checkpoints are discarded.
		points = withoutDiscardedCheckpoints(rc, jobID, points)
	}
	if problem := startBorrowedBeside(rc, jobID, points); problem != "" && !named {
		// A state the user named for the job about to start settles it, as it settles a doubt;
		// fallbackWithoutState says what to do without a state known to be there.
		if rc.Settings.FallbackWithoutState {
			return jobs.RestoreChoice{WithoutState: true}
		}
		return jobs.RestoreChoice{Problem: problem}
	}
	if newest := jobs.Newest(points); newest != nil && rc.ledger().IsGone(newest.Path) {
		// Nothing older stands in for the newest state Flink could not find: the job may have
		// completed newer state than it, which only Flink's storage holds.
		if rc.Settings.FallbackWithoutState {
			return jobs.RestoreChoice{WithoutState: true}
		}
		return jobs.RestoreChoice{Problem: jobstate.GoneState(newest.Path)}
	}
	return jobs.ChooseRestore(points, rc.Now, jobs.RestorePolicy{MaxAge: maxCheckpointAge(rc), WithoutState: rc.Settings.FallbackWithoutState})
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
func startBorrowedBeside(rc *Context, jobID string, points []jobs.StatePoint) string {
	if rc.App == nil || !blueGreen(rc.App) || slices.ContainsFunc(points, func(p jobs.StatePoint) bool { return jobstate.IsCheckpointOf(jobID, p.Path) }) {
		return ""
	}
	newest := jobs.Newest(points)
	if newest == nil || !rc.jobState().IsStartOf(jobID, newest.Path) {
		return ""
	}
	other := otherVersionsJob(rc, jobID)
	if other == "" || !jobstate.IsCheckpointOf(other, newest.Path) {
		return ""
	}
	return fmt.Sprintf("job %s has no checkpoint of its own left, and the state it started from, %s, is a checkpoint of job %s of "+
		"the other version, which ran on beside it and may have subsumed it since", jobID, newest.Path, other)
}

// otherVersionsJob is the job of the BlueGreen version beside the one whose job is jobID: the job
// of a record on another cluster, or else that of the version torn down last; "" when there is none.
func otherVersionsJob(rc *Context, jobID string) string {
	own := jobstate.ClusterOfJob(rc.Job, jobID)
	for _, r := range []*v1beta1.DeploymentRecord{stable(rc.Job), candidate(rc.Job)} {
		if r != nil && r.JobID != "" && r.JobID != jobID && own != "" && r.ClusterHash != own {
			return r.JobID
		}
	}
	if t := rc.App.Status.LastTeardown; t != nil && t.JobID != jobID {
		return t.JobID
	}
	return ""
}

// restoreByHand says how the user names the state a job starts from when the restore policy
// cannot choose it: with a new savepointRedeployNonce, from the state its path names.
func restoreByHand(rc *Context) string {
	path := "spec.savepointPath"
	if rc.kind.name == sessionJobKindName {
		path = "spec.job.initialSavepointPath"
	}
	return fmt.Sprintf("name the state to start from by hand (%s, with a new %s)", path, rc.Settings.Field("savepointRedeployNonce"))
}

// useRestore records the policy's choice as the state the next job starts from.
func useRestore(rc *Context, choice jobs.RestoreChoice) {
	rc.Job.Deployments.NextRestorePath = choice.Path
	if choice.WithoutState {
		warnWithoutState(rc)
	}
}

// warnWithoutState says, as a Warning Event, that a job starts without state because no usable
// state exists and the user set fallbackWithoutState.
func warnWithoutState(rc *Context) {
	rc.event(true, "RestoringWithoutState", "no usable savepoint or checkpoint; the job starts without state because fallbackWithoutState is set")
}

// lastStateProblem says why the job's newest retained checkpoint cannot carry its state across a
// cancel, or "" when it can. It is asked before the cancel, while the job runs: a savepoint can
// still be taken instead. Once the job is cancelling, its newest checkpoint is used.
func lastStateProblem(rc *Context, ref jobs.Ref) string {
	return rc.pass().CheckpointProblem(ref, maxCheckpointAge(rc), flink.ConfigRetainsCheckpointsOnCancel(runConfigOfJob(rc, ref.ID)),
		fmt.Sprintf("%s is not %s", flink.CheckpointRetentionKey, flink.RetainOnCancellation))
}

func maxCheckpointAge(rc *Context) time.Duration {
	if s := rc.Settings.MaxCheckpointRestoreAgeSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return rc.Config.DefaultMaxCheckpointRestoreAge.Duration
}

// withoutDiscardedCheckpoints leaves out the job's checkpoints when Flink ended the job in a state
// its retention policy discards them at (a cancel under DELETE_ON_CANCELLATION, any end under
// NO_EXTERNALIZED_CHECKPOINTS): what the operator recorded of them is gone with them, and only
// savepoints are left (explorer seed 11000014: a job cancelled under NO_EXTERNALIZED_CHECKPOINTS
// was resumed from its recorded checkpoint, which Flink had discarded). Flink names a job's
// checkpoints <checkpoint dir>/<job id>/chk-<n>.
func withoutDiscardedCheckpoints(rc *Context, jobID string, points []jobs.StatePoint) []jobs.StatePoint {
	cluster := jobstate.ClusterOfJob(rc.Job, jobID)
	if cluster == "" {
		return points
	}
	if v := rc.pass().Seen(cluster, jobID); v == nil || !discardedAtItsEnd(rc, v) {
		return points
	}
	return jobstate.WithoutCheckpointsOf(jobID, points)
}
