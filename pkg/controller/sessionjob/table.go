package sessionjob

import (
	"fmt"
	"maps"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// table is the FlinkSessionJob's phase table: a job's lifecycle without cluster phases.
// Savepointing, Cancelling, Recovering and Deleting are the job phases every job owner shares
// (package lifecycle).
var table = func() map[fsm.Phase]fsm.Spec[*Pass] {
	stopExits := []fsm.Exit{
		{To: fsm.PhaseSubmitting, When: "job stopped; the session cluster is ready"},
		{To: fsm.PhaseUpdating, When: "job stopped; the spec or the cluster changed meanwhile"},
		{To: fsm.PhaseSuspended, When: "job stopped for a suspend"},
	}
	t := map[fsm.Phase]fsm.Spec[*Pass]{
		fsm.PhaseNew: {
			Handle: handleNew,
			Exits: []fsm.Exit{
				{To: fsm.PhaseSubmitting, When: "the session cluster runs"},
				{To: fsm.PhaseWaitingForCluster, When: "the session cluster does not run yet"},
				{To: fsm.PhaseSuspended, When: "created with state Suspended"},
			},
			Poll: fsm.WaitPoll,
		},
		fsm.PhaseWaitingForCluster: {
			Handle: handleWaitingForCluster,
			Exits: []fsm.Exit{
				{To: fsm.PhaseSubmitting, When: "the session cluster runs and is ready"},
				{To: fsm.PhaseSuspended, When: "suspended while waiting"},
			},
			// The cluster's changes wake its jobs (the cluster-to-jobs index); this is only a safety net.
			Poll: fsm.StatusPoll,
		},
		fsm.PhaseSubmitting: {
			Handle: handleSubmitting,
			Exits: []fsm.Exit{
				{To: fsm.PhaseRunning, When: "job ran stable"},
				{To: fsm.PhaseWaitingForCluster, When: "the session cluster went away before the job ran"},
				{To: fsm.PhaseUpdating, When: "nothing recorded to submit"},
				{To: fsm.PhaseDeployFailed, When: "jar refused, job refused or failed, or not stable in time"},
			},
			Deadline: submitDeadline,
			GiveUp:   giveUpSubmission,
			Poll:     fsm.WaitPoll,
		},
		fsm.PhaseRunning: {
			Follows: lifecycle.OnDemand,
			Handle:  handleRunning,
			Exits: []fsm.Exit{
				{To: fsm.PhaseUpdating, When: "job spec changed, or the session cluster runs a new Flink cluster"},
				{To: fsm.PhaseSavepointing, When: "suspend (Savepoint)"},
				{To: fsm.PhaseCancelling, When: "suspend (LastState, Stateless)"},
				{To: fsm.PhaseSuspended, When: "suspend with no job running"},
				{To: fsm.PhaseSubmitting, When: "job lost, or FAILED with restartFailedJob: again from its newest state"},
				{To: fsm.PhaseWaitingForCluster, When: "job lost with its cluster: waits for it with its state recorded"},
				{To: fsm.PhaseDeployFailed, When: "job lost without state to restore, or FAILED"},
			},
			Poll: fsm.StatusPoll,
		},
		fsm.PhaseUpdating: {
			Handle: handleUpdating,
			Exits: []fsm.Exit{
				{To: fsm.PhaseSavepointing, When: "stop the job first (Savepoint), or suspend"},
				{To: fsm.PhaseCancelling, When: "stop the job first (LastState, Stateless), or suspend"},
				{To: fsm.PhaseSubmitting, When: "no job runs: submit"},
				{To: fsm.PhaseWaitingForCluster, When: "no job runs and the session cluster does not run"},
				{To: fsm.PhaseSuspended, When: "suspend with no job running"},
			},
			Poll: fsm.WaitPoll,
		},
		fsm.PhaseDeployFailed: {
			Handle: handleDeployFailed,
			Exits: []fsm.Exit{
				{To: fsm.PhaseUpdating, When: "job spec changed"},
				{To: fsm.PhaseSubmitting, When: "job FAILED and restartFailedJob set: again from its newest state"},
				{To: fsm.PhaseWaitingForCluster, When: "job FAILED and restartFailedJob set; the session cluster does not run"},
				{To: fsm.PhaseRunning, When: "spec back to the running one"},
				{To: fsm.PhaseSavepointing, When: "suspend (Savepoint)"},
				{To: fsm.PhaseCancelling, When: "suspend (LastState, Stateless)"},
				{To: fsm.PhaseSuspended, When: "suspend with no job running"},
			},
			Poll: fsm.StatusPoll,
		},
		fsm.PhaseSuspended: {
			Handle: handleSuspended,
			Exits:  []fsm.Exit{{To: fsm.PhaseUpdating, When: "state Running: resume from the recorded state"}},
			Poll:   fsm.StatusPoll,
		},
		fsm.PhaseDeleting: {
			Follows: []v1beta1.SavepointPurpose{v1beta1.SavepointDelete},
			Handle:  shared(lifecycle.Deleting),
			GiveUp:  lifecycle.DeleteBlocked[*Pass],
			Poll:    fsm.WaitPoll,
		},
	}
	maps.Copy(t, lifecycle.StopPhases(sharedPass, stopExits, abandonStop))
	return t
}()

// abandonStop ends a stop of a session job that cannot finish: a suspend rests with the job as
// it is, an update fails with the job still running; both until the user changes the spec.
func abandonStop(p *Pass, cause string) fsm.Outcome {
	if jobstate.Candidate(p.Job) == nil {
		return p.Blocked("SuspendBlocked", fmt.Sprintf("suspend failed: %s; change the spec to retry", cause))
	}
	return p.DeployFailed("DeployFailed", fmt.Sprintf("%s; the job keeps running as it was", cause))
}

// sharedPass is the part of the pass every job owner shares (lifecycle.Pass).
func sharedPass(p *Pass) *lifecycle.Pass { return p.Pass.Pass }

// shared is a job phase every job owner shares (package lifecycle) as a handler of the kind's pass.
func shared(handle func(*lifecycle.Pass) fsm.Outcome) func(*Pass) fsm.Outcome {
	return func(p *Pass) fsm.Outcome { return handle(p.Pass.Pass) }
}
