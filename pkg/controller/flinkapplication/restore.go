package flinkapplication

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// chooseRestore is the one restore policy (jobstate.Restore.Choose), used by every path that starts
// a job again after its predecessor stopped: recovery after a failed savepoint, a LastState stop,
// JobManager recovery, a lost or failed job, a rollback. A savepointRedeployNonce still to be used
// names the state of the job about to start, and settles a doubt.
func chooseRestore(rc *Context, jobID string, ref *jobs.Ref) jobs.RestoreChoice {
	return rc.restorePolicy().Choose(jobID, ref, rc.jobState().RedeployPending())
}

// chooseRestoreInPlace is chooseRestore for a job started again under the stable spec
// (restartInPlace). A savepointRedeployNonce still to be used names the state the update after it
// starts from, not this job's (explorer seed 90042: the JobManager Deployment was deleted as the
// user asked for a redeploy, and the restart in place went back to a checkpoint older than a
// savepoint in doubt): it stands in for no savepoint in doubt.
func chooseRestoreInPlace(rc *Context, jobID string, ref *jobs.Ref) jobs.RestoreChoice {
	return rc.restorePolicy().Choose(jobID, ref, false)
}

// restorePolicy is the restore policy as this pass reads it.
func (rc *Context) restorePolicy() jobstate.Restore {
	r := jobstate.Restore{Job: rc.jobState(), Flink: rc.pass(), Now: rc.Now, MaxAge: maxCheckpointAge(rc), DiscardsAt: discardsAt(rc)}
	if rc.App != nil && blueGreen(rc.App) {
		r.OtherVersion = func(jobID string) string { return otherVersionsJob(rc, jobID) }
	}
	return r
}

// discardsAt tells whether a job of the pass's object has its checkpoints discarded as it ends in
// a state, by the configuration it was started with.
func discardsAt(rc *Context) func(jobID, state string) bool {
	return func(jobID, state string) bool { return !flink.CheckpointsSurviveEnd(runConfigOfJob(rc, jobID), state) }
}

// otherVersionsJob is the job of the BlueGreen version beside the one whose job is jobID: the job
// of a record on another cluster, or else that of the version torn down last; "" when there is none.
func otherVersionsJob(rc *Context, jobID string) string {
	own := jobstate.ClusterOfJob(rc.Job, jobID)
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(rc.Job), jobstate.Candidate(rc.Job)} {
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
