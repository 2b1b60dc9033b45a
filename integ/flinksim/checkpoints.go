package flinksim

import (
	"slices"
	"strings"
	"time"
)

// Checkpoint types as /checkpoints reports them (RestAPICheckpointType).
const (
	typeCheckpoint    = "CHECKPOINT"
	typeSavepoint     = "SAVEPOINT"
	typeSyncSavepoint = "SYNC_SAVEPOINT"
)

// checkpointEntry is one checkpoint or savepoint attempt in the job's statistics.
type checkpointEntry struct {
	id             int64
	status         string // IN_PROGRESS, COMPLETED, FAILED
	ckType         string
	format         string // savepointFormat; "" for checkpoints
	periodic       bool
	triggeredAt    time.Time
	dueAt          time.Time // completion time while IN_PROGRESS
	ackAt          time.Time
	stateSize      int64
	externalPath   string
	discarded      bool
	failureMessage string
	numSubtasks    int
}

func (e *checkpointEntry) isSavepoint() bool { return e.ckType != typeCheckpoint }

type restoredCheckpoint struct {
	id           int64
	at           time.Time
	isSavepoint  bool
	externalPath string
}

// checkpointStats is the CheckpointStatsTracker of one job.
type checkpointStats struct {
	nextID                                     int64
	history                                    []*checkpointEntry // newest first
	completed, failed, restoredCount           int64
	latestCompleted, latestSavepoint, lastFail *checkpointEntry
	restored                                   *restoredCheckpoint
	retained                                   []*checkpointEntry // completed checkpoints still in Storage
	pendingPeriodic                            *checkpointEntry
	nextPeriodic                               time.Time
	paused                                     bool // stop-with-savepoint or cancel-job savepoint pending
	sizes, durations                           summary
}

// summary accumulates StatsSummaryDto values over completed checkpoints.
type summary struct{ count, min, max, sum int64 }

func (s *summary) add(v int64) {
	if s.count == 0 || v < s.min {
		s.min = v
	}
	if v > s.max {
		s.max = v
	}
	s.count++
	s.sum += v
}

func (s summary) avg() int64 {
	if s.count == 0 {
		return 0
	}
	return s.sum / s.count
}

func (c *checkpointStats) inProgress() int {
	n := 0
	for _, e := range c.history {
		if e.status == "IN_PROGRESS" {
			n++
		}
	}
	return n
}

// restoreFrom records a restore; later checkpoint ids continue after it.
func (jm *JobManager) restoreFrom(j *job, at time.Time, id int64, savepoint bool, path string) {
	j.ckpt.restored = &restoredCheckpoint{id: id, at: at, isSavepoint: savepoint, externalPath: path}
	j.ckpt.restoredCount++
	if id+1 > j.ckpt.nextID {
		j.ckpt.nextID = id + 1
	}
}

// recoverRetained gives a job HA recovers the checkpoints it had retained, as Flink's checkpoint
// store recovered from HA holds them: newer ones subsume them, and the retention policy discards
// them as the job ends. jobIDs are the ids the job took checkpoints under (its own, and the one it
// ran under before when Flink runs it again under a new id).
func (jm *JobManager) recoverRetained(j *job, jobIDs ...string) {
	for _, s := range jm.storage.checkpointsOf(jobIDs...) {
		if slices.ContainsFunc(j.ckpt.retained, func(e *checkpointEntry) bool { return e.externalPath == s.Path }) {
			continue
		}
		j.ckpt.retained = append(j.ckpt.retained, &checkpointEntry{id: s.CheckpointID, status: "COMPLETED", ckType: typeCheckpoint,
			ackAt: s.CreatedAt, externalPath: s.Path})
	}
	for len(j.ckpt.retained) > jm.cfg.numRetained {
		jm.discard(j.ckpt.retained[0])
		j.ckpt.retained = j.ckpt.retained[1:]
	}
}

// startCheckpoint adds an IN_PROGRESS entry, as the CheckpointCoordinator does
// when it triggers a checkpoint or savepoint.
func (jm *JobManager) startCheckpoint(j *job, at time.Time, ckType, format string, due time.Time) *checkpointEntry {
	e := &checkpointEntry{
		id: j.ckpt.nextID, status: "IN_PROGRESS", ckType: ckType, format: format,
		triggeredAt: at, dueAt: due, numSubtasks: sum(j.vertexParallelism),
	}
	j.ckpt.nextID++
	j.ckpt.history = append([]*checkpointEntry{e}, j.ckpt.history...)
	if len(j.ckpt.history) > jm.cfg.historySize {
		j.ckpt.history = j.ckpt.history[:jm.cfg.historySize]
	}
	return e
}

