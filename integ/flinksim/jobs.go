package flinksim

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"time"
)

// Job states (JobStatus) in Flink's declaration order.
const (
	stateInitializing = "INITIALIZING"
	stateCreated      = "CREATED"
	stateRunning      = "RUNNING"
	stateFailing      = "FAILING"
	stateFailed       = "FAILED"
	stateCancelling   = "CANCELLING"
	stateCanceled     = "CANCELED"
	stateFinished     = "FINISHED"
	stateRestarting   = "RESTARTING"
	stateSuspended    = "SUSPENDED"
	stateReconciling  = "RECONCILING"
)

var jobStates = []string{
	stateInitializing, stateCreated, stateRunning, stateFailing, stateFailed, stateCancelling,
	stateCanceled, stateFinished, stateRestarting, stateSuspended, stateReconciling,
}

func isGloballyTerminal(s string) bool {
	return s == stateFinished || s == stateCanceled || s == stateFailed
}

// job is one submitted job and everything the REST API reports about it.
type job struct {
	id, name, jarID, entryClass string
	parallelism                 int // as submitted; the ExecutionConfig's job parallelism
	// The vertices, source first: the default two (vertices.go), or those of the Load the
	// JobManager had when the job was submitted (load is then set).
	vertexIDs    []string
	vertexNames  []string
	vertexInputs [][]int // for each vertex, the vertices it reads from
	load         *loadSpec
	// vertexParallelism is what each vertex runs with now. The DefaultScheduler
	// keeps the submitted parallelism; the adaptive scheduler picks it from the
	// slots it gets, within bounds.
	vertexParallelism []int
	maxParallelism    int // fixed at submission, as Flink keeps it across rescales
	bounds            []parallelismBounds
	slotSharingGroup  string
	userConfig        map[string]string
	applicationID     string // 2.3+: the application the job belongs to

	state       string
	stateTimes  map[string]time.Time // last entry into each state
	submittedAt time.Time
	lastChange  time.Time
	endedAt     time.Time // globally terminal
	expiresAt   time.Time // dropped from the job store

	restorePath     string    // savepointPath from the run request
	args            []string  // the arguments main() got
	recovered       *recovery // set when an HA JobManager recovered the job
	cancelRequested bool      // PATCH arrived while INITIALIZING
	initFailure     *throwable

	hasSlots        bool
	deployedAt      time.Time
	waitingForSlots time.Time
	firstRunningAt  time.Time
	failAfter       time.Duration // FailJobsAfter fault captured at submission
	restartEvery    time.Duration // RestartJobsEvery fault captured at submission
	failingUntil    time.Time
	cancelUntil     time.Time
	restartAt       time.Time
	restarts        int // failovers, which the restart strategy counts
	rescales        int // in-place restarts of the adaptive scheduler
	rescaleHistory  []rescaleRecord
	adaptive        adaptiveState

	exceptions []exceptionEntry
	rootCause  *exceptionEntry
	ckpt       checkpointStats

	timelineHandle int
}

// submitRequest is a parsed /jars/:jarid/run (or what run-application's main() submits).
type submitRequest struct {
	jarID, entryClass, jobID, savepointPath string
	parallelism                             int
	args                                    []string
	userConfig                              map[string]string
	// applicationID is the application the job belongs to (2.3+); "" before 2.3.
	applicationID string
}

// pendingSubmit is a submission the Dispatcher accepted but has not yet
// registered (Faults.SubmitRegistersAfter), or the job of an application HA
// runs again, not yet submitted by its main() (rec set).
type pendingSubmit struct {
	req submitRequest
	at  time.Time
	rec *recovery
}

func (jm *JobManager) register(p *pendingSubmit, at time.Time) {
	for i, x := range jm.pending {
		if x == p {
			jm.pending = append(jm.pending[:i], jm.pending[i+1:]...)
			break
		}
	}
	jm.submit(at, p.req, p.rec)
}

