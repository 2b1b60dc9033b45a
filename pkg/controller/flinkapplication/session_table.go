package flinkapplication

import (
	"fmt"
	"maps"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// sessionJobTable is the FlinkSessionJob's phase table: a job's lifecycle without cluster phases.
// Savepointing, Cancelling, Recovering and Deleting are the FlinkApplication's handlers.
var sessionJobTable map[Phase]phaseSpec

func init() {
	stopExits := []exit{
		{To: PhaseSubmitting, When: "job stopped; the session cluster is ready"},
		{To: PhaseUpdating, When: "job stopped; the spec or the cluster changed meanwhile"},
		{To: PhaseSuspended, When: "job stopped for a suspend"},
	}
	sessionJobTable = map[Phase]phaseSpec{
		PhaseNew: {
			Handle: handleSessionJobNew,
			Exits: []exit{
				{To: PhaseSubmitting, When: "the session cluster runs"},
				{To: PhaseWaitingForCluster, When: "the session cluster does not run yet"},
				{To: PhaseSuspended, When: "created with state Suspended"},
			},
			Poll: waitPoll,
		},
		PhaseWaitingForCluster: {
			Handle: handleWaitingForCluster,
			Exits: []exit{
				{To: PhaseSubmitting, When: "the session cluster runs and is ready"},
				{To: PhaseSuspended, When: "suspended while waiting"},
			},
			// The cluster's changes wake its jobs (the cluster-to-jobs index); this is only a safety net.
			Poll: statusPoll,
		},
		PhaseSubmitting: {
			Handle: handleSessionSubmitting,
			Exits: []exit{
				{To: PhaseRunning, When: "job ran stable"},
				{To: PhaseWaitingForCluster, When: "the session cluster went away before the job ran"},
				{To: PhaseUpdating, When: "nothing recorded to submit"},
				{To: PhaseDeployFailed, When: "jar refused, job refused or failed, or not stable in time"},
			},
			Deadline: sessionSubmitDeadline,
			GiveUp:   giveUpSessionSubmission,
			Poll:     waitPoll,
		},
		PhaseRunning: {
			Follows: lifecycle.OnDemand,
			Handle:  handleSessionJobRunning,
			Exits: []exit{
				{To: PhaseUpdating, When: "job spec changed, or the session cluster runs a new Flink cluster"},
				{To: PhaseSavepointing, When: "suspend (Savepoint)"},
				{To: PhaseCancelling, When: "suspend (LastState, Stateless)"},
				{To: PhaseSuspended, When: "suspend with no job running"},
				{To: PhaseSubmitting, When: "job lost, or FAILED with restartFailedJob: again from its newest state"},
				{To: PhaseWaitingForCluster, When: "job lost with its cluster: waits for it with its state recorded"},
				{To: PhaseDeployFailed, When: "job lost without state to restore, or FAILED"},
			},
			Poll: statusPoll,
		},
		PhaseUpdating: {
			Handle: handleSessionJobUpdating,
			Exits: []exit{
				{To: PhaseSavepointing, When: "stop the job first (Savepoint), or suspend"},
				{To: PhaseCancelling, When: "stop the job first (LastState, Stateless), or suspend"},
				{To: PhaseSubmitting, When: "no job runs: submit"},
				{To: PhaseWaitingForCluster, When: "no job runs and the session cluster does not run"},
				{To: PhaseSuspended, When: "suspend with no job running"},
			},
			Poll: waitPoll,
		},
		PhaseDeployFailed: {
			Handle: handleSessionJobDeployFailed,
			Exits: []exit{
				{To: PhaseUpdating, When: "job spec changed"},
				{To: PhaseSubmitting, When: "job FAILED and restartFailedJob set: again from its newest state"},
				{To: PhaseWaitingForCluster, When: "job FAILED and restartFailedJob set; the session cluster does not run"},
				{To: PhaseRunning, When: "spec back to the running one"},
				{To: PhaseSavepointing, When: "suspend (Savepoint)"},
				{To: PhaseCancelling, When: "suspend (LastState, Stateless)"},
				{To: PhaseSuspended, When: "suspend with no job running"},
			},
			Poll: statusPoll,
		},
		PhaseSuspended: {
			Handle: handleSessionJobSuspended,
			Exits:  []exit{{To: PhaseUpdating, When: "state Running: resume from the recorded state"}},
			Poll:   statusPoll,
		},
		PhaseDeleting: {
			Follows: []v1beta1.SavepointPurpose{v1beta1.SavepointDelete},
			Handle:  shared(lifecycle.Deleting),
			GiveUp:  lifecycle.DeleteBlocked[*Context],
			Poll:    waitPoll,
		},
	}
	maps.Copy(sessionJobTable, lifecycle.StopPhases(sharedPass, stopExits, abandonSessionStop))
}

// abandonSessionStop ends a stop of a session job that cannot finish: a suspend rests with the job as
// it is, an update fails with the job still running; both until the user changes the spec.
func abandonSessionStop(rc *Context, cause string) Outcome {
	if jobstate.Candidate(rc.Job) == nil {
		return rc.Blocked("SuspendBlocked", fmt.Sprintf("suspend failed: %s; change the spec to retry", cause))
	}
	return rc.DeployFailed("DeployFailed", fmt.Sprintf("%s; the job keeps running as it was", cause))
}
