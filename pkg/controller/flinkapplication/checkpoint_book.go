package flinkapplication

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// A running job's newest checkpoint is recorded every checkpointRecordWindow. Between the ledger's
// own records of it, written with status at the job's slots (statusRecordDue), it goes to the
// checkpoint book (package checkpointbook): a few ConfigMaps per namespace written in batches every
// checkpointBookInterval, where each record would otherwise be a status write of its own. The
// restore policy, the job's health and the first look of a new leader take the newer of the two.
// A job whose book entry is not written by its next record (its page failing) records in status.

// statusCheckpointEvery is about how many record windows the checkpoint in status
// (jobStatus.lastCheckpoint, what users and Lyft's tools read) may lag the book's: the
// checkpointStatusInterval in checkpointRecordIntervals, 10 with the defaults.
func statusCheckpointEvery(rc *Context) int64 {
	every := int64(1)
	if r := rc.Config.CheckpointRecordInterval.Duration; r > 0 {
		every = int64(rc.Config.CheckpointStatusInterval.Duration / r)
	}
	return max(every, 2)
}

// statusRecordDue tells whether the job's checkpoint triggered at next is recorded in status, whose
// record was triggered at recorded. Every job has slots of its own, statusCheckpointEvery-1 windows
// apart at a phase fixed by its name, and status takes the first checkpoint triggered after each:
// jobs that reached Running together, and so recorded their first checkpoints in status together,
// do not all write status again in the same minute every ten (at 10,000 applications a deploy's
// worth did, up to 142 writes in one second). Trigger times, not the time of the pass, are
// compared: a checkpoint triggered before a slot and read after it would leave the slot free for
// the next record too. A slot comes at most statusCheckpointEvery-1 windows after any record, so
// the first record after it leaves status's at most about statusCheckpointEvery windows old; the
// age rule stays as a backstop.
//
// A process's first record of a job goes to the book whatever the slots say: a new leader, or a
// restarted operator, writes no status for the records an outage let come due (the first pass of
// each job reads its checkpoints); the job's next record, a window later, takes the slot.
func statusRecordDue(rc *Context, window time.Duration, recorded, next time.Time) bool {
	if !rc.env.Book.Noted(bookKey(rc)) {
		return false
	}
	n := statusCheckpointEvery(rc)
	if rc.Now.Sub(recorded) >= time.Duration(n)*window {
		return true
	}
	every := time.Duration(n-1) * window
	// The latest of the job's slots not after next.
	slot := next.Add(-time.Duration(uint64(next.UnixNano()-phaseOf(rc, "status checkpoint", every)) % uint64(every)))
	return recorded.Before(slot)
}

// bookKey names the pass's job in the checkpoint book.
func bookKey(rc *Context) checkpointbook.Key {
	return checkpointbook.Key{Namespace: rc.Meta.Namespace, Kind: rc.kind.name, Name: rc.Meta.Name}
}

// bookPage is the page of the book that holds the pass's job, as the cluster has it; nil when the
// book is off, or the page is not there or cannot be read.
func bookPage(rc *Context) *corev1.ConfigMap {
	if rc.env.Book == nil {
		return nil
	}
	k := bookKey(rc)
	page, err := rc.env.Observer.CheckpointBookPage(k.Namespace, checkpointbook.PageName(k))
	if err != nil {
		return nil
	}
	return page
}

// recordedCheckpoint is the job's newest recorded checkpoint: status's, or the book's when newer.
func recordedCheckpoint(rc *Context) (string, time.Time) {
	js := &rc.Job.JobStatus
	path, at := js.LastCheckpointPath, time.Time{}
	if js.LastCheckpointTime != nil {
		at = js.LastCheckpointTime.Time
	}
	if path == "" {
		at = time.Time{}
	}
	if e, ok := rc.jobState().BookEntry(js.JobID); ok && (path == "" || e.At.After(at)) {
		return e.Path, e.At
	}
	return path, at
}

// bookDelay is how long a record may wait for its page's write: the book's flush interval, 0 when
// the book is off.
func bookDelay(rc *Context) time.Duration {
	if rc.env.Book == nil {
		return 0
	}
	return rc.Config.CheckpointBookInterval.Duration
}