// submit registers a job as INITIALIZING, like the Dispatcher accepting a
// JobGraph. rec is nil for a new submission, which an HA cluster persists.
func (jm *JobManager) submit(now time.Time, req submitRequest, rec *recovery) *job {
	name := jm.jobName(req)
	// Vertex ids hash the program, as Flink's are stable for an unchanged JobGraph.
	program := req.jarID + "/" + req.entryClass
	faults := jm.currentFaults()
	p := req.parallelism
	j := &job{
		id: req.jobID, name: name, jarID: req.jarID, entryClass: req.entryClass,
		parallelism:      p,
		maxParallelism:   maxParallelismFor(p),
		slotSharingGroup: randomHex(32),
		userConfig:       req.userConfig,
		applicationID:    req.applicationID,
		stateTimes:       map[string]time.Time{},
		submittedAt:      now,
		restorePath:      req.savepointPath,
		args:             req.args,
		recovered:        rec,
		failAfter:        faults.FailJobsAfter,
		restartEvery:     faults.RestartJobsEvery,
		timelineHandle:   -1,
	}
	j.setVertices(program, jm.currentLoad())
	j.ckpt.nextID = 1
	if jm.haKey != "" && rec == nil {
		jm.storage.haSubmitted(jm.haKey, req)
	}
	if jm.timeline != nil {
		resumed := false
		if rec != nil {
			j.timelineHandle, resumed = jm.timeline.resume(jm.appKey, j.id, jm.name)
		}
		if !resumed {
			r := JobRecord{AppKey: jm.appKey, JobManager: jm.name, JobID: j.id,
				RestoredFrom: req.savepointPath, Parallelism: j.parallelism}
			if rec != nil {
				r.RerunOf = rec.rerunOf
			}
			j.timelineHandle = jm.timeline.register(r)
		}
	}
	jm.jobs = append(jm.jobs, j)
	jm.attachJob(j, now)
	jm.setState(j, stateInitializing, now)
	return j
}

func stableHex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// jobEvent returns the job's next due transition, if any.
func (jm *JobManager) jobEvent(j *job) (time.Time, func(time.Time)) {
	t := jm.timings
	switch j.state {
	case stateInitializing:
		return j.submittedAt.Add(t.Initialize), func(at time.Time) { jm.finishInitialization(j, at) }
	case stateCreated:
		if jm.cfg.adaptive.enabled {
			return jm.waitingForResourcesEvent(j)
		}
		return j.stateTimes[stateCreated].Add(t.Schedule), func(at time.Time) {
			jm.setState(j, stateRunning, at)
			j.waitingForSlots = at
			jm.allocateSlots(at)
		}
	case stateRunning:
		return jm.runningEvent(j)
	case stateRestarting:
		return j.restartAt, func(at time.Time) { jm.restart(j, at) }
	case stateFailing:
		return j.failingUntil, func(at time.Time) { jm.setState(j, stateFailed, at) }
	case stateCancelling:
		return j.cancelUntil, func(at time.Time) { jm.setState(j, stateCanceled, at) }
	case stateFinished, stateCanceled, stateFailed:
		return j.expiresAt, func(time.Time) { jm.removeJob(j) }
	}
	return time.Time{}, nil
}

// runningEvent picks the earliest of: injected failures, slot request timeout,
// a due rescale, checkpoint progress.
func (jm *JobManager) runningEvent(j *job) (time.Time, func(time.Time)) {
	var best time.Time
	var fire func(time.Time)
	consider := func(at time.Time, f func(time.Time)) {
		if f != nil && (fire == nil || at.Before(best)) {
			best, fire = at, f
		}
	}
	if j.failAfter > 0 && !j.firstRunningAt.IsZero() {
		consider(j.firstRunningAt.Add(j.failAfter), func(at time.Time) {
			jm.failJob(j, at, injectedFailure(j))
		})
	}
	if j.restartEvery > 0 && j.hasSlots {
		consider(j.deployedAt.Add(j.restartEvery), func(at time.Time) {
			jm.failTasks(j, at, injectedFailure(j))
		})
	}
	if !j.hasSlots {
		consider(j.waitingForSlots.Add(jm.cfg.slotRequestTimeout), func(at time.Time) {
			jm.failTasks(j, at, noResources(jm.cfg.slotRequestTimeout))
		})
	}
	consider(jm.rescaleEvent(j))
	consider(jm.checkpointEvent(j))
	return best, fire
}

