package lifecycle

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"context"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
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
	// Hash is the cluster hash of the current spec.
	Hash string
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
	// KindName is the object's kind, as keys across kinds name it.
	KindName string
	// SharedCluster is set when other objects' jobs run on the object's clusters (a session
	// cluster's): the fence before a submission then looks for the object's own jobs only.
	SharedCluster bool
	// Book is the operator's checkpoint book, nil when it is off; BookPage reads the page that
	// holds the object's job, nil when it is not there or cannot be read.
	Book     *checkpointbook.Book
	BookPage func(checkpointbook.Key) *corev1.ConfigMap
	// Looks remember when slow-moving figures were last read from Flink, per object.
	Looks *jobstate.Looks
	// Kind answers what only the object's kind can say.
	Kind Kind
	// Kube writes the Kubernetes objects of the object's clusters; Fence says why this replica may
	// not change Kubernetes or Flink now (nil: it may); PodPolicy is the pod policy the clusters'
	// pods are checked against.
	Kube      kubernetes.Interface
	Fence     func() error
	PodPolicy clusters.PodPolicy
	// Apps is the client of the operator's kinds, which FlinkSnapshots are written through;
	// FieldManager names the operator's writes.
	Apps         versioned.Interface
	FieldManager string
	// Patch sends a merge patch to the object, to its status when status is set.
	Patch func(patch []byte, status ...string) (metav1.Object, error)
	// Guardian is the guardian of durable state of the object's namespace, told what every object
	// there names; disposing says that it is asked before storage is disposed of.
	Guardian func(disposing bool) (*guardian.Namespace, error)

	flink *jobs.Pass
	key   string
}

// Key names the pass's object across kinds: kind/namespace/name.
func (p *Pass) Key() string {
	if p.key == "" { // asked several times a pass; built once
		p.key = p.KindName + "/" + p.Meta.Namespace + "/" + p.Meta.Name
	}
	return p.key
}

// Look is the object's reads of slow-moving figures from Flink (jobstate.Looks).
func (p *Pass) Look() jobstate.Look { return p.Looks.Of(p.Key(), p.Now) }

// BookKey names the pass's job in the checkpoint book.
func (p *Pass) BookKey() checkpointbook.Key {
	return checkpointbook.Key{Namespace: p.Meta.Namespace, Kind: p.KindName, Name: p.Meta.Name}
}

// CheckpointRecords is where the pass's job's checkpoints are recorded: its status, and its entry
// in the checkpoint book (jobstate.CheckpointRecords).
func (p *Pass) CheckpointRecords() jobstate.CheckpointRecords {
	return jobstate.CheckpointRecords{
		Status: p.Job, Book: p.Book, Key: p.BookKey(), Page: p.bookPage, Now: p.Now,
		RecordInterval: p.Config.CheckpointRecordInterval.Duration, StatusInterval: p.Config.CheckpointStatusInterval.Duration,
		BookInterval: p.Config.CheckpointBookInterval.Duration,
		Phase:        p.Look().Phase,
	}
}

// bookPage is the page of the book that holds the pass's job; nil when the book is off, or the
// page is not there or cannot be read.
func (p *Pass) bookPage() *corev1.ConfigMap {
	if p.Book == nil || p.BookPage == nil {
		return nil
	}
	return p.BookPage(p.BookKey())
}

// JobState is the status side of the object's jobs as this pass sees it, for the restore policy
// and the guardian: the book's entry is read when asked, as the pass may note a newer one meanwhile.
func (p *Pass) JobState() jobstate.Job {
	r := p.CheckpointRecords()
	return jobstate.Job{Status: p.Job, Settings: p.Settings, Noted: r.Newest, Written: r.NewestWritten}
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

// Kind is what the shared parts of a pass ask of the kind whose pass it is.
type Kind interface {
	// RunConfig is the Flink configuration the job with this id was started with, as the kind's
	// records of it say; the spec's when none does.
	RunConfig(jobID string) v1beta1.FlinkConfig
	// OtherVersion is the job of the version that ran beside the one whose job is jobID; ok is
	// false for an object that does not run versions side by side (only BlueGreen does).
	OtherVersion(jobID string) (job string, ok bool)
	// Beside tells whether a new version's job starts, or runs, beside the live one (BlueGreen).
	Beside() bool
	// ForcedRollback tells whether the user asked to abandon the update in progress.
	ForcedRollback() bool
	// Poll is how soon the kind's phase looks again when its handler does not say; nil for a phase
	// that does not poll.
	Poll(phase fsm.Phase) func(*config.Config) time.Duration
	// RescalingInPlace tells whether the live job restarts because it rescales in place, not
	// because it fails.
	RescalingInPlace() bool
	// RecordsCandidateCheckpoints tells whether the candidate's job has its checkpoints recorded
	// while it starts: one that runs beside the live job, or one nothing else stopped first.
	RecordsCandidateCheckpoints() bool
	// Follows are the savepoints that the kind's handler of the phase follows itself.
	Follows(phase fsm.Phase) []v1beta1.SavepointPurpose
	// HoldDelete holds the deletion of the object before its job (that of rec, nil when none) is
	// dealt with per deleteMode: what only the kind waits for (an application's other clusters gone,
	// a session job's job left running listed by its cluster).
	HoldDelete(rec *v1beta1.DeploymentRecord) (fsm.Outcome, bool)
	// ReleaseObject lets the object go once its deletion dealt with its job: the clean-up the
	// finalizer waits for, then the finalizer. waiting is set while out must be returned.
	ReleaseObject() (out fsm.Outcome, waiting bool)
	// DeriveStatus writes the fields of status that the kind derives from its records and ledger.
	DeriveStatus()
	// SummarizeKind writes what the kind shows beyond the job: its versions, its UI's address.
	SummarizeKind()
	// KeepJobGivenUpOn keeps, as the object's job, a job of a deploy given up on that may still
	// run: nothing is ever started beside it.
	KeepJobGivenUpOn()
	// BeforeRun holds the start of rec's job (to start from restorePath) for what only the kind
	// waits for, or changes first: held is set while out must be returned.
	BeforeRun(rec *v1beta1.DeploymentRecord, restorePath string) (out fsm.Outcome, held bool)
	// RestoreByHand says how the user names the state a job starts from when the restore policy
	// cannot choose it.
	RestoreByHand() string
}

// SnapshotOwner is the object as package snapshots names the owner of FlinkSnapshots.
func (p *Pass) SnapshotOwner() snapshots.Owner {
	return snapshots.Owner{Kind: p.KindName, Meta: p.Meta}
}

// SnapshotPass is what the pass hands the snapshots package: its object, its FlinkSnapshots and
// its ledger.
func (p *Pass) SnapshotPass() snapshots.Pass {
	return snapshots.Pass{Owner: p.SnapshotOwner(), Apps: p.Apps, FieldManager: p.FieldManager, Snapshots: p.Snapshots,
		Ledger: &p.Job.Ledger, Now: p.Now, Announce: p.Event}
}
