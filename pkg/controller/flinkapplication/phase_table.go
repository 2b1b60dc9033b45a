package flinkapplication

import (
	"fmt"
	"maps"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// phaseSpec is one row of a kind's phase table over the pass's Context (fsm.Spec).
type phaseSpec = fsm.Spec[*Context]

type exit = fsm.Exit

var waitPoll, statusPoll = fsm.WaitPoll, fsm.StatusPoll

// phaseTable is the single place where phases meet their handlers.
var phaseTable map[Phase]phaseSpec

func init() {
	stopExits := []exit{
		{To: PhaseSubmitting, When: "job stopped; the update's cluster is ready"},
		{To: PhaseUpdating, When: "job stopped; the cluster is replaced (Single, spec changed meanwhile)"},
		{To: PhaseSuspended, When: "job stopped for a suspend"},
		{To: PhaseRollingBack, When: "forceRollback before the job was touched, or it cannot be stopped"},
		{To: PhaseRunning, When: "the autoscaler's restart cannot stop the job, which runs on as it was"},
	}
	phaseTable = map[Phase]phaseSpec{
		PhaseNew: {
			Handle: handleDeploy,
			Exits: []exit{
				{To: PhaseClusterStarting, When: "cluster objects created"},
				{To: PhaseDeployFailed, When: "spec cannot be deployed"},
				{To: PhaseSuspended, When: "created with state Suspended"},
			},
			GiveUp: func(rc *Context, cause string) Outcome { return rc.DeployFailed("DeployFailed", cause) },
			Poll:   waitPoll,
		},
		PhaseUpdating: {
			Handle: handleDeploy,
			Exits: []exit{
				{To: PhaseClusterStarting, When: "cluster created (Dual: beside the live one)"},
				{To: PhaseSavepointing, When: "Single or suspend: stop the job first (Savepoint)"},
				{To: PhaseCancelling, When: "Single or suspend: stop the job first (LastState, Stateless)"},
				{To: PhaseSuspended, When: "suspend with no job running"},
				{To: PhaseDeployFailed, When: "spec cannot be deployed"},
			},
			GiveUp: func(rc *Context, cause string) Outcome { return rc.DeployFailed("DeployFailed", cause) },
			Poll:   waitPoll,
		},
		PhaseClusterStarting: {
			Handle: handleClusterStarting,
			Exits: []exit{
				{To: PhaseSubmitting, When: "cluster ready, no job running; or a BlueGreen version starts beside the deployed job"},
				{To: PhaseSavepointing, When: "Dual update: cluster ready (Savepoint)"},
				{To: PhaseCancelling, When: "Dual update: cluster ready (LastState, Stateless)"},
				{To: PhaseUpdating, When: "spec changed again"},
				{To: PhaseSuspended, When: "suspended before the job started"},
				{To: PhaseRollingBack, When: "forceRollback, or an update that cannot start its cluster"},
				{To: PhaseDeployFailed, When: "a first deploy that cannot start its cluster"},
			},
			Enter:    func(rc *Context) { rc.ChooseJobIDWhenNothingRuns() },
			Deadline: func(rc *Context) time.Duration { return rc.Config.ClusterStartTimeout.Duration },
			Progress: startingClusterProgress,
			GiveUp:   abandonUpdate,
			Poll:     waitPoll,
		},
		PhaseSubmitting: {
			Handle: handleSubmitting,
			Enter: func(rc *Context) {
				rc.ChooseCandidateJobID()
				resumeQuietSubmitting(rc)
			},
			RunsAtOnce: (*Context).JobIDStored,
			Exits: []exit{
				{To: PhaseRunning, When: "job ran stable"},
				{To: PhaseDualRunning, When: "BlueGreen: the new version ran stable beside the deployed one"},
				{To: PhaseRollingBack, When: "job failed or not stable in time on an update"},
				{To: PhaseDeployFailed, When: "job failed on the first deploy or on a restart"},
			},
			Deadline: (*Context).ReadinessTimeout,
			GiveUp:   abandonUpdate,
			Poll:     waitPoll,
		},
		PhaseRunning: {
			Follows: lifecycle.OnDemand,
			Handle:  handleRunning,
			Exits: []exit{
				{To: PhaseUpdating, When: "spec changed"},
				{To: PhaseRescaling, When: "only parallelism changed, scaleMode InPlace"},
				{To: PhaseSavepointing, When: "suspend, or the autoscaler restarts the job at a new parallelism (Savepoint)"},
				{To: PhaseCancelling, When: "suspend, or the autoscaler restarts the job at a new parallelism (LastState, Stateless)"},
				{To: PhaseSuspended, When: "suspend with no job running"},
				{To: PhaseSubmitting, When: "job lost, FAILED with restartFailedJob or after the autoscaler rescaled it, or its JobManager Deployment gone: again on the same cluster"},
				{To: PhaseDeployFailed, When: "a job that stopped left no state to restore"},
			},
			Poll: statusPoll,
		},
		PhaseRescaling: {
			Handle: handleRescaling,
			Exits: []exit{
				{To: PhaseRunning, When: "job rescaled in place (adaptive scheduler), or spec changed before it started"},
				{To: PhaseUpdating, When: "no job runs to rescale"},
				{To: PhaseSavepointing, When: "restart on the same cluster (Savepoint)"},
				{To: PhaseCancelling, When: "restart on the same cluster (LastState, Stateless)"},
				{To: PhaseDeployFailed, When: "not rescaled in time; the job keeps running"},
			},
			Deadline: (*Context).ReadinessTimeout,
			GiveUp:   func(rc *Context, cause string) Outcome { return rc.DeployFailed("RescaleFailed", cause) },
			Poll:     waitPoll,
		},
		PhaseRollingBack: {
			Handle: handleRollingBack,
			Exits: []exit{
				{To: PhaseDeployFailed, When: "stable job kept or restored, or rollback failed"},
				{To: PhaseUpdating, When: "spec changed during the rollback"},
			},
			Deadline: func(rc *Context) time.Duration {
				return rc.Config.ClusterStartTimeout.Duration + rc.ReadinessTimeout() + rc.Config.CancelTimeout.Duration
			},
			GiveUp: func(rc *Context, cause string) Outcome {
				return rollbackFailed(rc, cause)
			},
			Poll: waitPoll,
		},
		PhaseDeployFailed: {
			Handle: handleDeployFailed,
			Exits: []exit{
				{To: PhaseUpdating, When: "spec changed"},
				{To: PhaseRescaling, When: "only parallelism changed, scaleMode InPlace"},
				{To: PhaseRunning, When: "spec back to the running one"},
				{To: PhaseSavepointing, When: "suspend (Savepoint)"},
				{To: PhaseCancelling, When: "suspend (LastState, Stateless)"},
				{To: PhaseSuspended, When: "suspend with no job running"},
			},
			Poll: statusPoll,
		},
		PhaseSuspended: {
			Handle: handleSuspended,
			Exits: []exit{
				{To: PhaseUpdating, When: "state Running: resume from the recorded state"},
			},
			Poll: statusPoll,
		},
		PhaseDualRunning: {
			Handle: handleDualRunning,
			Exits: []exit{
				{To: PhaseTeardown, When: "tearDownVersionHash names a version, Auto promotion, or the new one goes: a new spec, a suspend, forceRollback, an abort"},
				{To: PhaseRunning, When: "only one version is recorded"},
			},
			Poll: statusPoll,
		},
		PhaseTeardown: {
			Follows: []v1beta1.SavepointPurpose{v1beta1.SavepointTeardown},
			Handle:  handleTeardown,
			Exits: []exit{
				{To: PhaseRunning, When: "the version is gone; the other is deployed"},
				{To: PhaseDeployFailed, When: "an aborted or rolled-back new version is gone; the deployed one stays"},
				{To: PhaseDualRunning, When: "forceRollback before the deployed version's job was touched: the new one goes instead"},
			},
			Deadline: func(rc *Context) time.Duration {
				return rc.Config.SavepointTimeout.Duration + rc.Config.CancelTimeout.Duration
			},
			// Both versions keep running; the user changes the spec (teardownMode ForceCancel, say).
			GiveUp: func(rc *Context, cause string) Outcome {
				return rc.Blocked("TeardownFailed", fmt.Sprintf("teardown failed: %s; both versions keep running. "+
					"Set spec.blueGreen.teardownMode to ForceCancel to tear down without a savepoint", cause))
			},
			Poll: waitPoll,
		},
		PhaseDeleting: {
			Follows: []v1beta1.SavepointPurpose{v1beta1.SavepointDelete},
			Handle:  shared(lifecycle.Deleting),
			// Deleting never leaves: the finalizer goes and the object with it. When the final
			// savepoint keeps failing it stops retrying and says what to change.
			GiveUp: lifecycle.DeleteBlocked[*Context],
			Poll:   waitPoll,
		},
	}
	maps.Copy(phaseTable, lifecycle.StopPhases(sharedPass, stopExits, abandonStop))
	for phase, row := range phaseTable {
		switch phase {
		case PhaseNew, PhaseRunning, PhaseSuspended, PhaseDeleting:
		default:
			row.Handle = recreatingHAJobManager(row.Handle)
			phaseTable[phase] = row
		}
	}
}

// sharedPass is the part of the pass every kind shares (lifecycle.Pass).
func sharedPass(rc *Context) *lifecycle.Pass { return rc.Pass.Pass }

// shared is a job phase every kind shares (package lifecycle) as a handler of this package's pass.
func shared(handle func(*lifecycle.Pass) Outcome) func(*Context) Outcome {
	return func(rc *Context) Outcome { return handle(rc.Pass.Pass) }
}

// phases is the application's phase table.
func (rc *Context) phases() map[Phase]phaseSpec { return phaseTable }

// Drawn is what the docs draw of the application's state machine.
func Drawn() fsm.Drawn[*Context] {
	listed := make([]string, len(v1beta1.Phases))
	for i, p := range v1beta1.Phases {
		listed[i] = string(p)
	}
	return fsm.Drawn[*Context]{Table: phaseTable, Listed: listed, Global: fsm.GlobalExits,
		EndOfLife: "job handled per deleteMode, finalizer removed"}
}
