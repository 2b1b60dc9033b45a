package jobstate

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// A running job's newest checkpoint is recorded every checkpoint record window. Between the
// ledger's own records of it, written with status at the job's slots (StatusRecordDue), it goes to
// the checkpoint book (package checkpointbook): a few ConfigMaps per namespace written in batches
// every checkpointBookInterval, where each record would otherwise be a status write of its own. The
// restore policy, the job's health and the first look of a new leader take the newer of the two.
// A job whose book entry is not written by its next record (its page failing) records in status.

// CheckpointRecords is where one owner's job's checkpoints are recorded, as one pass sees it: its
// status, and its entry in the checkpoint book.
type CheckpointRecords struct {
	Status *v1beta1.JobOwnerStatus
	// Book is the operator's checkpoint book; nil when it is off.
	Book *checkpointbook.Book
	Key  checkpointbook.Key
	// Page is the page of the book that holds the job, as the cluster has it; nil when it is not
	// there or cannot be read.
	Page func() *corev1.ConfigMap
	Now  time.Time
	// RecordInterval, StatusInterval and BookInterval are the operator's checkpointRecordInterval,
	// checkpointStatusInterval and checkpointBookInterval.
	RecordInterval, StatusInterval, BookInterval time.Duration
	// Phase is the phase in [0, every) of the owner's slots: what many objects do at one interval,
	// each does at its own phase.
	Phase func(what string, every time.Duration) int64
}

// Newest is the book's newest entry of the owner; false when the book is off or has none.
func (r CheckpointRecords) Newest() (checkpointbook.Entry, bool) {
	if r.Book == nil {
		return checkpointbook.Entry{}, false
	}
	return r.Book.Newest(r.Key, r.Page())
}

// NewestWritten is the book's newest entry of the owner that its page holds: what this process
// noted and has not written yet is left out, as a process that takes over would not read it.
func (r CheckpointRecords) NewestWritten() (checkpointbook.Entry, bool) {
	if r.Book == nil {
		return checkpointbook.Entry{}, false
	}
	if r.Book.Unwritten(r.Key) {
		return checkpointbook.Read(r.Page(), r.Key)
	}
	return r.Book.Newest(r.Key, r.Page())
}

// StatusCheckpointEvery is about how many record windows the checkpoint in status
// (jobStatus.lastCheckpoint, what users and Lyft's tools read) may lag the book's: the
// checkpointStatusInterval in checkpointRecordIntervals, 10 with the defaults.
func (r CheckpointRecords) StatusCheckpointEvery() int64 {
	every := int64(1)
	if r.RecordInterval > 0 {
		every = int64(r.StatusInterval / r.RecordInterval)
	}
	return max(every, 2)
}

// StatusRecordDue tells whether the job's checkpoint triggered at next is recorded in status, whose
// record was triggered at recorded. Every job has slots of its own, StatusCheckpointEvery-1 windows
// apart at a phase fixed by its name, and status takes the first checkpoint triggered after each:
// jobs that reached Running together, and so recorded their first checkpoints in status together,
// do not all write status again in the same minute every ten (at 10,000 applications a deploy's
// worth did, up to 142 writes in one second). Trigger times, not the time of the pass, are
// compared: a checkpoint triggered before a slot and read after it would leave the slot free for
// the next record too. A slot comes at most StatusCheckpointEvery-1 windows after any record, so
// the first record after it leaves status's at most about StatusCheckpointEvery windows old; the
// age rule stays as a backstop.
//
// A process's first record of a job goes to the book whatever the slots say: a new leader, or a
// restarted operator, writes no status for the records an outage let come due (the first pass of
// each job reads its checkpoints); the job's next record, a window later, takes the slot.
func (r CheckpointRecords) StatusRecordDue(window time.Duration, recorded, next time.Time) bool {
	if !r.Book.Noted(r.Key) {
		return false
	}
	n := r.StatusCheckpointEvery()
	if r.Now.Sub(recorded) >= time.Duration(n)*window {
		return true
	}
	every := time.Duration(n-1) * window
	// The latest of the job's slots not after next.
	slot := next.Add(-time.Duration(uint64(next.UnixNano()-r.Phase("status checkpoint", every)) % uint64(every)))
	return recorded.Before(slot)
}

