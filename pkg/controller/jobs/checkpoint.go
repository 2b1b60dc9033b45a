package jobs

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// CheckpointStep is where one manual checkpoint stands after a pass.
type CheckpointStep struct {
	// Location is set once the checkpoint completed: its path.
	Location string
	// Failure is set when the checkpoint failed or can no longer be had.
	Failure string
	// Wait is non-nil while the checkpoint goes on: its trigger is being persisted, it is in
	// progress, or a call failed.
	Wait *Wait
}

// Checkpoint drives a manual checkpoint of a running job (Flink 1.17+), safely across operator
// restarts, as Savepoint drives a savepoint: the trigger id and time are chosen first and persisted,
// then sent to Flink as the trigger id, so a restart polls the checkpoint it asked for instead of
// taking a second. A trigger Flink does not know was not sent yet (the operator stopped between the
// two), or Flink forgot it (it restarted): it is sent (again). A second checkpoint costs little,
// unlike a second savepoint, and nothing in the job's history tells a manual checkpoint from the
// periodic ones.
// With mayTrigger false it only follows a checkpoint already sent.
func (p *Pass) Checkpoint(ref Ref, t *Trigger, mayTrigger bool) CheckpointStep {
	if !t.Asked() {
		if !mayTrigger {
			return CheckpointStep{Failure: "no checkpoint was asked for"}
		}
		if p.Overdue {
			return CheckpointStep{Failure: "the deadline passed before the checkpoint was asked for"}
		}
		*t = Trigger{ID: NewID(), Time: p.Now}
		return CheckpointStep{Wait: persist()}
	}
	status, err := p.flink.GetCheckpointStatus(p.ctx, ref.URL, ref.ID, t.ID)
	if client.IsNotFound(err) {
		if p.Overdue || !mayTrigger {
			return CheckpointStep{Failure: fmt.Sprintf("Flink does not know the checkpoint of job %s that was asked for", ref.ID)}
		}
		return p.triggerCheckpoint(ref, t)
	}
	if err != nil {
		return CheckpointStep{Wait: retry(err)}
	}
	switch {
	case status.Succeeded():
		cp, err := p.flink.GetCheckpointDetails(p.ctx, ref.URL, ref.ID, status.CheckpointID)
		if err != nil {
			return CheckpointStep{Wait: retry(err)}
		}
		if !Restorable(cp.ExternalPath) {
			return CheckpointStep{Failure: fmt.Sprintf("checkpoint %d of job %s has no path to restore from (%q)", status.CheckpointID, ref.ID, cp.ExternalPath)}
		}
		p.announce(false, "CheckpointCompleted", fmt.Sprintf("checkpoint %d of job %s completed at %s", status.CheckpointID, ref.ID, cp.ExternalPath))
		return CheckpointStep{Location: cp.ExternalPath}
	case status.Failed():
		return CheckpointStep{Failure: fmt.Sprintf("checkpoint of job %s failed: %s", ref.ID, failureCause(status.FailureCause))}
	}
	return CheckpointStep{Wait: later(0)}
}

func (p *Pass) triggerCheckpoint(ref Ref, t *Trigger) CheckpointStep {
	id, err := p.flink.TriggerCheckpoint(p.ctx, ref.URL, ref.ID, client.CheckpointRequest{CheckpointType: "CONFIGURED", TriggerID: t.ID})
	switch {
	case refusedTrigger(err):
		// Flink refused it (checkpointing off, a Flink before 1.17): the same request is refused again.
		return CheckpointStep{Failure: fmt.Sprintf("Flink refused the checkpoint of job %s: %v", ref.ID, err)}
	case err != nil:
		return CheckpointStep{Wait: retry(err)}
	}
	if id != "" && id != t.ID {
		t.ID = id
	}
	p.announce(false, "CheckpointTriggered", fmt.Sprintf("triggered a checkpoint of job %s (trigger %s)", ref.ID, t.ID))
	return CheckpointStep{Wait: later(0)}
}
