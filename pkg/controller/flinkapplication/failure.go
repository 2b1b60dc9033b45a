package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// abandonUpdate ends a deploy that cannot finish. A first deploy has nothing to go back to and ends
// in DeployFailed with the cause, as does a restart of the stable spec itself; an update goes back to
// the last stable spec. A restart the autoscaler asked for answers for itself (scalingRestartFailed).
func abandonUpdate(rc *Context, cause string) Outcome {
	if out, ok := scalingRestartFailed(rc, cause); ok {
		return out
	}
	st := rc.Job
	if jobstate.Stable(st) == nil || !jobstate.Updating(st) {
		return rc.DeployFailed("DeployFailed", cause)
	}
	return warnTo(PhaseRollingBack, "RollingBack", cause)
}

// abandonStop ends a stop of the live job that cannot finish: an update rolls back, a suspend rests
// with the job as it is until the user changes the spec.
func abandonStop(rc *Context, cause string) Outcome {
	if jobstate.Candidate(rc.Job) == nil {
		return rc.Blocked("SuspendBlocked", fmt.Sprintf("suspend failed: %s; change the spec to retry", cause))
	}
	return abandonUpdate(rc, cause)
}

// rollbackFailed gives up on restoring the previous job. The state it would have restored stays in
// status.savepointPath and the message, so an operator can restore it by hand.
func rollbackFailed(rc *Context, cause string) Outcome {
	st := rc.Job
	if c, s := jobstate.Candidate(st), jobstate.Stable(st); c != nil && s != nil && c.Kind == v1beta1.DeploymentRollback && c.JobID != "" && s.JobID == "" {
		// The job the rollback submitted may still come up: it stays the application's job, so that
		// nothing is ever started beside it.
		jobstate.KeepCandidateJob(st)
	}
	if c := jobstate.Candidate(st); c != nil && c.JobID != "" && c.Kind != v1beta1.DeploymentRollback && !stableJobKept(st) {
		// Giving up never discards state Flink completed: what the failed attempt's job completed
		// (as recorded) is newer than the state it started from.
		if p := rc.JobState().NewestStatePath(c.JobID); p != "" {
			st.Deployments.NextRestorePath = p
		}
	}
	msg := fmt.Sprintf("rollback failed: %s", cause)
	if st.Deployments.NextRestorePath != "" {
		msg += fmt.Sprintf("; the previous job's state is at %s", st.Deployments.NextRestorePath)
	}
	return rc.DeployFailed("RollbackFailed", msg)
}

// keepJobGivenUpOn keeps the job of a deployment given up on as the object's job while it may still
// run (lifecycle.Pass.KeepGivenUpJob). An application's deploy on a cluster of its own leaves it
// behind, and no job is started while a leftover cluster's JobManager is left (leftover_clusters.go).
func keepJobGivenUpOn(rc *Context) { rc.KeepGivenUpJob(false) }

// stableJobKept tells whether the stable deployment's job was never stopped for the attempt: a
// BlueGreen version runs beside it. The attempt's state is then no newer state of the stable
// job's, which went on on its own (docs/blue-green.md: the deployed job is never touched), and
// going back restarts it, should it have stopped, from its own newest state (explorer seed 140309:
// a rollback that gave up named the new version's checkpoint as the previous job's state).
func stableJobKept(st *v1beta1.JobOwnerStatus) bool {
	s := jobstate.Stable(st)
	return s != nil && s.JobID != ""
}
