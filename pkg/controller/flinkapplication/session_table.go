package flinkapplication

import (
	"fmt"
	"maps"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// sessionJobTable is the FlinkSessionJob's phase table: a job's lifecycle without cluster phases.
// Savepointing, Cancelling, Recovering and Deleting are the FlinkApplication's handlers.
var sessionJobTable map[Phase]phaseSpec

// sessionClusterTable is the FlinkSessionCluster's phase table: a cluster's lifecycle without a job.
var sessionClusterTable map[Phase]phaseSpec

func init() {
	stopExits := []exit{
		{PhaseSubmitting, "job stopped; the session cluster is ready"},
		{PhaseUpdating, "job stopped; the spec or the cluster changed meanwhile"},
		{PhaseSuspended, "job stopped for a suspend"},
	}
	sessionJobTable = map[Phase]phaseSpec{
		PhaseNew: {
			handle: handleSessionJobNew,
			exits: []exit{
				{PhaseSubmitting, "the session cluster runs"},
				{PhaseWaitingForCluster, "the session cluster does not run yet"},
				{PhaseSuspended, "created with state Suspended"},
			},
			poll: waitPoll,
		},
		PhaseWaitingForCluster: {
			handle: handleWaitingForCluster,
			exits: []exit{
				{PhaseSubmitting, "the session cluster runs and is ready"},
				{PhaseSuspended, "suspended while waiting"},
			},
			// The cluster's changes wake its jobs (the cluster-to-jobs index); this is only a safety net.
			poll: statusPoll,
		},
		PhaseSubmitting: {
			handle: handleSessionSubmitting,
			exits: []exit{
				{PhaseRunning, "job ran stable"},
				{PhaseWaitingForCluster, "the session cluster went away before the job ran"},
				{PhaseUpdating, "nothing recorded to submit"},
				{PhaseDeployFailed, "jar refused, job refused or failed, or not stable in time"},
			},
			deadline: sessionSubmitDeadline,
			giveUp:   giveUpSessionSubmission,
			poll:     waitPoll,
		},
		PhaseRunning: {
			follows: onDemand,
			handle:  handleSessionJobRunning,
			exits: []exit{
				{PhaseUpdating, "job spec changed, or the session cluster runs a new Flink cluster"},
				{PhaseSavepointing, "suspend (Savepoint)"},
				{PhaseCancelling, "suspend (LastState, Stateless)"},
				{PhaseSuspended, "suspend with no job running"},
				{PhaseSubmitting, "job lost, or FAILED with restartFailedJob: again from its newest state"},
				{PhaseWaitingForCluster, "job lost with its cluster: waits for it with its state recorded"},
				{PhaseDeployFailed, "job lost without state to restore, or FAILED"},
			},
			poll: statusPoll,
		},
		PhaseUpdating: {
			handle: handleSessionJobUpdating,
			exits: []exit{
				{PhaseSavepointing, "stop the job first (Savepoint), or suspend"},
				{PhaseCancelling, "stop the job first (LastState, Stateless), or suspend"},
				{PhaseSubmitting, "no job runs: submit"},
				{PhaseWaitingForCluster, "no job runs and the session cluster does not run"},
				{PhaseSuspended, "suspend with no job running"},
			},
			poll: waitPoll,
		},
		PhaseDeployFailed: {
			handle: handleSessionJobDeployFailed,
			exits: []exit{
				{PhaseUpdating, "job spec changed"},
				{PhaseSubmitting, "job FAILED and restartFailedJob set: again from its newest state"},
				{PhaseWaitingForCluster, "job FAILED and restartFailedJob set; the session cluster does not run"},
				{PhaseRunning, "spec back to the running one"},
				{PhaseSavepointing, "suspend (Savepoint)"},
				{PhaseCancelling, "suspend (LastState, Stateless)"},
				{PhaseSuspended, "suspend with no job running"},
			},
			poll: statusPoll,
		},
		PhaseSuspended: {
			handle: handleSessionJobSuspended,
			exits:  []exit{{PhaseUpdating, "state Running: resume from the recorded state"}},
			poll:   statusPoll,
		},
		PhaseDeleting: {
			follows: []v1beta1.SavepointPurpose{v1beta1.SavepointDelete},
			handle:  handleDeleting,
			giveUp:  deleteBlocked,
			poll:    waitPoll,
		},
	}
	maps.Copy(sessionJobTable, jobStopPhases(stopExits, abandonSessionStop))

	sessionClusterTable = map[Phase]phaseSpec{
		PhaseNew: {
			handle: handleSessionClusterDeploy,
			exits:  []exit{{PhaseClusterStarting, "cluster objects created"}},
			giveUp: func(rc *Context, cause string) Outcome { return deployFailed(rc, "DeployFailed", cause) },
			poll:   waitPoll,
		},
		PhaseUpdating: {
			handle: handleSessionClusterDeploy,
			exits:  []exit{{PhaseClusterStarting, "the new spec's cluster created beside the running one"}},
			giveUp: func(rc *Context, cause string) Outcome { return deployFailed(rc, "DeployFailed", cause) },
			poll:   waitPoll,
		},
		PhaseClusterStarting: {
			handle: handleSessionClusterStarting,
			exits: []exit{
				{PhaseRunning, "cluster ready: jobs are submitted to it and move to it"},
				{PhaseUpdating, "spec changed again"},
			},
			deadline: func(rc *Context) time.Duration { return rc.Config.ClusterStartTimeout.Duration },
			progress: sessionClusterProgress,
			giveUp: func(rc *Context, cause string) Outcome {
				return deployFailed(rc, "ClusterStartFailed", fmt.Sprintf("%s; the running cluster and its jobs are kept", cause))
			},
			poll: waitPoll,
		},
		PhaseRunning: {
			handle: handleSessionClusterRunning,
			exits:  []exit{{PhaseUpdating, "spec changed"}},
			poll:   statusPoll,
		},
		PhaseDeployFailed: {
			handle: handleSessionClusterDeployFailed,
			exits: []exit{
				{PhaseUpdating, "spec changed"},
				{PhaseRunning, "spec back to the running cluster's"},
			},
			poll: statusPoll,
		},
		PhaseDeleting: {
			handle: handleSessionClusterDeleting,
			// Its jobs' deletions wake it.
			poll: statusPoll,
		},
	}
}

// abandonSessionStop ends a stop of a session job that cannot finish: a suspend rests with the job as
// it is, an update fails with the job still running; both until the user changes the spec.
func abandonSessionStop(rc *Context, cause string) Outcome {
	if candidate(rc.Job) == nil {
		return blocked(rc, "SuspendBlocked", fmt.Sprintf("suspend failed: %s; change the spec to retry", cause))
	}
	return deployFailed(rc, "DeployFailed", fmt.Sprintf("%s; the job keeps running as it was", cause))
}