func (jm *JobManager) finishInitialization(j *job, at time.Time) {
	switch {
	case j.recovered != nil && j.recovered.checkpoint != nil:
		c := j.recovered.checkpoint
		if _, ok := jm.storage.get(c.path); !ok && c.path != noCheckpointPath {
			jm.failRestore(j, at, c.path)
			return
		}
		jm.recoverRetained(j, j.id, j.recovered.rerunOf)
		jm.restoreFrom(j, at, c.id, false, c.path)
	case j.restorePath != "":
		snap, ok := jm.storage.get(j.restorePath)
		if !ok {
			jm.failRestore(j, at, j.restorePath)
			return
		}
		// Flink loads whatever a submission's savepoint path names as a savepoint, a retained
		// checkpoint included: its restore statistics say is_savepoint (real 2.3.0 does).
		jm.restoreFrom(j, at, snap.CheckpointID, true, snap.Path)
	}
	jm.setState(j, stateCreated, at)
	if j.cancelRequested {
		jm.cancel(j, at)
	}
}

// failRestore fails a job whose snapshot is missing: the JobMaster cannot start.
func (jm *JobManager) failRestore(j *job, at time.Time, path string) {
	j.initFailure = restoreNotFound(path)
	jm.recordException(j, at, exceptionEntry{failure: j.initFailure})
	jm.setState(j, stateFailed, at)
}

// deploy gives a RUNNING job its slots: all tasks become RUNNING.
func (jm *JobManager) deploy(j *job, at time.Time) {
	j.hasSlots = true
	j.deployedAt = at
	j.ckpt.nextPeriodic = time.Time{}
	if jm.checkpointInterval(j) > 0 {
		j.ckpt.nextPeriodic = at.Add(jm.checkpointInterval(j))
	}
}

// setState moves a job and applies what every transition implies.
func (jm *JobManager) setState(j *job, state string, at time.Time) {
	if isGloballyTerminal(j.state) {
		return
	}
	j.state = state
	j.stateTimes[state] = at
	j.lastChange = at
	if state == stateRunning && j.firstRunningAt.IsZero() {
		j.firstRunningAt = at
	}
	if j.timelineHandle >= 0 {
		jm.timeline.recordState(j.timelineHandle, state, at)
	}
	if !isGloballyTerminal(state) {
		return
	}
	j.endedAt = at
	j.expiresAt = at.Add(jm.cfg.jobStoreTTL)
	jm.resultStore[j.id] = true
	if jm.haKey != "" {
		jm.storage.haFinished(jm.haKey, j.id)
	}
	jm.abortCheckpoints(j, at, checkpointDeclined("Checkpoint Coordinator is suspending."))
	jm.failPendingOperations(j, at)
	jm.discardCheckpoints(j, state)
	j.hasSlots = false
	jm.jobEnded(j, at)
	jm.allocateSlots(at)
}

// cancel starts cancellation; the job reaches CANCELED after Timings.Cancel, or
// at once when no task was deployed.
func (jm *JobManager) cancel(j *job, at time.Time) {
	switch j.state {
	case stateInitializing:
		j.cancelRequested = true
		return
	case stateCancelling, stateCanceled, stateFinished, stateFailed:
		return
	}
	deployed := j.hasSlots
	jm.abortCheckpoints(j, at, checkpointDeclined("Checkpoint Coordinator is suspending."))
	jm.failPendingOperations(j, at)
	jm.setState(j, stateCancelling, at)
	if !deployed {
		jm.setState(j, stateCanceled, at)
		return
	}
	j.cancelUntil = at.Add(jm.timings.Cancel)
}