// completeCheckpoint writes the snapshot to Storage and updates the statistics.
func (jm *JobManager) completeCheckpoint(j *job, e *checkpointEntry, at time.Time, path string) {
	e.status = "COMPLETED"
	e.ackAt = at
	e.externalPath = path
	e.stateSize = int64(4096*j.parallelism) + 512*e.id
	j.ckpt.completed++
	j.ckpt.sizes.add(e.stateSize)
	j.ckpt.durations.add(at.Sub(e.triggeredAt).Milliseconds())
	if e.isSavepoint() {
		j.ckpt.latestSavepoint = e
	} else {
		j.ckpt.latestCompleted = e
	}
	if jm.haKey != "" && !e.isSavepoint() {
		jm.storage.haCheckpointed(jm.haKey, j.id, haCheckpoint{id: e.id, path: path})
	}
	if path == noCheckpointPath {
		return
	}
	jm.storage.put(Snapshot{Path: path, JobID: j.id, CheckpointID: e.id, Savepoint: e.isSavepoint(), Format: e.format, CreatedAt: at})
	if e.isSavepoint() {
		return // savepoints belong to the user and are never discarded by Flink
	}
	j.ckpt.retained = append(j.ckpt.retained, e)
	for len(j.ckpt.retained) > jm.cfg.numRetained {
		jm.discard(j.ckpt.retained[0])
		j.ckpt.retained = j.ckpt.retained[1:]
	}
}

func (jm *JobManager) failCheckpoint(j *job, e *checkpointEntry, at time.Time, message string) {
	if e.status != "IN_PROGRESS" {
		return
	}
	e.status = "FAILED"
	e.ackAt = at
	e.failureMessage = message
	j.ckpt.failed++
	j.ckpt.lastFail = e
}

func (jm *JobManager) discard(e *checkpointEntry) {
	jm.storage.remove(e.externalPath)
	e.discarded = true
}

// discardCheckpoints applies the externalized-checkpoint retention policy when a
// job ends. Savepoints are never discarded.
func (jm *JobManager) discardCheckpoints(j *job, terminal string) {
	keep := false
	switch jm.cfg.retention {
	case retainOnCancel:
		keep = terminal != stateFinished
	case deleteOnCancel:
		keep = terminal == stateFailed
	}
	if keep {
		return
	}
	for _, e := range j.ckpt.retained {
		jm.discard(e)
	}
	j.ckpt.retained = nil
}

// abortCheckpoints fails every in-progress checkpoint of the job.
func (jm *JobManager) abortCheckpoints(j *job, at time.Time, cause *throwable) {
	for _, e := range j.ckpt.history {
		jm.failCheckpoint(j, e, at, cause.message)
	}
	if e := j.ckpt.pendingPeriodic; e != nil {
		jm.failCheckpoint(j, e, at, cause.message)
		j.ckpt.pendingPeriodic = nil
	}
	j.ckpt.paused = false
}

func (jm *JobManager) checkpointPath(j *job, id int64) string {
	if jm.cfg.checkpointDir == "" {
		return noCheckpointPath
	}
	return jm.cfg.checkpointDir + "/" + j.id + "/chk-" + itoa(int(id))
}

// checkpointEvent drives periodic checkpoints of a RUNNING, deployed job.
func (jm *JobManager) checkpointEvent(j *job) (time.Time, func(time.Time)) {
	if e := j.ckpt.pendingPeriodic; e != nil {
		return e.dueAt, func(at time.Time) {
			j.ckpt.pendingPeriodic = nil
			jm.completeCheckpoint(j, e, at, jm.checkpointPath(j, e.id))
			if j.ckpt.nextPeriodic.Before(at) {
				j.ckpt.nextPeriodic = at
			}
		}
	}
	if jm.checkpointInterval(j) <= 0 || !j.hasSlots || j.ckpt.paused || j.ckpt.nextPeriodic.IsZero() {
		return time.Time{}, nil
	}
	return j.ckpt.nextPeriodic, func(at time.Time) {
		e := jm.startCheckpoint(j, at, typeCheckpoint, "", at.Add(jm.timings.Checkpoint))
		e.periodic = true
		j.ckpt.pendingPeriodic = e
		j.ckpt.nextPeriodic = at.Add(jm.checkpointInterval(j))
	}
}

// checkpointInterval is the job's: the flinkConfiguration it was run with overrides the cluster's,
// as real Flink's run handler applies it to the program's configuration.
func (jm *JobManager) checkpointInterval(j *job) time.Duration {
	if d, err := parseFlinkDuration(strings.TrimSpace(j.userConfig["execution.checkpointing.interval"])); err == nil {
		return d
	}
	return jm.cfg.checkpointInterval
}
