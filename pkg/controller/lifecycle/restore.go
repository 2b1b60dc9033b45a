package lifecycle

import (
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// ChooseRestore is the one restore policy (jobstate.Restore.Choose), used by every path that starts
// a job again after its predecessor stopped: recovery after a failed savepoint, a LastState stop,
// JobManager recovery, a lost or failed job, a rollback. A savepointRedeployNonce still to be used
// names the state of the job about to start, and settles a doubt.
func (p *Pass) ChooseRestore(jobID string, ref *jobs.Ref) jobs.RestoreChoice {
	return p.RestorePolicy().Choose(jobID, ref, p.JobState().RedeployPending())
}

// ChooseRestoreInPlace is ChooseRestore for a job started again under the stable spec (a restart in
// place). A savepointRedeployNonce still to be used names the state the update after it starts
// from, not this job's (explorer seed 90042: the JobManager Deployment was deleted as the user asked
// for a redeploy, and the restart in place went back to a checkpoint older than a savepoint in
// doubt): it stands in for no savepoint in doubt.
func (p *Pass) ChooseRestoreInPlace(jobID string, ref *jobs.Ref) jobs.RestoreChoice {
	return p.RestorePolicy().Choose(jobID, ref, false)
}

// RestorePolicy is the restore policy as this pass reads it.
func (p *Pass) RestorePolicy() jobstate.Restore {
	r := jobstate.Restore{Job: p.JobState(), Flink: p.Flink(), Now: p.Now, MaxAge: p.MaxCheckpointAge(), DiscardsAt: p.DiscardsAt}
	if _, ok := p.Kind.OtherVersion(""); ok {
		r.OtherVersion = func(jobID string) string {
			job, _ := p.Kind.OtherVersion(jobID)
			return job
		}
	}
	return r
}

// DiscardsAt tells whether a job of the pass's object has its checkpoints discarded as it ends in
// a state, by the configuration it was started with.
func (p *Pass) DiscardsAt(jobID, state string) bool {
	return !flink.CheckpointsSurviveEnd(p.Kind.RunConfig(jobID), state)
}

// UseRestore records the policy's choice as the state the next job starts from.
func (p *Pass) UseRestore(choice jobs.RestoreChoice) {
	p.Job.Deployments.NextRestorePath = choice.Path
	if choice.WithoutState {
		p.WarnWithoutState()
	}
}

// WarnWithoutState says, as a Warning Event, that a job starts without state because no usable
// state exists and the user set fallbackWithoutState.
func (p *Pass) WarnWithoutState() {
	p.Event(true, "RestoringWithoutState", "no usable savepoint or checkpoint; the job starts without state because fallbackWithoutState is set")
}

// LastStateProblem says why the job's newest retained checkpoint cannot carry its state across a
// cancel, or "" when it can. It is asked before the cancel, while the job runs: a savepoint can
// still be taken instead. Once the job is cancelling, its newest checkpoint is used.
func (p *Pass) LastStateProblem(ref jobs.Ref) string {
	return p.Flink().CheckpointProblem(ref, p.MaxCheckpointAge(), flink.ConfigRetainsCheckpointsOnCancel(p.Kind.RunConfig(ref.ID)),
		fmt.Sprintf("%s is not %s", flink.CheckpointRetentionKey, flink.RetainOnCancellation))
}

// MaxCheckpointAge is the oldest a checkpoint may be to restore from: the job's
// maxCheckpointRestoreAgeSeconds, or the operator's default.
func (p *Pass) MaxCheckpointAge() time.Duration {
	if s := p.Settings.MaxCheckpointRestoreAgeSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return p.Config.DefaultMaxCheckpointRestoreAge.Duration
}

// DescribeState names the state a job starts from, for a message.
func DescribeState(path string) string {
	if path == "" {
		return "no state"
	}
	return "state " + path
}