// failJob is an unrecoverable failure: FAILING now, FAILED after Timings.Fail.
func (jm *JobManager) failJob(j *job, at time.Time, cause *throwable) {
	if isGloballyTerminal(j.state) || j.state == stateFailing || j.state == stateCancelling {
		return
	}
	if cause.class != classJobException {
		cause = recoverySuppressed(cause, jm.cfg.restartEnabled)
	}
	jm.recordException(j, at, exceptionEntry{failure: cause, taskName: sourceTaskName(j), tm: jm.taskManagerID(1)})
	jm.abortCheckpoints(j, at, checkpointDeclined("Checkpoint Coordinator is suspending."))
	jm.failPendingOperations(j, at)
	jm.setState(j, stateFailing, at)
	j.failingUntil = at.Add(jm.timings.Fail)
}

// failTasks is a task failure handled by the restart strategy: RESTARTING if it
// allows another attempt, otherwise FAILING.
func (jm *JobManager) failTasks(j *job, at time.Time, cause *throwable) {
	switch j.state {
	case stateRunning, stateCreated:
	default:
		// A job already cancelling or failing only loses its slots.
		j.hasSlots = false
		return
	}
	attempts := jm.cfg.restartAttempts
	if !jm.cfg.restartEnabled || (attempts > 0 && j.restarts >= attempts) {
		j.hasSlots = false
		jm.failJob(j, at, recoverySuppressed(cause, jm.cfg.restartEnabled))
		return
	}
	jm.recordException(j, at, exceptionEntry{failure: cause, taskName: sourceTaskName(j), tm: jm.taskManagerID(1)})
	jm.abortCheckpoints(j, at, checkpointDeclined("Checkpoint Coordinator is suspending."))
	jm.failPendingOperations(j, at)
	j.hasSlots = false
	j.restarts++
	j.adaptive.rescaleAt = time.Time{}
	jm.setState(j, stateRestarting, at)
	delay := jm.cfg.restartDelay
	if delay == 0 {
		delay = jm.timings.Restart
	}
	j.restartAt = at.Add(delay)
	jm.allocateSlots(at)
}

// restart brings a job back to RUNNING, restoring the latest completed
// checkpoint. The adaptive scheduler goes through CREATED first, while it
// waits for resources and decides the new parallelism.
func (jm *JobManager) restart(j *job, at time.Time) {
	if c := j.ckpt.latestCompleted; c != nil && !c.discarded {
		jm.restoreFrom(j, at, c.id, false, c.externalPath)
	} else if r := j.ckpt.restored; r != nil {
		jm.restoreFrom(j, at, r.id, r.isSavepoint, r.externalPath)
	}
	if jm.cfg.adaptive.enabled {
		j.adaptive = adaptiveState{}
		jm.setState(j, stateCreated, at)
		return
	}
	jm.setState(j, stateRunning, at)
	j.waitingForSlots = at
	jm.allocateSlots(at)
}

func (jm *JobManager) removeJob(j *job) {
	jm.applicationGone(j)
	for i, x := range jm.jobs {
		if x == j {
			jm.jobs = append(jm.jobs[:i], jm.jobs[i+1:]...)
			return
		}
	}
}

// FailJobNow fails a job unrecoverably, as if its restart strategy were
// exhausted: FAILING now, FAILED shortly after. It reports whether the job was
// found alive.
func (jm *JobManager) FailJobNow(jobID string) bool {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	now := jm.advance()
	j := jm.job(jobID)
	if j == nil || isGloballyTerminal(j.state) || j.state == stateInitializing {
		return false
	}
	jm.failJob(j, now, injectedFailure(j))
	return true
}

// FailTasksNow fails a job's tasks once; the restart strategy decides between
// RESTARTING (restoring the latest checkpoint) and FAILED.
func (jm *JobManager) FailTasksNow(jobID string) bool {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	now := jm.advance()
	j := jm.job(jobID)
	if j == nil || (j.state != stateRunning && j.state != stateCreated) {
		return false
	}
	jm.failTasks(j, now, injectedFailure(j))
	return true
}

func sourceTaskName(j *job) string {
	return j.vertexNames[0] + " (1/" + strconv.Itoa(j.vertexParallelism[0]) + ")"
}

func itoa(i int) string { return strconv.Itoa(i) }
