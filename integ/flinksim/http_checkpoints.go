package flinksim

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// withCheckpointStats answers 404 for sparse jobs, which have no checkpoint
// statistics yet (or ever, when initialisation failed).
func (jm *JobManager) withCheckpointStats(rc *reqCtx, f func(j *job) response) response {
	return jm.withJob(rc, func(j *job) response {
		if !j.hasGraph() {
			return restError(http.StatusNotFound, classRestHandler, "Checkpointing has not been enabled.", nil)
		}
		return f(j)
	})
}

func statsSummary(s summary) map[string]any {
	avg := s.avg()
	return map[string]any{
		"min": s.min, "max": s.max, "avg": avg,
		"p50": jsonDouble(float64(avg)), "p90": jsonDouble(float64(avg)), "p95": jsonDouble(float64(avg)),
		"p99": jsonDouble(float64(avg)), "p999": jsonDouble(float64(avg)),
	}
}

// checkpointSummary is statsSummary as /checkpoints answers it: before a checkpoint completed its
// percentiles have no data, and Flink writes the NaN they are as the string "NaN".
func checkpointSummary(s summary) map[string]any {
	out := statsSummary(s)
	if s.count == 0 {
		for _, p := range []string{"p50", "p90", "p95", "p99", "p999"} {
			out[p] = "NaN"
		}
	}
	return out
}

// checkpointJSON renders CheckpointStatistics with its className discriminator.
func (jm *JobManager) checkpointJSON(j *job, e *checkpointEntry, now time.Time, withTasks bool) map[string]any {
	if e == nil {
		return nil
	}
	ack, acked := now, 0
	if e.status != "IN_PROGRESS" {
		ack = e.ackAt
	}
	if e.status == "COMPLETED" {
		acked = e.numSubtasks
	}
	var format any
	if e.isSavepoint() {
		format = e.format
	}
	out := map[string]any{
		"id":                        e.id,
		"status":                    e.status,
		"is_savepoint":              e.isSavepoint(),
		"savepointFormat":           format,
		"trigger_timestamp":         e.triggeredAt.UnixMilli(),
		"latest_ack_timestamp":      ack.UnixMilli(),
		"checkpointed_size":         e.stateSize,
		"state_size":                e.stateSize,
		"end_to_end_duration":       ack.Sub(e.triggeredAt).Milliseconds(),
		"alignment_buffered":        0,
		"processed_data":            0,
		"persisted_data":            0,
		"num_subtasks":              e.numSubtasks,
		"num_acknowledged_subtasks": acked,
		"checkpoint_type":           e.ckType,
		"tasks":                     map[string]any{},
	}
	switch e.status {
	case "COMPLETED":
		out["className"] = "completed"
		out["external_path"] = e.externalPath
		out["discarded"] = e.discarded
	case "FAILED":
		out["className"] = "failed"
		out["failure_timestamp"] = e.ackAt.UnixMilli()
		out["failure_message"] = e.failureMessage
	default:
		out["className"] = "in_progress"
	}
	if withTasks {
		tasks := map[string]any{}
		for v := range j.vertexIDs {
			subtasks, ackedSubtasks := j.vertexParallelism[v], 0
			if e.status == "COMPLETED" {
				ackedSubtasks = subtasks
			}
			tasks[j.vertexIDs[v]] = map[string]any{
				"id": e.id, "status": e.status, "latest_ack_timestamp": ack.UnixMilli(),
				"checkpointed_size": e.stateSize / 2, "state_size": e.stateSize / 2,
				"end_to_end_duration": ack.Sub(e.triggeredAt).Milliseconds(), "alignment_buffered": 0,
				"processed_data": 0, "persisted_data": 0, "num_subtasks": subtasks,
				"num_acknowledged_subtasks": ackedSubtasks,
			}
		}
		out["tasks"] = tasks
	}
	return out
}