// Recorded is the job's newest recorded checkpoint: status's, or the book's when newer.
func (r CheckpointRecords) Recorded() (string, time.Time) {
	js := &r.Status.JobStatus
	path, at := js.LastCheckpointPath, time.Time{}
	if js.LastCheckpointTime != nil {
		at = js.LastCheckpointTime.Time
	}
	if path == "" {
		at = time.Time{}
	}
	if e, ok := r.Newest(); ok && e.JobID == js.JobID && js.JobID != "" && (path == "" || e.At.After(at)) {
		return e.Path, e.At
	}
	return path, at
}

// Delay is how long a record may wait for its page's write: the book's flush interval, 0 when the
// book is off.
func (r CheckpointRecords) Delay() time.Duration {
	if r.Book == nil {
		return 0
	}
	return r.BookInterval
}

// RecordInBook notes the checkpoint, taken at takenAt, in the book instead of status, and says
// whether it did: not a job's first record (status has that), not when status's record is due
// (StatusRecordDue), not when the window leaves no room for the page's write, and not when the
// job's previous entry never reached its page. checkpointInterval is the job's.
func (r CheckpointRecords) RecordInBook(window, checkpointInterval time.Duration, jobID string, c *client.Checkpoint, takenAt time.Time) bool {
	js := &r.Status.JobStatus
	b := r.Book
	if b == nil || window <= 0 || js.LastCheckpointTime == nil || js.LastCheckpointPath == "" ||
		r.StatusRecordDue(window, js.LastCheckpointTime.Time, time.UnixMilli(c.TriggerTimestamp)) {
		return false
	}
	if b.Unwritten(r.Key) || !b.Noted(r.Key) && r.persistedRecordSpent(window, checkpointInterval) {
		return false
	}
	return b.Note(r.Key, checkpointbook.Entry{JobID: jobID, Path: c.ExternalPath, At: takenAt.UTC()}, r.Now)
}

// persistedRecordSpent tells, for a process's first record of the job (a takeover, a restart),
// whether the job's newest persisted record (status's, or its book page's) has used up the time
// Flink keeps it for, as the record window counts it: after an outage that long, Flink may drop it
// before the book's next write, and a process that died meanwhile would leave it as the only
// record of the job's state. The record then goes to status.
func (r CheckpointRecords) persistedRecordSpent(window, checkpointInterval time.Duration) bool {
	_, at := r.Recorded()
	return !at.IsZero() && r.Now.Sub(at) >= window+checkpointInterval
}

// OverdueInBook is a checkpoint of the running job noted in the book that its page has not taken for
// two flushes (the page failing, or full), newer than status's record: it waits no longer for a
// write that may never come, and is to be recorded in status. The job's later records go to status
// until a page write succeeds.
func (r CheckpointRecords) OverdueInBook() (checkpointbook.Entry, bool) {
	if r.Book == nil {
		return checkpointbook.Entry{}, false
	}
	e, overdue := r.Book.Overdue(r.Key, r.Now, 2*r.Delay())
	js := &r.Status.JobStatus
	if !overdue || e.JobID != js.JobID || js.LastCheckpointTime != nil && !e.At.After(js.LastCheckpointTime.Time) {
		return checkpointbook.Entry{}, false
	}
	return e, true
}

// Forget removes the owner's entry from the book once the owner is gone for good.
func (r CheckpointRecords) Forget() {
	if r.Book != nil {
		r.Book.Forget(r.Key, r.Page())
	}
}

// WithRecorded is the job's status as health judges it: with the newest recorded checkpoint, the
// book's when newer.
func (r CheckpointRecords) WithRecorded(js *v1beta1.FlinkJobStatus) *v1beta1.FlinkJobStatus {
	path, at := r.Recorded()
	if path == js.LastCheckpointPath || at.IsZero() {
		return js
	}
	view := *js
	view.LastCheckpointPath, view.LastCheckpointTime = path, MsTime(at.UnixMilli())
	return &view
}

// TakenByFlink is when a JobManager says it took a state (milliseconds since the epoch), never
// later than now: a JobManager's clock ahead of the operator's, or a hostile answer, would
// otherwise make its state outrank every state completed after it, another JobManager's included
// (a rollback's restarted job, lost, went back to the failed attempt's checkpoint).
func TakenByFlink(now time.Time, millis int64) time.Time {
	if t := time.UnixMilli(millis); t.Before(now) {
		return t
	}
	return now
}
