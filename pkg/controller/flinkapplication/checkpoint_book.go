package flinkapplication

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// checkpointRecords is where the pass's job's checkpoints are recorded: its status, and its entry in
// the checkpoint book (jobstate.CheckpointRecords).
func (rc *Context) checkpointRecords() jobstate.CheckpointRecords {
	return jobstate.CheckpointRecords{
		Status: rc.Job, Book: rc.env.Book, Key: bookKey(rc), Page: func() *corev1.ConfigMap { return bookPage(rc) }, Now: rc.Now,
		RecordInterval: rc.Config.CheckpointRecordInterval.Duration, StatusInterval: rc.Config.CheckpointStatusInterval.Duration,
		BookInterval: rc.Config.CheckpointBookInterval.Duration,
		Phase:        rc.look().Phase,
	}
}

// jobState is the status side of the owner's jobs as this pass sees it, for the restore policy and
// the guardian: the book's entry is read when asked, as the pass may note a newer one meanwhile.
func (rc *Context) jobState() jobstate.Job {
	return jobstate.Job{Status: rc.Job, Settings: rc.Settings, Noted: rc.checkpointRecords().Newest}
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
