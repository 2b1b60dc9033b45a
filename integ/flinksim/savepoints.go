package flinksim

import (
	"time"
)

type opKind int

const (
	opSavepoint opKind = iota // savepoints and stop-with-savepoint share one cache
	opCheckpoint
	opDisposal
)

type savepointMode int

const (
	modeSavepoint savepointMode = iota
	modeCancelJob
	modeStop
)

// operation is an asynchronous REST operation (Flink's CompletedOperationCache entry).
type operation struct {
	kind             opKind
	jobID, triggerID string
	mode             savepointMode
	targetDir        string
	format           string
	disposalPath     string
	triggeredAt      time.Time
	dueAt            time.Time
	hang, fail       bool
	entry            *checkpointEntry

	done         bool
	completedAt  time.Time
	location     string
	checkpointID int64
	failure      *throwable
}

func (jm *JobManager) findOperation(kind opKind, jobID, triggerID string) *operation {
	for _, op := range jm.ops {
		if op.kind == kind && op.jobID == jobID && op.triggerID == triggerID {
			return op
		}
	}
	return nil
}

// operationEvent completes an operation when due, and forgets a completed one
// after rest.async.store-duration. Hanging operations never complete.
func (jm *JobManager) operationEvent(op *operation) (time.Time, func(time.Time)) {
	if op.done {
		return op.completedAt.Add(jm.cfg.asyncStoreTTL), func(time.Time) { jm.forgetOperation(op) }
	}
	if op.hang {
		return time.Time{}, nil
	}
	return op.dueAt, func(at time.Time) { jm.completeOperation(op, at) }
}

func (jm *JobManager) forgetOperation(op *operation) {
	for i, x := range jm.ops {
		if x == op {
			jm.ops = append(jm.ops[:i], jm.ops[i+1:]...)
			return
		}
	}
}

func (op *operation) finish(at time.Time, failure *throwable) {
	op.done = true
	op.completedAt = at
	op.failure = failure
}

// checkpointable is why a savepoint or checkpoint cannot start on a job, or nil.
func (jm *JobManager) checkpointable(j *job, jobID string) *throwable {
	switch {
	case j == nil || isGloballyTerminal(j.state):
		return jobNotFound(jobID)
	case j.state == stateInitializing:
		return unavailableWhileInitializing()
	case j.state != stateRunning || !j.hasSlots:
		return checkpointDeclined("Not all required tasks are currently running.")
	}
	return nil
}

// triggerSavepoint registers a savepoint (or stop-with-savepoint) operation.
// A repeated client triggerId returns the existing operation untouched.
func (jm *JobManager) triggerSavepoint(now time.Time, jobID, triggerID, dir, format string, mode savepointMode) string {
	if triggerID != "" && jm.findOperation(opSavepoint, jobID, triggerID) != nil {
		return triggerID
	}
	if triggerID == "" {
		triggerID = randomHex(32)
	}
	jm.savepointTriggers++
	op := &operation{kind: opSavepoint, jobID: jobID, triggerID: triggerID, mode: mode,
		targetDir: dir, format: format, triggeredAt: now, dueAt: now.Add(jm.timings.Savepoint)}
	jm.ops = append(jm.ops, op)
	j := jm.job(jobID)
	if cause := jm.checkpointable(j, jobID); cause != nil {
		if cause.class == classJobNotFound {
			// The Dispatcher's future fails with it, and the operation's result holds it wrapped.
			cause = newThrowable(classCompletion, cause.String(), cause)
		}
		op.finish(now, cause)
		return triggerID
	}
	f := jm.currentFaults()
	op.hang, op.fail = f.HangSavepoints, f.FailSavepoints
	ckType := typeSavepoint
	if mode == modeStop {
		ckType = typeSyncSavepoint
	}
	op.entry = jm.startCheckpoint(j, now, ckType, format, op.dueAt)
	if mode != modeSavepoint {
		// Flink stops the periodic checkpoint scheduler for stop/cancel-with-savepoint.
		j.ckpt.paused = true
	}
	return triggerID
}

// triggerCheckpoint registers a manual checkpoint (POST /jobs/:id/checkpoints).
func (jm *JobManager) triggerCheckpoint(now time.Time, jobID, triggerID string) string {
	if triggerID != "" && jm.findOperation(opCheckpoint, jobID, triggerID) != nil {
		return triggerID
	}
	if triggerID == "" {
		triggerID = randomHex(32)
	}
	op := &operation{kind: opCheckpoint, jobID: jobID, triggerID: triggerID,
		triggeredAt: now, dueAt: now.Add(jm.timings.Checkpoint)}
	jm.ops = append(jm.ops, op)
	j := jm.job(jobID)
	if cause := jm.checkpointable(j, jobID); cause != nil {
		op.finish(now, cause)
		return triggerID
	}
	op.entry = jm.startCheckpoint(j, now, typeCheckpoint, "", op.dueAt)
	return triggerID
}

// triggerDisposal deletes a savepoint from Storage (POST /savepoint-disposal).
func (jm *JobManager) triggerDisposal(now time.Time, path string) string {
	triggerID := randomHex(32)
	op := &operation{kind: opDisposal, triggerID: triggerID, disposalPath: path, triggeredAt: now, dueAt: now}
	jm.ops = append(jm.ops, op)
	return triggerID
}

func (jm *JobManager) completeOperation(op *operation, at time.Time) {
	switch op.kind {
	case opDisposal:
		if _, ok := jm.storage.get(op.disposalPath); !ok {
			op.finish(at, fileNotFound(op.disposalPath))
			return
		}
		jm.storage.remove(op.disposalPath)
		op.finish(at, nil)
		return
	case opCheckpoint:
		j := jm.job(op.jobID)
		op.checkpointID = op.entry.id
		jm.completeCheckpoint(j, op.entry, at, jm.checkpointPath(j, op.entry.id))
		op.finish(at, nil)
		return
	}
	j := jm.job(op.jobID)
	if op.fail {
		cause := checkpointDeclined("Asynchronous task checkpoint failed.")
		jm.failCheckpoint(j, op.entry, at, cause.message)
		j.ckpt.paused = false
		op.finish(at, cause)
		return
	}
	op.location = op.targetDir + "/savepoint-" + op.jobID[:6] + "-" + randomHex(12)
	jm.completeCheckpoint(j, op.entry, at, op.location)
	op.finish(at, nil)
	switch op.mode {
	case modeCancelJob:
		// The operation reports COMPLETED while the job is still CANCELLING.
		jm.cancel(j, at)
	case modeStop:
		jm.setState(j, stateFinished, at)
	}
}

// failPendingOperations fails the job's in-flight savepoints and checkpoints,
// as the CheckpointCoordinator does when the job stops running.
func (jm *JobManager) failPendingOperations(j *job, at time.Time) {
	for _, op := range jm.ops {
		if op.done || op.jobID != j.id || op.kind == opDisposal {
			continue
		}
		cause := checkpointDeclined("Checkpoint Coordinator is suspending.")
		if op.entry != nil {
			jm.failCheckpoint(j, op.entry, at, cause.message)
		}
		op.finish(at, cause)
	}
	j.ckpt.paused = false
}
