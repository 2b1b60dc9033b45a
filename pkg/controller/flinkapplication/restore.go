package flinkapplication

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
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
	return choose(rc, jobID, ref, redeployPending(rc))
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
	job := recordedJob(rc, jobID)
	points := job.Points()
	answered, discarded := false, false
	if ref != nil {
		flinks, err := rc.pass().AskFlinkState(*ref, job.InDoubt...)
		if err != nil && !client.IsNotFound(err) {
			// Not found is Flink's word that it holds nothing more of the job.
			return jobs.RestoreChoice{Unanswered: jobs.Retryable("ReadCheckpoints", err)}
		}
		answered, discarded = err == nil, flinks.CheckpointsDiscarded
		points = append(takenAsFlinkSays(points, flinks.TakenAt), flinks.Points...)
		recordFlinksCheckpoint(rc, jobID, flinks.Points)
		restored, problem := restoredAtFailover(rc, jobID, flinks.Restored, points)
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
		points = withoutCheckpointsOf(jobID, points)
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
		return jobs.RestoreChoice{Problem: goneState(newest.Path)}
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
	if rc.App == nil || !blueGreen(rc.App) || slices.ContainsFunc(points, func(p jobs.StatePoint) bool { return isCheckpointOf(jobID, p.Path) }) {
		return ""
	}
	newest := jobs.Newest(points)
	if newest == nil || !isStartOf(rc, jobID, newest.Path) {
		return ""
	}
	other := otherVersionsJob(rc, jobID)
	if other == "" || !isCheckpointOf(other, newest.Path) {
		return ""
	}
	return fmt.Sprintf("job %s has no checkpoint of its own left, and the state it started from, %s, is a checkpoint of job %s of "+
		"the other version, which ran on beside it and may have subsumed it since", jobID, newest.Path, other)
}

