package flinksim

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Flink 2.3's rescale endpoints (FLIP-487/495): the adaptive scheduler's settings, and, with
// web.adaptive-scheduler.rescale-history.size above 0 (default 0, off), the history of a job's
// rescales. The simulator records its in-place rescales (those a new resource requirement or new
// slots start); Flink also records the initial scheduling and failover restarts, which are left out.

// Rescale trigger causes and outcomes, as Flink spells them.
const (
	causeUpdateRequirement = "UPDATE_REQUIREMENT"
	causeNewResources      = "NEW_RESOURCE_AVAILABLE"
)

// rescaleRecord is one rescale of a job.
type rescaleRecord struct {
	uuid, requirementsUUID string
	attempt                int64
	cause                  string
	start, end             time.Time // end is zero while it is in progress
	pre, post              []int     // each vertex's parallelism before and after
}

// rescaleHistorySize is web.adaptive-scheduler.rescale-history.size: 0 keeps no history.
func (jm *JobManager) rescaleHistorySize() int {
	n, _ := strconv.Atoi(strings.TrimSpace(jm.cfg.raw["web.adaptive-scheduler.rescale-history.size"]))
	return max(n, 0)
}

// rescaleStarted records an in-place rescale as it begins.
func (jm *JobManager) rescaleStarted(j *job, at time.Time, cause string) {
	size := jm.rescaleHistorySize()
	if size == 0 || !hasApplications(jm.flinkVersion) {
		return
	}
	if cause == "" {
		cause = causeNewResources
	}
	r := rescaleRecord{uuid: randomHex(32), requirementsUUID: randomHex(32), attempt: int64(len(j.rescaleHistory) + 1),
		cause: cause, start: at, pre: append([]int(nil), j.vertexParallelism...)}
	j.rescaleHistory = append(j.rescaleHistory, r)
	if len(j.rescaleHistory) > size {
		j.rescaleHistory = j.rescaleHistory[len(j.rescaleHistory)-size:]
	}
}

// rescaleEnded completes the rescale in progress once the job runs again.
func (jm *JobManager) rescaleEnded(j *job, at time.Time) {
	if n := len(j.rescaleHistory); n > 0 && j.rescaleHistory[n-1].end.IsZero() {
		r := &j.rescaleHistory[n-1]
		r.end, r.post = at, append([]int(nil), j.vertexParallelism...)
	}
}

// withRescales answers for a job whose rescales are recorded, or Flink's 404 when they are not.
func (jm *JobManager) withRescales(rc *reqCtx, f func(j *job) response) response {
	if missing := jm.notYet(rc, 2, 3); missing != nil {
		return *missing
	}
	return jm.withJob(rc, func(j *job) response {
		if !jm.cfg.adaptive.enabled || jm.rescaleHistorySize() == 0 {
			return restError(http.StatusNotFound, "org.apache.flink.runtime.rest.handler.job.rescales.RescalesUnavailableException",
				"The job `"+j.id+"` has not enabled the `Adaptive` scheduler, or it has been enabled but the value of configuration option "+
					"`web.adaptive-scheduler.rescale-history.size` has not been set to greater than `0`.", nil)
		}
		return f(j)
	})
}

func (jm *JobManager) handleRescaleConfig(rc *reqCtx) response {
	if missing := jm.notYet(rc, 2, 3); missing != nil {
		return *missing
	}
	return jm.withJob(rc, func(j *job) response {
		if !jm.cfg.adaptive.enabled {
			return restError(http.StatusNotFound, classRestHandler, "AdaptiveScheduler is not enabled for this job ("+j.id+").", nil)
		}
		ms := func(d time.Duration) int64 { return d.Milliseconds() }
		a := jm.cfg.adaptive
		wait := ms(a.resourceWait)
		if a.resourceWait < 0 {
			wait = -1
		}
		var mode any // null unless reactive
		if strings.EqualFold(strings.TrimSpace(jm.cfg.raw["scheduler-mode"]), "reactive") {
			mode = "REACTIVE"
		}
		var maxDelay int64 // rescale-trigger.max-delay: checkpoints missed before a rescale is forced, else at once
		if jm.cfg.checkpointInterval > 0 {
			maxDelay = 3 * ms(jm.cfg.checkpointInterval)
		}
		return respondOK(map[string]any{
			"rescaleHistoryMax":                              jm.rescaleHistorySize(),
			"schedulerExecutionMode":                         mode,
			"submissionResourceWaitTimeoutInMillis":          wait,
			"submissionResourceStabilizationTimeoutInMillis": ms(a.stabilization),
			"slotIdleTimeoutInMillis":                        int64(50000),
			"executingCooldownTimeoutInMillis":               ms(a.cooldown),
			"executingResourceStabilizationTimeoutInMillis":  int64(60000),
			"maximumDelayForTriggeringRescaleInMillis":       maxDelay,
			"rescaleOnFailedCheckpointCount":                 2,
		})
	})
}

func (jm *JobManager) handleRescalesOverview(rc *reqCtx) response {
	return jm.withRescales(rc, func(j *job) response {
		var latest *rescaleRecord
		for i := range j.rescaleHistory {
			if !j.rescaleHistory[i].end.IsZero() {
				latest = &j.rescaleHistory[i]
			}
		}
		body := map[string]any{"rescalesCounts": rescaleCounts(j), "latest": map[string]any{"completed": nil, "failed": nil, "ignored": nil}}
		if latest != nil {
			body["latest"].(map[string]any)["completed"] = jm.rescaleDetails(j, *latest, false)
		}
		return respondOK(body)
	})
}