func (jm *JobManager) handleCheckpoints(rc *reqCtx) response {
	return jm.withCheckpointStats(rc, func(j *job) response {
		c, now := jm.checkpointStatsOf(j, rc.now)
		history := []any{}
		for _, e := range c.history {
			history = append(history, jm.checkpointJSON(j, e, now, false))
		}
		var restored any
		if r := c.restored; r != nil {
			restored = map[string]any{
				"id": r.id, "restore_timestamp": r.at.UnixMilli(), "is_savepoint": r.isSavepoint, "external_path": r.externalPath,
			}
		}
		inProgress := int64(c.inProgress())
		sizes := checkpointSummary(c.sizes)
		// The simulator moves no data: what each completed checkpoint processed and persisted is 0.
		moved := checkpointSummary(summary{count: c.sizes.count})
		return respondOK(map[string]any{
			"counts": map[string]any{
				"restored": c.restoredCount, "total": c.completed + c.failed + inProgress,
				"in_progress": inProgress, "completed": c.completed, "failed": c.failed,
			},
			"summary": map[string]any{
				"checkpointed_size": sizes, "state_size": sizes,
				"end_to_end_duration": checkpointSummary(c.durations),
				// Kept for compatibility, and always 0 (Flink's StatsSummaryDto of nothing).
				"alignment_buffered": statsSummary(summary{}), "processed_data": moved, "persisted_data": moved,
			},
			"latest": map[string]any{
				"completed": nilIfEmpty(jm.checkpointJSON(j, c.latestCompleted, now, false)),
				"savepoint": nilIfEmpty(jm.checkpointJSON(j, c.latestSavepoint, now, false)),
				"failed":    nilIfEmpty(jm.checkpointJSON(j, c.lastFail, now, false)),
				"restored":  restored,
			},
			"history": history,
		})
	})
}