// recordInBook notes the checkpoint in the book instead of status, and says whether it did: not a
// job's first record (status has that), not when status's record is due (statusRecordDue), not
// when the window leaves no room for the page's write, and not when the job's previous entry never
// reached its page.
func recordInBook(rc *Context, window time.Duration, jobID string, c *client.Checkpoint) bool {
	js := &rc.Job.JobStatus
	b := rc.env.Book
	if b == nil || window <= 0 || js.LastCheckpointTime == nil || js.LastCheckpointPath == "" ||
		statusRecordDue(rc, window, js.LastCheckpointTime.Time, time.UnixMilli(c.TriggerTimestamp)) {
		return false
	}
	k := bookKey(rc)
	if b.Unwritten(k) || !b.Noted(k) && persistedRecordSpent(rc, window) {
		return false
	}
	return b.Note(k, checkpointbook.Entry{JobID: jobID, Path: c.ExternalPath, At: takenByFlink(rc, c.TriggerTimestamp).UTC()}, rc.Now)
}

// persistedRecordSpent tells, for a process's first record of the job (a takeover, a restart),
// whether the job's newest persisted record (status's, or its book page's) has used up the time
// Flink keeps it for, as the record window counts it: after an outage that long, Flink may drop it
// before the book's next write, and a process that died meanwhile would leave it as the only
// record of the job's state. The record then goes to status.
func persistedRecordSpent(rc *Context, window time.Duration) bool {
	_, at := recordedCheckpoint(rc)
	return !at.IsZero() && rc.Now.Sub(at) >= window+rc.Settings.CheckpointInterval()
}

// recordOverdueInStatus records in status a checkpoint noted in the book that its page has not
// taken for two flushes (the page failing, or full): it waits no longer for a write that may never
// come. The job's later records go to status until a page write succeeds.
func recordOverdueInStatus(rc *Context) {
	b := rc.env.Book
	if b == nil {
		return
	}
	k := bookKey(rc)
	e, overdue := b.Overdue(k, rc.Now, 2*bookDelay(rc))
	js := &rc.Job.JobStatus
	if !overdue || e.JobID != js.JobID || js.LastCheckpointTime != nil && !e.At.After(js.LastCheckpointTime.Time) {
		return
	}
	klog.FromContext(rc).Info("checkpoint book page not written; recording the checkpoint in status", "page", checkpointbook.PageName(k))
	rc.ledger().Record(v1beta1.StateCheckpoint, e.JobID, liveCluster(rc.Job), e.Path, e.At)
	js.LastCheckpointPath, js.LastCheckpointTime = e.Path, jobstate.MsTime(e.At.UnixMilli())
}

// forgetInBook removes the object's entry from the book once the object is gone for good.
func forgetInBook(rc *Context) {
	if rc.env.Book != nil {
		rc.env.Book.Forget(bookKey(rc), bookPage(rc))
	}
}

// withRecordedCheckpoint is the job's status as health judges it: with the newest recorded
// checkpoint, the book's when newer.
func withRecordedCheckpoint(rc *Context, js *v1beta1.FlinkJobStatus) *v1beta1.FlinkJobStatus {
	path, at := recordedCheckpoint(rc)
	if path == js.LastCheckpointPath || at.IsZero() {
		return js
	}
	view := *js
	view.LastCheckpointPath, view.LastCheckpointTime = path, jobstate.MsTime(at.UnixMilli())
	return &view
}

// jobState is the status side of the owner's jobs as this pass sees it, for the restore policy and
// the guardian: the book's entry is read when asked, as the pass may note a newer one meanwhile.
func (rc *Context) jobState() jobstate.Job {
	return jobstate.Job{Status: rc.Job, Settings: rc.Settings, Noted: func() (checkpointbook.Entry, bool) {
		if rc.env.Book == nil {
			return checkpointbook.Entry{}, false
		}
		return rc.env.Book.Newest(bookKey(rc), bookPage(rc))
	}}
}
