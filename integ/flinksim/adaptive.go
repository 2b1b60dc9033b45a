package flinksim

import (
	"slices"
	"time"
)

// The adaptive scheduler (jobmanager.scheduler: adaptive) as Flink 1.20 runs a
// streaming job: it reports CREATED while it waits for slots, runs each vertex
// with as many slots as it gets within the vertex's resource requirements, and
// restarts the job in place (same job id, RESTARTING → CREATED → RUNNING,
// restoring the latest checkpoint) when the requirements or the slots change.

// parallelismBounds is one vertex's entry of the job's resource requirements.
type parallelismBounds struct{ lower, upper int }

// adaptiveState is where a job stands in the adaptive scheduler's
// WaitingForResources and Executing states; it is cleared on every restart.
type adaptiveState struct {
	// waiting is set once the ExecutionGraph would have been created and the
	// job waits for slots (WaitingForResources).
	waiting      bool
	waitingSince time.Time
	// sufficientSince is when enough slots for every lower bound, but not
	// for every upper bound, became free; zero while there are fewer.
	sufficientSince time.Time
	// rescaleAt is when a running job looks at its parallelism again after
	// new requirements or new slots; zero when nothing is pending.
	rescaleAt time.Time
	// rescaleCause is what asked for that look (2.3's rescale history).
	rescaleCause string
}

// vertexLower and vertexUpper are a vertex's parallelism bounds.
func (j *job) vertexLower(v int) int { return j.bounds[v].lower }
func (j *job) vertexUpper(v int) int { return j.bounds[v].upper }

// desiredSlots are the slots the job runs with when every vertex reaches its upper bound.
func (j *job) desiredSlots() int {
	n := 0
	for _, b := range j.bounds {
		n = max(n, b.upper)
	}
	return n
}

// minimumSlots are the slots without which the job cannot run at all.
func (j *job) minimumSlots() int {
	n := 1
	for _, b := range j.bounds {
		n = max(n, b.lower)
	}
	return n
}

// targetParallelism is the parallelism the job would get from available
// slots; ok is false when some vertex would fall below its lower bound.
func (j *job) targetParallelism(available int) (p []int, ok bool) {
	p = make([]int, len(j.bounds))
	for v, b := range j.bounds {
		p[v] = min(b.upper, available)
		if p[v] < max(b.lower, 1) {
			return p, false
		}
	}
	return p, true
}

// worthRescaling is Flink's EnforceMinimalIncreaseRescalingController: any
// vertex losing parallelism, or any vertex gaining min-parallelism-increase.
func (jm *JobManager) worthRescaling(j *job, target []int) bool {
	for v := range target {
		change := target[v] - j.vertexParallelism[v]
		if change < 0 || change >= jm.cfg.adaptive.minIncrease {
			return true
		}
	}
	return false
}

// waitingForResourcesEvent drives a CREATED job: first the time it takes to
// create the ExecutionGraph, then the resource stabilization and resource
// wait timeouts. Slots arriving in between are handled by offerSlots.
func (jm *JobManager) waitingForResourcesEvent(j *job) (time.Time, func(time.Time)) {
	a := &j.adaptive
	if !a.waiting {
		return j.stateTimes[stateCreated].Add(jm.timings.Schedule), func(at time.Time) {
			a.waiting, a.waitingSince = true, at
			jm.allocateSlots(at)
		}
	}
	var best time.Time
	var fire func(time.Time)
	consider := func(at time.Time, f func(time.Time)) {
		if fire == nil || at.Before(best) {
			best, fire = at, f
		}
	}
	cfg := jm.cfg.adaptive
	if !a.sufficientSince.IsZero() {
		consider(a.sufficientSince.Add(cfg.stabilization), func(at time.Time) { jm.runWithFreeSlots(j, at, false) })
	}
	if cfg.resourceWait >= 0 {
		consider(a.waitingSince.Add(cfg.resourceWait), func(at time.Time) { jm.runWithFreeSlots(j, at, true) })
	}
	return best, fire
}