func (jm *JobManager) handleRescalesHistory(rc *reqCtx) response {
	return jm.withRescales(rc, func(j *job) response {
		out := []any{}
		for i := len(j.rescaleHistory) - 1; i >= 0; i-- {
			out = append(out, jm.rescaleDetails(j, j.rescaleHistory[i], false))
		}
		return respondOK(out)
	})
}

func (jm *JobManager) handleRescalesSummary(rc *reqCtx) response {
	return jm.withRescales(rc, func(j *job) response {
		var done summary
		for _, r := range j.rescaleHistory {
			if !r.end.IsZero() {
				done.add(r.end.Sub(r.start).Milliseconds())
			}
		}
		return respondOK(map[string]any{
			"rescalesCounts":                         rescaleCounts(j),
			"rescalesDurationStatsInMillis":          statsSummary(done),
			"completedRescalesDurationStatsInMillis": statsSummary(done),
			"failedRescalesDurationStatsInMillis":    statsSummary(summary{}),
			"ignoredRescalesDurationStatsInMillis":   statsSummary(summary{}),
		})
	})
}

func (jm *JobManager) handleRescaleDetails(rc *reqCtx) response {
	return jm.withRescales(rc, func(j *job) response {
		id := rc.params["rescaleuuid"]
		for _, r := range j.rescaleHistory {
			if r.uuid == id {
				return respondOK(jm.rescaleDetails(j, r, true))
			}
		}
		return restError(http.StatusNotFound, classRestHandler, "Could not find rescale details of specified rescaleUuid "+id+".", nil)
	})
}

func rescaleCounts(j *job) map[string]int64 {
	var done, running int64
	for _, r := range j.rescaleHistory {
		if r.end.IsZero() {
			running++
		} else {
			done++
		}
	}
	return map[string]int64{"completed": done, "failed": 0, "ignored": 0, "inProgress": running}
}

// rescaleDetails is JobRescaleDetails; the per-vertex, per-slot-sharing-group and scheduler-state
// parts only in a rescale's own details, as in Flink.
func (jm *JobManager) rescaleDetails(j *job, r rescaleRecord, detailed bool) map[string]any {
	var end, terminal, reason any
	if !r.end.IsZero() {
		end, terminal, reason = r.end.UnixMilli(), "COMPLETED", "SUCCEEDED"
	}
	vertices, slots, states := map[string]any{}, map[string]any{}, []any{}
	if detailed {
		pre, post := slices0(r.pre), slices0(r.post)
		for i, id := range j.vertexIDs {
			v := map[string]any{
				"jobVertexId": id, "jobVertexName": j.vertexNames[i], "slotSharingGroupId": j.slotSharingGroup,
				"slotSharingGroupName": "default", "preRescaleParallelism": nth(pre, i), "postRescaleParallelism": nil,
				"desiredParallelism": j.vertexUpper(i), "sufficientParallelism": j.vertexLower(i),
				"requiredParallelisms": map[string]any{"minParallelism": j.vertexLower(i), "parallelism": j.vertexUpper(i), "maxParallelism": j.maxParallelism},
			}
			if post != nil {
				v["postRescaleParallelism"] = nth(post, i)
			}
			vertices[id] = v
		}
		profile := resourceProfile(1)
		slots[j.slotSharingGroup] = map[string]any{
			"slotSharingGroupId": j.slotSharingGroup, "slotSharingGroupName": "default",
			"preRescaleSlots": maxOf(pre), "postRescaleSlots": maxOf(post), "desiredSlots": maxUpper(j),
			"minimalRequiredSlots": maxLower(j), "requestResourceProfile": profile, "acquiredResourceProfile": profile,
		}
		if !r.end.IsZero() {
			states = append(states, map[string]any{"state": "Restarting", "enterTimestampInMillis": r.start.UnixMilli(),
				"leaveTimestampInMillis": r.end.UnixMilli(), "durationInMillis": r.end.Sub(r.start).Milliseconds(), "stringifiedException": nil})
		}
	}
	return map[string]any{
		"rescaleUuid": r.uuid, "resourceRequirementsUuid": r.requirementsUUID, "rescaleAttemptId": r.attempt,
		"vertices": vertices, "slots": slots, "schedulerStates": states,
		"startTimestampInMillis": r.start.UnixMilli(), "endTimestampInMillis": end,
		"terminalState": terminal, "triggerCause": r.cause, "terminatedReason": reason,
	}
}

func slices0(s []int) []int {
	if len(s) == 0 {
		return nil
	}
	return s
}

func nth(s []int, i int) any {
	if i < len(s) {
		return s[i]
	}
	return nil
}

func maxOf(s []int) any {
	if len(s) == 0 {
		return nil
	}
	m := 0
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

func maxUpper(j *job) int {
	m := 0
	for i := range j.vertexIDs {
		m = max(m, j.vertexUpper(i))
	}
	return m
}

func maxLower(j *job) int {
	m := 0
	for i := range j.vertexIDs {
		m = max(m, j.vertexLower(i))
	}
	return m
}
