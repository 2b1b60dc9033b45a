package flinkapplication

import (
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
	deadline func(*config.Config) time.Duration
	// giveUp is called with the cause when retries or the deadline run out; nil keeps the phase
	// and stops retrying until the spec changes.
	giveUp func(rc *Context, cause string) Outcome
	// poll is how soon the phase looks again when its handler does not say.
	poll func(*config.Config) time.Duration
}

type exit struct {
	to   v1beta1.FlinkApplicationPhase
	when string
}

func waitPoll(c *config.Config) time.Duration   { return c.WaitPollInterval.Duration }
func statusPoll(c *config.Config) time.Duration { return c.StatusPollInterval.Duration }

// phaseTable is the single place where phases meet their handlers.
var phaseTable map[v1beta1.FlinkApplicationPhase]phaseSpec

func init() {
	phaseTable = map[v1beta1.FlinkApplicationPhase]phaseSpec{
		v1beta1.PhaseNew: {
			handle: handleDeploy,
			exits: []exit{
				{v1beta1.PhaseClusterStarting, "cluster objects created"},
				{v1beta1.PhaseDeployFailed, "spec cannot be deployed"},
			},
			giveUp: func(rc *Context, cause string) Outcome { return deployFailed(rc, "DeployFailed", cause) },
			poll:   waitPoll,
		},
		v1beta1.PhaseUpdating: {
			handle: handleDeploy,
			exits: []exit{
				{v1beta1.PhaseClusterStarting, "new cluster created beside the old"},
				{v1beta1.PhaseDeployFailed, "spec cannot be deployed"},
			},
			giveUp: func(rc *Context, cause string) Outcome { return deployFailed(rc, "DeployFailed", cause) },
			poll:   waitPoll,
		},
		v1beta1.PhaseClusterStarting: {
			handle: handleClusterStarting,
			exits: []exit{
				{v1beta1.PhaseSubmitting, "first deploy: cluster ready"},
				{v1beta1.PhaseSavepointing, "update: cluster ready"},
				{v1beta1.PhaseCancelling, "update with savepointDisabled"},
				{v1beta1.PhaseUpdating, "spec changed again"},
				{v1beta1.PhaseRollingBack, "forceRollback, or an update that cannot start its cluster"},
				{v1beta1.PhaseDeployFailed, "a first deploy that cannot start its cluster"},
			},
			deadline: func(c *config.Config) time.Duration { return c.ClusterStartTimeout.Duration },
			giveUp:   abandonUpdate,
			poll:     waitPoll,
		},
		v1beta1.PhaseSavepointing: {
			handle: handleSavepointing,
			exits: []exit{
				{v1beta1.PhaseSubmitting, "savepoint taken, old job cancelled"},
				{v1beta1.PhaseRecovering, "savepoint failed"},
				{v1beta1.PhaseRollingBack, "forceRollback before the savepoint"},
			},
			deadline: func(c *config.Config) time.Duration { return c.SavepointTimeout.Duration },
			giveUp: func(rc *Context, cause string) Outcome {
				rc.App.Status.SavepointTriggerID = ""
				return warnTo(v1beta1.PhaseRecovering, "SavepointFailed", cause)
			},
			poll: waitPoll,
		},
		v1beta1.PhaseCancelling: {
			handle: handleCancelling,
			exits: []exit{
				{v1beta1.PhaseSubmitting, "old job cancelled"},
				{v1beta1.PhaseRollingBack, "the old job cannot be cancelled"},
			},
			deadline: func(c *config.Config) time.Duration { return c.CancelTimeout.Duration },
			giveUp:   abandonUpdate,
			poll:     waitPoll,
		},
		v1beta1.PhaseRecovering: {
			handle: handleRecovering,
			exits: []exit{
				{v1beta1.PhaseSubmitting, "restoring the newest checkpoint"},
				{v1beta1.PhaseDeployFailed, "no checkpoint young enough"},
				{v1beta1.PhaseRollingBack, "the old job cannot be stopped"},
			},
			deadline: func(c *config.Config) time.Duration { return c.CancelTimeout.Duration },
			giveUp:   abandonUpdate,
			poll:     waitPoll,
		},
		v1beta1.PhaseSubmitting: {
			handle: handleSubmitting,
			exits: []exit{
				{v1beta1.PhaseRunning, "all tasks running"},
				{v1beta1.PhaseRollingBack, "job failed on an update"},
				{v1beta1.PhaseDeployFailed, "job failed on the first deploy"},
			},
			deadline: func(c *config.Config) time.Duration { return c.JobStartTimeout.Duration },
			giveUp:   abandonUpdate,
			poll:     waitPoll,
		},
		v1beta1.PhaseRunning: {
			handle: handleRunning,
			exits: []exit{
				{v1beta1.PhaseUpdating, "spec changed"},
			},
			poll: statusPoll,
		},
		v1beta1.PhaseRollingBack: {
			handle: handleRollingBack,
			exits: []exit{
				{v1beta1.PhaseDeployFailed, "previous job restored, or rollback failed"},
			},
			deadline: func(c *config.Config) time.Duration {
				return c.JobStartTimeout.Duration + c.CancelTimeout.Duration
			},
			giveUp: func(rc *Context, cause string) Outcome {
				return rollbackFailed(rc, cause)
			},
			poll: waitPoll,
		},
		v1beta1.PhaseDeployFailed: {
			handle: handleDeployFailed,
			exits: []exit{
				{v1beta1.PhaseUpdating, "spec changed"},
				{v1beta1.PhaseRunning, "spec back to the running one"},
			},
			poll: statusPoll,
		},
		v1beta1.PhaseDeleting: {
			handle: handleDeleting,
			// Deleting never leaves: the finalizer goes and the object with it. When the final
			// savepoint keeps failing it stops retrying and says what to change.
			giveUp: deleteBlocked,
			poll:   waitPoll,
		},
	}
}

// globalExits are transitions the state machine makes before any handler runs.
var globalExits = []exit{
	{v1beta1.PhaseDeleting, "deletion requested"},
}

func (p phaseSpec) allows(next v1beta1.FlinkApplicationPhase) bool {
	for _, e := range p.exits {
		if e.to == next {
			return true
		}
	}
	return false
}