// offerSlots is the adaptive scheduler's answer to free slots, returning the
// slots still free afterwards. A waiting job starts at once when it can reach
// every upper bound and otherwise starts the stabilization clock; a running
// job considers a rescale.
func (jm *JobManager) offerSlots(j *job, now time.Time, free int) int {
	a := &j.adaptive
	switch {
	case j.state == stateCreated && a.waiting:
		switch {
		case free >= j.desiredSlots():
			jm.runWith(j, now, free)
			return free - j.slots()
		case free >= j.minimumSlots():
			if a.sufficientSince.IsZero() {
				a.sufficientSince = now
			}
		default:
			a.sufficientSince = time.Time{}
		}
	case j.state == stateRunning && j.hasSlots:
		if target, ok := j.targetParallelism(free + j.slots()); ok && jm.worthRescaling(j, target) {
			jm.requestRescale(j, now, causeNewResources)
		}
	}
	return free
}

// runWithFreeSlots ends the wait for resources. Without enough slots for the
// lower bounds the job keeps waiting, or fails once orFail says the resource
// wait timeout passed.
func (jm *JobManager) runWithFreeSlots(j *job, at time.Time, orFail bool) {
	free := jm.totalSlots() - jm.usedSlots()
	if _, ok := j.targetParallelism(free); ok {
		jm.runWith(j, at, free)
		return
	}
	if !orFail {
		j.adaptive.sufficientSince = time.Time{}
		return
	}
	jm.recordException(j, at, exceptionEntry{failure: notEnoughResources()})
	jm.setState(j, stateFailed, at)
}

// runWith deploys a waiting job with the parallelism the available slots allow.
func (jm *JobManager) runWith(j *job, at time.Time, available int) {
	j.vertexParallelism, _ = j.targetParallelism(available)
	j.adaptive = adaptiveState{}
	jm.rescaleEnded(j, at)
	jm.setState(j, stateRunning, at)
	jm.deploy(j, at)
}

// requestRescale schedules a look at a running job's parallelism: now, or,
// within scaling-interval.min of the job starting to run, that long from now
// (Flink resets the cooldown rather than waiting out the rest of it).
func (jm *JobManager) requestRescale(j *job, now time.Time, cause string) {
	a := &j.adaptive
	if !a.rescaleAt.IsZero() {
		return
	}
	a.rescaleAt, a.rescaleCause = now, cause
	if now.Sub(j.deployedAt) <= jm.cfg.adaptive.cooldown {
		a.rescaleAt = now.Add(jm.cfg.adaptive.cooldown)
	}
}

// rescaleEvent restarts a running job in place when a pending look at its
// parallelism finds a different one worth the restart.
func (jm *JobManager) rescaleEvent(j *job) (time.Time, func(time.Time)) {
	if j.adaptive.rescaleAt.IsZero() || !j.hasSlots {
		return time.Time{}, nil
	}
	return j.adaptive.rescaleAt, func(at time.Time) {
		j.adaptive.rescaleAt = time.Time{}
		free := jm.totalSlots() - jm.usedSlots()
		if target, ok := j.targetParallelism(free + j.slots()); ok && jm.worthRescaling(j, target) {
			jm.rescale(j, at)
		}
	}
}

// rescale cancels the tasks without a backoff; restart then brings the job
// back through CREATED with the parallelism the slots allow. It is not a
// failure: no exception is recorded and the restart strategy is not consulted.
func (jm *JobManager) rescale(j *job, at time.Time) {
	jm.abortCheckpoints(j, at, checkpointDeclined("Checkpoint Coordinator is suspending."))
	jm.failPendingOperations(j, at)
	j.hasSlots = false
	j.rescales++
	jm.rescaleStarted(j, at, j.adaptive.rescaleCause)
	j.adaptive = adaptiveState{}
	jm.setState(j, stateRestarting, at)
	j.restartAt = at.Add(jm.timings.Cancel)
	jm.allocateSlots(at)
}

// updateRequirements applies PUT /jobs/:id/resource-requirements. Unchanged
// requirements change nothing, as in Flink.
func (jm *JobManager) updateRequirements(j *job, at time.Time, bounds []parallelismBounds) {
	if slices.Equal(bounds, j.bounds) {
		return
	}
	j.bounds = bounds
	switch {
	case j.state == stateRunning && j.hasSlots:
		jm.requestRescale(j, at, causeUpdateRequirement)
	case j.state == stateCreated && j.adaptive.waiting:
		jm.allocateSlots(at)
	}
}

func notEnoughResources() *throwable {
	return newThrowable("org.apache.flink.runtime.jobmanager.scheduler.NoResourceAvailableException",
		"Not enough resources available for scheduling.", nil)
}