// nilIfEmpty turns a nil map into a JSON null rather than {}.
func nilIfEmpty(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

func (jm *JobManager) handleCheckpointConfig(rc *reqCtx) response {
	return jm.withJob(rc, func(j *job) response {
		if !j.hasGraph() {
			return restError(http.StatusNotFound, classRestHandler,
				"Checkpointing is not enabled for this job ("+j.id+").", nil)
		}
		interval := int64(math.MaxInt64)
		if jm.checkpointInterval(j) > 0 {
			interval = jm.checkpointInterval(j).Milliseconds()
		}
		mode := "exactly_once"
		if !jm.cfg.exactlyOnce {
			mode = "at_least_once"
		}
		storage := "JobManagerCheckpointStorage"
		if jm.cfg.checkpointDir != "" {
			storage = "FileSystemCheckpointStorage"
		}
		return respondOK(map[string]any{
			"mode": mode, "interval": interval, "timeout": jm.cfg.checkpointTimeout.Milliseconds(),
			"min_pause": 0, "max_concurrent": 1,
			"externalization": map[string]bool{
				"enabled":                jm.cfg.retention != retainNever,
				"delete_on_cancellation": jm.cfg.retention != retainOnCancel,
			},
			"state_backend": jm.cfg.stateBackend, "checkpoint_storage": storage,
			"unaligned_checkpoints": false, "tolerable_failed_checkpoints": 0, "aligned_checkpoint_timeout": 0,
			"checkpoints_after_tasks_finish": true, "state_changelog_enabled": false,
			"changelog_periodic_materialization_interval": 600000, "changelog_storage": "memory",
		})
	})
}

func (jm *JobManager) handleCheckpointDetails(rc *reqCtx) response {
	return jm.withJob(rc, func(j *job) response {
		if !j.hasGraph() {
			return restError(http.StatusNotFound, classRestHandler, "Checkpointing was not enabled for job "+j.id+".", nil)
		}
		id, _ := strconv.ParseInt(rc.params["checkpointid"], 10, 64)
		c, now := jm.checkpointStatsOf(j, rc.now)
		for _, e := range append(append([]*checkpointEntry{}, c.history...), c.latestCompleted, c.latestSavepoint, c.lastFail) {
			if e != nil && e.id == id {
				return respondOK(jm.checkpointJSON(j, e, now, true))
			}
		}
		return restError(http.StatusNotFound, classRestHandler,
			"Could not find checkpointing statistics for checkpoint "+rc.params["checkpointid"]+".", nil)
	})
}

func (jm *JobManager) handleCheckpointTrigger(rc *reqCtx) response {
	var body struct {
		CheckpointType *string `json:"checkpointType"`
		TriggerID      *string `json:"triggerId"`
	}
	if bad := jm.decodeRequest(classCheckpointTrigger, rc.body, &body); bad != nil {
		return *bad
	}
	triggerID, bad := parseTriggerID(body.TriggerID, "CheckpointTriggerRequestBody")
	if bad != nil {
		return *bad
	}
	if body.CheckpointType != nil {
		switch *body.CheckpointType {
		case "CONFIGURED", "FULL":
		case "INCREMENTAL":
			return internalError(newThrowable(classIllegalState,
				"Flink does not support triggering incremental checkpoint explicitly. See FLINK-33723.", nil))
		default:
			return badRequestFormat("CheckpointTriggerRequestBody", errInvalidEnum("checkpointType", *body.CheckpointType))
		}
	}
	id := jm.triggerCheckpoint(rc.now, rc.params["jobid"], triggerID)
	return respondAccepted(map[string]string{"request-id": id})
}

func (jm *JobManager) handleCheckpointStatus(rc *reqCtx) response {
	op := jm.findOperation(opCheckpoint, rc.params["jobid"], rc.params["triggerid"])
	if op == nil {
		return restError(http.StatusNotFound, classNotFound, "There is no checkpoint operation with triggerId="+
			rc.params["triggerid"]+" for job "+rc.params["jobid"]+".", nil)
	}
	if !op.done {
		return inProgress()
	}
	if op.failure != nil {
		return completed(map[string]any{"failureCause": op.failure.serialized()})
	}
	return completed(map[string]any{"checkpointId": op.checkpointID})
}

func inProgress() response {
	return respondOK(map[string]any{"status": map[string]string{"id": "IN_PROGRESS"}, "operation": nil})
}

func completed(operation map[string]any) response {
	return respondOK(map[string]any{"status": map[string]string{"id": "COMPLETED"}, "operation": operation})
}

// statsCopy is a job's checkpoint statistics as Flink's REST handlers answer them: a copy taken at
// most Timings.JobCacheTTL ago (CheckpointStatsSnapshot, cached per job for
// rest.cache.checkpoint-statistics.timeout, by default web.refresh-interval). /checkpoints and
// /checkpoints/details/:id read the same copy, so a checkpoint completed since is in neither.
type statsCopy struct {
	job   *job
	at    time.Time
	stats checkpointStats
}

// checkpointStatsOf is the statistics the job's checkpoint handlers answer now, and the time they
// are of: the job's own while there is no cache.
func (jm *JobManager) checkpointStatsOf(j *job, now time.Time) (*checkpointStats, time.Time) {
	ttl := jm.timings.JobCacheTTL
	if ttl <= 0 {
		return &j.ckpt, now
	}
	if c, ok := jm.statsCopies[j.id]; ok && c.job == j && now.Sub(c.at) < ttl {
		return &c.stats, c.at
	}
	for id, c := range jm.statsCopies {
		if now.Sub(c.at) >= ttl {
			delete(jm.statsCopies, id)
		}
	}
	c := &statsCopy{job: j, at: now, stats: j.ckpt.copy()}
	jm.statsCopies[j.id] = c
	return &c.stats, now
}

// copy is a deep copy of what the statistics show: the entries, which change as checkpoints
// complete, are copied once each, so that the latest ones are still among the history's.
func (c *checkpointStats) copy() checkpointStats {
	out := *c
	copies := map[*checkpointEntry]*checkpointEntry{}
	of := func(e *checkpointEntry) *checkpointEntry {
		if e == nil {
			return nil
		}
		if d, ok := copies[e]; ok {
			return d
		}
		d := *e
		copies[e] = &d
		return &d
	}
	out.history = make([]*checkpointEntry, len(c.history))
	for i, e := range c.history {
		out.history[i] = of(e)
	}
	out.latestCompleted, out.latestSavepoint, out.lastFail = of(c.latestCompleted), of(c.latestSavepoint), of(c.lastFail)
	out.retained, out.pendingPeriodic = nil, nil // not shown
	if c.restored != nil {
		r := *c.restored
		out.restored = &r
	}
	return out
}
