package lifecycle

import (
	"context"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// Pass is what one pass of one object knows, whatever its kind: the machine's part (fsm.Pass),
// the job and the clusters it owns as the pass works on them and as it read them, the job settings
// its kind derives from its spec, and the Kubernetes objects of its clusters. Each kind's pass
// embeds it; handlers decide from it and never list or watch on their own.
type Pass struct {
	context.Context
	// Pass is the machine's part: the object as worked on and as read, its metadata and
	// MachineStatus, the clock, the configuration, and what the pass decided so far.
	*fsm.Pass
	// Job and Owned point into the working copy of the object: the job it owns (nil for a
	// FlinkSessionCluster) and the clusters it owns (nil for a FlinkSessionJob). StoredJob is the
	// job part of the object as the pass read it.
	Job, StoredJob *v1beta1.JobOwnerStatus
	Owned          *v1beta1.ClusterOwnerStatus
	// Settings are the job settings of the object's spec; nil for a kind that owns no job.
	Settings *jobstate.Settings
	// Clusters are the Flink clusters the pass reads the object's jobs on, by hash.
	Clusters map[string]*clusters.Objects
	// HAConfigMaps names the ConfigMaps of Flink's Kubernetes HA services that the owned clusters
	// left, by cluster hash.
	HAConfigMaps map[string][]string
	// Snapshots are the FlinkSnapshots of the object's job (package snapshots); nil for a kind
	// that owns no job.
	Snapshots []*v1beta1.FlinkSnapshot
	// ClusterOwner is the object that owns the clusters in Clusters, as the cluster renderer takes
	// it: the object itself, or the FlinkSessionCluster a session job runs on.
	ClusterOwner flink.ClusterOwner
	// Waiting is set by a handler that waits for something outside the object (task slots, say):
	// a word for the Ready condition's reason.
	Waiting string
	// HealthReason says why the live job's health is what the pass observed.
	HealthReason string
	// NewFlink makes the pass's view of Flink (Flink), on first use: a pass that asks Flink
	// nothing makes none.
	NewFlink func() *jobs.Pass

	flink *jobs.Pass
}

// Flink is the pass's view of Flink and its job operations (the job core): it asks each question
// of a JobManager at most once per pass, and its events are the pass's. What it does follows the
// pass as it goes: a phase past its deadline starts nothing new, and savepoints are taken in the
// format the job's settings name.
func (p *Pass) Flink() *jobs.Pass {
	if p.flink == nil {
		p.flink = p.NewFlink()
		p.flink.Announce = func(e jobs.Event) { p.Event(e.Warning, e.Reason, e.Message) }
	}
	p.flink.Overdue = p.Overdue
	p.flink.SavepointFormat = p.Settings.SavepointFormat()
	return p.flink
}

// FlinkAsked is the pass's view of Flink if the pass asked Flink anything; nil otherwise.
func (p *Pass) FlinkAsked() *jobs.Pass { return p.flink }

// Bind makes working the pass's object and stored the object as read.
func (p *Pass) Bind(working, stored Subject) {
	p.Pass.Bind(working, stored)
	p.Job, p.Owned, p.StoredJob = working.Job(), working.Clusters(), stored.Job()
}

// Subject is an object a pass runs for, as the shared phases see it: the machine's view of it and
// the status parts the kinds share.
type Subject interface {
	fsm.Subject
	// Job is the object's job status; nil for a kind that owns no job.
	Job() *v1beta1.JobOwnerStatus
	// Clusters is the status of the clusters the object owns; nil for a kind that owns none.
	Clusters() *v1beta1.ClusterOwnerStatus
}

// Ledger is the object's ledger of savepoints and checkpoints.
func (p *Pass) Ledger() ledger.Ledger { return ledger.Of(&p.Job.Ledger) }

// Event adds an Event the pass tells of its object once its status is written.
func (p *Pass) Event(warning bool, reason, message string) { p.Tell(warning, reason, message) }