// otherVersionsJob is the job of the BlueGreen version beside the one whose job is jobID: the job
// of a record on another cluster, or else that of the version torn down last; "" when there is none.
func otherVersionsJob(rc *Context, jobID string) string {
	own := clusterOfJob(rc.Job, jobID)
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

// goneState says that the newest state recorded of a job is gone from storage; the caller says how
// the user names another.
func goneState(path string) string {
	return fmt.Sprintf("the newest recorded state %s is gone from storage (Flink could not find it when a job was started from it, "+
		"or discarded it as the job that took it ended), "+
		"and the job may have completed newer state the operator cannot list", path)
}

// samePath tells whether two state paths name one place, as Flink writes them back: with or
// without the _metadata file, a trailing slash, or file:// and its authority-less form.
func samePath(a, b string) bool {
	norm := func(p string) string {
		p = strings.TrimSuffix(strings.TrimSuffix(p, "/_metadata"), "/")
		return strings.Replace(p, "file:///", "file:/", 1)
	}
	return a != "" && norm(a) == norm(b)
}

// restoredAtFailover is the checkpoint the job restored at its last failover when it completed none
// since (jobs.FlinkAnswer.Restored), newer than any it completed before, which the operator may not
// have recorded (explorer seed 11000153: the recorded checkpoint was subsumed, the job restored a
// newer one after its JobManager failed over and FAILED before the next, and the suspend kept the
// recorded one, which was gone). Flink does not say when it was taken: a savepoint of the job that
// the ledger dates between the job's newest recorded checkpoint and that restore may be newer or
// older, and then nothing is chosen (the problem says why).
func restoredAtFailover(rc *Context, jobID string, restored *jobs.StatePoint, points []jobs.StatePoint) (*jobs.StatePoint, string) {
	if restored == nil || !isCheckpointOf(jobID, restored.Path) || slices.ContainsFunc(points, func(p jobs.StatePoint) bool { return p.Path == restored.Path }) {
		return nil, ""
	}
	var since time.Time
	for _, p := range points {
		if isCheckpointOf(jobID, p.Path) && p.At.After(since) {
			since = p.At
		}
	}
	for _, p := range points {
		if !isCheckpointOf(jobID, p.Path) && p.At.After(since) && p.At.Before(restored.At) && !isStartOf(rc, jobID, p.Path) {
			return nil, fmt.Sprintf("job %s restored checkpoint %s at a failover, and whether savepoint %s, taken before that, is newer "+
				"Flink does not say", jobID, restored.Path, p.Path)
		}
	}
	return restored, ""
}

// isStartOf tells whether path is the state the job started from: older than all it completed.
func isStartOf(rc *Context, jobID, path string) bool {
	s := startedFrom(rc, jobID)
	return s != nil && s.Path == path
}

// recordFlinksCheckpoint writes the job's newest checkpoint, as Flink just listed it, to the
// ledger. The restore chosen now may be overtaken (the new job fails, the user changes the spec
// again) and a later restore after the same job, a rollback's, then reads only what was recorded:
// without it, that one went back to an older checkpoint than this one had started from.
func recordFlinksCheckpoint(rc *Context, jobID string, points []jobs.StatePoint) {
	cluster := clusterOfJob(rc.Job, jobID)
	if cluster == "" {
		return
	}
	l := rc.ledger()
	for _, p := range points {
		if !l.IsSavepoint(p.Path) {
			l.Record(v1beta1.StateCheckpoint, jobID, cluster, p.Path, p.At)
		}
	}
}

// clusterOfJob is the cluster a job of the owner's records ran on; "" when no record names it.
func clusterOfJob(st *v1beta1.JobOwnerStatus, jobID string) string {
	for _, r := range []*v1beta1.DeploymentRecord{stable(st), candidate(st)} {
		if r != nil && r.JobID == jobID && jobID != "" {
			return r.ClusterHash
		}
	}
	for _, e := range st.Ledger {
		if e.JobID == jobID && jobID != "" && e.ClusterHash != "" {
			return e.ClusterHash
		}
	}
	return ""
}

// takenAsFlinkSays gives the points Flink lists the time Flink took them, to the millisecond.
func takenAsFlinkSays(points []jobs.StatePoint, takenAt map[string]time.Time) []jobs.StatePoint {
	for i := range points {
		if at, ok := takenAt[points[i].Path]; ok {
			points[i].At = at
		}
	}
	return points
}

// redeployPending tells whether a savepointRedeployNonce is still to be used: the next job starts
// from the state the user named, whatever the restore policy chooses.
func redeployPending(rc *Context) bool {
	s := rc.Settings
	return s.RedeployNonce != "" && s.RedeployNonce != rc.Job.SavepointRedeployNonce && (s.RedeployFrom != "" || s.RestoreWaiting != "")
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

// recordedState is the state the operator recorded of a job: its completed entries in the ledger,
// its newest checkpoint in the checkpoint book, and the state it started from as a record of that
// very job says (guardian.Job): a job replacing it restores nothing older.
func recordedState(rc *Context, jobID string) []jobs.StatePoint {
	return recordedJob(rc, jobID).Points()
}

// recordedJob is what the operator recorded of a job, for the restore rule.
func recordedJob(rc *Context, jobID string) guardian.Job {
	return guardian.Job{ID: jobID, Completed: append(rc.ledger().States(jobID), bookPoints(rc, jobID)...), StartedFrom: startedFrom(rc, jobID),
		InDoubt: rc.ledger().InDoubt(jobID)}
}

// startedFrom is the state a job started from, read only from a record of that very job: the
// stable record's (which jobStatus shows, with Flink's restore time), or the candidate's, which was
// submitted from the next restore path and has not replaced it yet. jobStatus alone is no record of
// a job: until a new job runs stable it still shows what the job before started from, which is
// older than that job's stop.
func startedFrom(rc *Context, jobID string) *jobs.StatePoint {
	st := rc.Job
	js := &st.JobStatus
	for _, r := range []*v1beta1.DeploymentRecord{stable(st), candidate(st)} {
		if r == nil || r.JobID != jobID || jobID == "" {
			continue
		}
		path := r.RestorePath
		if path == "" && r == candidate(st) {
			path = st.Deployments.NextRestorePath
		}
		if path == "" && r == stable(st) && js.JobID == jobID {
			// Flink's word for a job that restored on its own (a JobManager's recovery).
			path = js.RestorePath
		}
		at := recordedTimeOf(rc, r.JobID, path)
		if at.IsZero() && js.RestoreTime != nil && js.RestorePath == path && r == stable(st) {
			at = js.RestoreTime.Time
		}
		if at.IsZero() && r.SubmittedAt != nil {
			at = r.SubmittedAt.Time
		}
		return guardian.StartState(r.JobID, jobID, path, beforeOwnStates(rc, jobID, at))
	}
	return nil
}

// beforeOwnStates is at, or just before the oldest state the job completed itself when at is not
// before it: what a job started from is older than anything it completed. A time the operator did
// not record of the state is stood in for by the job's start or Flink's time of its restore, both
// of which move when a JobManager fails over and recovers the job (attack review s9: after an HA
// failover the state a new BlueGreen version started from was dated after the version's own
// checkpoint, and its restart chose it over that checkpoint).
func beforeOwnStates(rc *Context, jobID string, at time.Time) time.Time {
	if at.IsZero() {
		return at
	}
	for _, p := range append(rc.ledger().States(jobID), bookPoints(rc, jobID)...) {
		if !at.Before(p.At) {
			at = p.At.Add(-time.Millisecond)
		}
	}
	return at
}

// recordedTimeOf is when the state at path was taken, as the operator recorded it: the ledger's time
// of it, or the checkpoint book's for the job's checkpoint noted there; zero when neither records it.
// Only then is a job's start, or Flink's time of its restore, the time of what it started from: both
// come later than the state was taken (explorer seed 1090055: a job that restored its newest
// checkpoint on its own, after a savepoint, had that checkpoint dated by the restore, newer than the
// savepoint, and a restart after its JobManager was lost went back behind the savepoint).
func recordedTimeOf(rc *Context, jobID, path string) time.Time {
	if at := rc.ledger().TimeOf(path); !at.IsZero() {
		return at
	}
	if e, ok := bookEntry(rc, jobID); ok && e.Path == path {
		return e.At
	}
	return time.Time{}
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
	cluster := clusterOfJob(rc.Job, jobID)
	if cluster == "" {
		return points
	}
	if v := rc.pass().Seen(cluster, jobID); v == nil || !discardedAtItsEnd(rc, v) {
		return points
	}
	return withoutCheckpointsOf(jobID, points)
}

// withoutCheckpointsOf leaves the job's checkpoints out of the points.
func withoutCheckpointsOf(jobID string, points []jobs.StatePoint) []jobs.StatePoint {
	var kept []jobs.StatePoint
	for _, p := range points {
		if !isCheckpointOf(jobID, p.Path) {
			kept = append(kept, p)
		}
	}
	return kept
}

// isCheckpointOf tells whether path is one of the job's checkpoints: Flink names them
// <checkpoint dir>/<job id>/chk-<n>.
func isCheckpointOf(jobID, path string) bool {
	return jobID != "" && strings.Contains(path, "/"+jobID+"/chk-")
}
