package flinkapplication

import (
	"fmt"
	"maps"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// sessionJobTable is the FlinkSessionJob's phase table: a job's lifecycle without cluster phases.
// Savepointing, Cancelling, Recovering and Deleting are the FlinkApplication's handlers.
var sessionJobTable map[v1beta1.FlinkApplicationPhase]phaseSpec

// sessionClusterTable is the FlinkSessionCluster's phase table: a cluster's lifecycle without a job.
var sessionClusterTable map[v1beta1.FlinkApplicationPhase]phaseSpec

func init() {
	stopExits := []exit{
		{v1beta1.PhaseSubmitting, "job stopped; the session cluster is ready"},
		{v1beta1.PhaseUpdating, "job stopped; the spec or the cluster changed meanwhile"},
		{v1beta1.PhaseSuspended, "job stopped for a suspend"},
	}
	sessionJobTable = map[v1beta1.FlinkApplicationPhase]phaseSpec{
		v1beta1.PhaseNew: {
			handle: handleSessionJobNew,
			exits: []exit{
				{v1beta1.PhaseSubmitting, "the session cluster runs"},
				{phaseWaitingForCluster, "the session cluster does not run yet"},
				{v1beta1.PhaseSuspended, "created with state Suspended"},
			},
			poll: waitPoll,
		},
		phaseWaitingForCluster: {
			handle: handleWaitingForCluster,
			exits: []exit{
				{v1beta1.PhaseSubmitting, "the session cluster runs and is ready"},
				{v1beta1.PhaseSuspended, "suspended while waiting"},
			},
			// The cluster's changes wake its jobs (the cluster-to-jobs index); this is only a safety net.
			poll: statusPoll,
		},
		v1beta1.PhaseSubmitting: {
			handle: handleSessionSubmitting,
			exits: []exit{
				{v1beta1.PhaseRunning, "job ran stable"},
				{phaseWaitingForCluster, "the session cluster went away before the job ran"},
				{v1beta1.PhaseUpdating, "nothing recorded to submit"},
				{v1beta1.PhaseDeployFailed, "jar refused, job refused or failed, or not stable in time"},
			},
			deadline: sessionSubmitDeadline,
			giveUp:   func(rc *Context, cause string) Outcome { return deployFailed(rc, "DeployFailed", cause) },
			poll:     waitPoll,
		},
		v1beta1.PhaseRunning: {
			follows: []v1beta1.SavepointPurpose{v1beta1.SavepointManual, v1beta1.SavepointPeriodic},
			handle:  handleSessionJobRunning,
			exits: []exit{
				{v1beta1.PhaseUpdating, "job spec changed, or the session cluster runs a new Flink cluster"},
				{v1beta1.PhaseSavepointing, "suspend (Savepoint)"},
				{v1beta1.PhaseCancelling, "suspend (LastState, Stateless)"},
				{v1beta1.PhaseSuspended, "suspend with no job running"},
				{v1beta1.PhaseSubmitting, "job lost, or FAILED with restartFailedJob: again from its newest state"},
				{phaseWaitingForCluster, "job lost with its cluster: waits for it with its state recorded"},
				{v1beta1.PhaseDeployFailed, "job lost without state to restore, or FAILED"},
			},
			poll: statusPoll,
		},
		v1beta1.PhaseUpdating: {
			handle: handleSessionJobUpdating,
			exits: []exit{
				{v1beta1.PhaseSavepointing, "stop the job first (Savepoint), or suspend"},
				{v1beta1.PhaseCancelling, "stop the job first (LastState, Stateless), or suspend"},
				{v1beta1.PhaseSubmitting, "no job runs: submit"},
				{phaseWaitingForCluster, "no job runs and the session cluster does not run"},
				{v1beta1.PhaseSuspended, "suspend with no job running"},
			},
			poll: waitPoll,
		},
		v1beta1.PhaseDeployFailed: {
			handle: handleSessionJobDeployFailed,
			exits: []exit{
				{v1beta1.PhaseUpdating, "job spec changed"},
				{v1beta1.PhaseSubmitting, "job FAILED and restartFailedJob set: again from its newest state"},
				{phaseWaitingForCluster, "job FAILED and restartFailedJob set; the session cluster does not run"},
				{v1beta1.PhaseRunning, "spec back to the running one"},
				{v1beta1.PhaseSavepointing, "suspend (Savepoint)"},
				{v1beta1.PhaseCancelling, "suspend (LastState, Stateless)"},
				{v1beta1.PhaseSuspended, "suspend with no job running"},
			},
			poll: statusPoll,
		},
		v1beta1.PhaseSuspended: {
			handle: handleSessionJobSuspended,
			exits:  []exit{{v1beta1.PhaseUpdating, "state Running: resume from the recorded state"}},
			poll:   statusPoll,
		},
		v1beta1.PhaseDeleting: {
			follows: []v1beta1.SavepointPurpose{v1beta1.SavepointDelete},
			handle:  handleDeleting,
			giveUp:  deleteBlocked,
			poll:    waitPoll,
		},
	}
	maps.Copy(sessionJobTable, jobStopPhases(stopExits, abandonSessionStop))

	sessionClusterTable = map[v1beta1.FlinkApplicationPhase]phaseSpec{
		v1beta1.PhaseNew: {
			handle: handleSessionClusterDeploy,
			exits:  []exit{{v1beta1.PhaseClusterStarting, "cluster objects created"}},
			giveUp: func(rc *Context, cause string) Outcome { return deployFailed(rc, "DeployFailed", cause) },
			poll:   waitPoll,
		},
		v1beta1.PhaseUpdating: {
			handle: handleSessionClusterDeploy,
			exits:  []exit{{v1beta1.PhaseClusterStarting, "the new spec's cluster created beside the running one"}},
			giveUp: func(rc *Context, cause string) Outcome { return deployFailed(rc, "DeployFailed", cause) },
			poll:   waitPoll,
		},
		v1beta1.PhaseClusterStarting: {
			handle: handleSessionClusterStarting,
			exits: []exit{
				{v1beta1.PhaseRunning, "cluster ready: jobs are submitted to it and move to it"},
				{v1beta1.PhaseUpdating, "spec changed again"},
			},
			deadline: func(rc *Context) time.Duration { return rc.Config.ClusterStartTimeout.Duration },
			giveUp: func(rc *Context, cause string) Outcome {
				return deployFailed(rc, "ClusterStartFailed", fmt.Sprintf("%s; the running cluster and its jobs are kept", cause))
			},
			poll: waitPoll,
		},
		v1beta1.PhaseRunning: {
			handle: handleSessionClusterRunning,
			exits:  []exit{{v1beta1.PhaseUpdating, "spec changed"}},
			poll:   statusPoll,
		},
		v1beta1.PhaseDeployFailed: {
			handle: handleSessionClusterDeployFailed,
			exits: []exit{
				{v1beta1.PhaseUpdating, "spec changed"},
				{v1beta1.PhaseRunning, "spec back to the running cluster's"},
			},
			poll: statusPoll,
		},
		v1beta1.PhaseDeleting: {
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
