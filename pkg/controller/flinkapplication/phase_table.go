package flinkapplication

import (
	"fmt"
	"maps"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// phaseSpec is one row of the phase table: the handler of a phase, the phases it may move to, how
// long it may last, and where it goes when its retries or its deadline run out.
type phaseSpec struct {
	handle func(*Context) Outcome
	// exits are the phases handle may move to; the state machine refuses any other, so the generated
	// diagram in docs/ is the truth.
	exits []exit
	// deadline bounds the time in the phase; nil for phases that may last indefinitely.
	deadline func(*Context) time.Duration
	// progress, when set, counts the steps the phase has made, and how many it can make; the
	// deadline then bounds the time since the last step, and the steps it can make bound the time
	// since the phase began (clusters.Steps).
	progress func(*Context) clusterSteps
	// giveUp is called with the cause when retries or the deadline run out; nil keeps the phase
	// and stops retrying until the spec changes.
	giveUp func(rc *Context, cause string) Outcome
	// poll is how soon the phase looks again when its handler does not say.
	poll func(*config.Config) time.Duration
	// enter runs in the pass that moves into the phase, whichever phase it comes from. What the
	// phase must have recorded before its first side effect is set here, so that the transition's
	// own status write carries it instead of a write of its own.
	enter func(*Context)
	// runsAtOnce tells whether the phase's handler may run in the pass that moved into it: when
	// all its first side effect needs is already stored, the pass goes on instead of writing the
	// transition and coming back for it.
	runsAtOnce func(*Context) bool
	// follows are the savepoint purposes whose ledger entries the phase's handler follows itself,
	// when asked in the current visit of the phase; settleSavepoints follows every other Pending one.
	follows []v1beta1.SavepointPurpose
}

type exit struct {
	to   Phase
	when string
}

func waitPoll(c *config.Config) time.Duration   { return c.WaitPollInterval.Duration }
func statusPoll(c *config.Config) time.Duration { return c.StatusPollInterval.Duration }

// phaseTable is the single place where phases meet their handlers.
var phaseTable map[Phase]phaseSpec

func init() {
	stopExits := []exit{
		{PhaseSubmitting, "job stopped; the update's cluster is ready"},
		{PhaseUpdating, "job stopped; the cluster is replaced (Single, spec changed meanwhile)"},
		{PhaseSuspended, "job stopped for a suspend"},
		{PhaseRollingBack, "forceRollback before the job was touched, or it cannot be stopped"},
		{PhaseRunning, "the autoscaler's restart cannot stop the job, which runs on as it was"},
	}
	phaseTable = map[Phase]phaseSpec{
		PhaseNew: {
			handle: handleDeploy,
			exits: []exit{
				{PhaseClusterStarting, "cluster objects created"},
				{PhaseDeployFailed, "spec cannot be deployed"},
				{PhaseSuspended, "created with state Suspended"},
			},
			giveUp: func(rc *Context, cause string) Outcome { return deployFailed(rc, "DeployFailed", cause) },
			poll:   waitPoll,
		},
		PhaseUpdating: {
			handle: handleDeploy,
			exits: []exit{
				{PhaseClusterStarting, "cluster created (Dual: beside the live one)"},
				{PhaseSavepointing, "Single or suspend: stop the job first (Savepoint)"},
				{PhaseCancelling, "Single or suspend: stop the job first (LastState, Stateless)"},
				{PhaseSuspended, "suspend with no job running"},
				{PhaseDeployFailed, "spec cannot be deployed"},
			},
			giveUp: func(rc *Context, cause string) Outcome { return deployFailed(rc, "DeployFailed", cause) },
			poll:   waitPoll,
		},
		PhaseClusterStarting: {
			handle: handleClusterStarting,
			exits: []exit{
				{PhaseSubmitting, "cluster ready, no job running; or a BlueGreen version starts beside the deployed job"},
				{PhaseSavepointing, "Dual update: cluster ready (Savepoint)"},
				{PhaseCancelling, "Dual update: cluster ready (LastState, Stateless)"},
				{PhaseUpdating, "spec changed again"},
				{PhaseSuspended, "suspended before the job started"},
				{PhaseRollingBack, "forceRollback, or an update that cannot start its cluster"},
				{PhaseDeployFailed, "a first deploy that cannot start its cluster"},
			},
			enter:    chooseJobIDWhenNothingRuns,
			deadline: func(rc *Context) time.Duration { return rc.Config.ClusterStartTimeout.Duration },
			progress: startingClusterProgress,
			giveUp:   abandonUpdate,
			poll:     waitPoll,
		},
		PhaseSubmitting: {
			handle: handleSubmitting,
			enter: func(rc *Context) {
				chooseCandidateJobID(rc)
				resumeQuietSubmitting(rc)
			},
			runsAtOnce: jobIDStored,
			exits: []exit{
				{PhaseRunning, "job ran stable"},
				{PhaseDualRunning, "BlueGreen: the new version ran stable beside the deployed one"},
				{PhaseRollingBack, "job failed or not stable in time on an update"},
				{PhaseDeployFailed, "job failed on the first deploy or on a restart"},
			},
			deadline: readinessTimeout,
			giveUp:   abandonUpdate,
			poll:     waitPoll,
		},
		PhaseRunning: {
			follows: onDemand,
			handle:  handleRunning,
			exits: []exit{
				{PhaseUpdating, "spec changed"},
				{PhaseRescaling, "only parallelism changed, scaleMode InPlace"},
				{PhaseSavepointing, "suspend, or the autoscaler restarts the job at a new parallelism (Savepoint)"},
				{PhaseCancelling, "suspend, or the autoscaler restarts the job at a new parallelism (LastState, Stateless)"},
				{PhaseSuspended, "suspend with no job running"},
				{PhaseSubmitting, "job lost, FAILED with restartFailedJob or after the autoscaler rescaled it, or its JobManager Deployment gone: again on the same cluster"},
				{PhaseDeployFailed, "a job that stopped left no state to restore"},
			},
			poll: statusPoll,
		},
		PhaseRescaling: {
			handle: handleRescaling,
			exits: []exit{
				{PhaseRunning, "job rescaled in place (adaptive scheduler), or spec changed before it started"},
				{PhaseUpdating, "no job runs to rescale"},
				{PhaseSavepointing, "restart on the same cluster (Savepoint)"},
				{PhaseCancelling, "restart on the same cluster (LastState, Stateless)"},
				{PhaseDeployFailed, "not rescaled in time; the job keeps running"},
			},
			deadline: readinessTimeout,
			giveUp:   func(rc *Context, cause string) Outcome { return deployFailed(rc, "RescaleFailed", cause) },
			poll:     waitPoll,
		},
		PhaseRollingBack: {
			handle: handleRollingBack,
			exits: []exit{
				{PhaseDeployFailed, "stable job kept or restored, or rollback failed"},
				{PhaseUpdating, "spec changed during the rollback"},
			},
			deadline: func(rc *Context) time.Duration {
				return rc.Config.ClusterStartTimeout.Duration + readinessTimeout(rc) + rc.Config.CancelTimeout.Duration
			},
			giveUp: func(rc *Context, cause string) Outcome {
				return rollbackFailed(rc, cause)
			},
			poll: waitPoll,
		},
		PhaseDeployFailed: {
			handle: handleDeployFailed,
			exits: []exit{
				{PhaseUpdating, "spec changed"},
				{PhaseRescaling, "only parallelism changed, scaleMode InPlace"},
				{PhaseRunning, "spec back to the running one"},
				{PhaseSavepointing, "suspend (Savepoint)"},
				{PhaseCancelling, "suspend (LastState, Stateless)"},
				{PhaseSuspended, "suspend with no job running"},
			},
			poll: statusPoll,
		},
		PhaseSuspended: {
			handle: handleSuspended,
			exits: []exit{
				{PhaseUpdating, "state Running: resume from the recorded state"},
			},
			poll: statusPoll,
		},
		PhaseDualRunning: {
			handle: handleDualRunning,
			exits: []exit{
				{PhaseTeardown, "tearDownVersionHash names a version, Auto promotion, or the new one goes: a new spec, a suspend, forceRollback, an abort"},
				{PhaseRunning, "only one version is recorded"},
			},
			poll: statusPoll,
		},
		PhaseTeardown: {
			follows: []v1beta1.SavepointPurpose{v1beta1.SavepointTeardown},
			handle:  handleTeardown,
			exits: []exit{
				{PhaseRunning, "the version is gone; the other is deployed"},
				{PhaseDeployFailed, "an aborted or rolled-back new version is gone; the deployed one stays"},
				{PhaseDualRunning, "forceRollback before the deployed version's job was touched: the new one goes instead"},
			},
			deadline: func(rc *Context) time.Duration {
				return rc.Config.SavepointTimeout.Duration + rc.Config.CancelTimeout.Duration
			},
			// Both versions keep running; the user changes the spec (teardownMode ForceCancel, say).
			giveUp: func(rc *Context, cause string) Outcome {
				return blocked(rc, "TeardownFailed", fmt.Sprintf("teardown failed: %s; both versions keep running. "+
					"Set spec.blueGreen.teardownMode to ForceCancel to tear down without a savepoint", cause))
			},
			poll: waitPoll,
		},
		PhaseDeleting: {
			follows: []v1beta1.SavepointPurpose{v1beta1.SavepointDelete},
			handle:  handleDeleting,
			// Deleting never leaves: the finalizer goes and the object with it. When the final
			// savepoint keeps failing it stops retrying and says what to change.
			giveUp: deleteBlocked,
			poll:   waitPoll,
		},
	}
	maps.Copy(phaseTable, jobStopPhases(stopExits, abandonStop))
}

// jobStopPhases are the phases that stop a live job, shared by every kind that runs one. A kind
// brings where a finished stop leads (stopExits) and what a stop that cannot finish does (abandon).
func jobStopPhases(stopExits []exit, abandon func(rc *Context, cause string) Outcome) map[Phase]phaseSpec {
	return map[Phase]phaseSpec{
		PhaseSavepointing: {
			follows: []v1beta1.SavepointPurpose{v1beta1.SavepointUpgrade, v1beta1.SavepointSuspend},
			handle:  handleSavepointing,
			exits: append([]exit{
				{PhaseRecovering, "savepoint failed"},
				{PhaseRunning, "suspend taken back before the savepoint"},
				{PhaseDeployFailed, "suspend taken back; the spec is one that failed"},
			}, stopExits...),
			deadline: func(rc *Context) time.Duration { return rc.Config.SavepointTimeout.Duration },
			// Giving up keeps the trigger: a savepoint that completes after all is found by its
			// trigger time and restored, exactly as if it had been seen in time.
			giveUp: func(rc *Context, cause string) Outcome {
				return warnTo(PhaseRecovering, "SavepointFailed", cause)
			},
			poll: waitPoll,
		},
		PhaseCancelling: {
			handle: handleCancelling,
			exits: append([]exit{
				{PhaseSavepointing, "LastState without a usable checkpoint: a savepoint instead"},
				{PhaseDeployFailed, "the cancelled job left no state to restore"},
				{PhaseRunning, "suspend taken back before the cancel"},
			}, stopExits...),
			deadline: func(rc *Context) time.Duration { return rc.Config.CancelTimeout.Duration },
			giveUp:   abandon,
			poll:     waitPoll,
		},
		PhaseRecovering: {
			handle: handleRecovering,
			exits: append([]exit{
				{PhaseDeployFailed, "no state young enough; the job keeps running, or it stopped without state"},
			}, stopExits...),
			deadline: func(rc *Context) time.Duration { return rc.Config.CancelTimeout.Duration },
			giveUp:   abandon,
			poll:     waitPoll,
		},
	}
}

// readinessTimeout bounds how long a new job may take to run stable: the application's
// readinessTimeoutSeconds, or the operator's readinessTimeout.
func readinessTimeout(rc *Context) time.Duration {
	if s := rc.Settings.ReadinessTimeoutSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return rc.Config.ReadinessTimeout.Duration
}

// globalExits are transitions the state machine makes before any handler runs.
var globalExits = []exit{
	{PhaseDeleting, "deletion requested"},
}

func (p phaseSpec) allows(next Phase) bool {
	for _, e := range p.exits {
		if e.to == next {
			return true
		}
	}
	return false
}
