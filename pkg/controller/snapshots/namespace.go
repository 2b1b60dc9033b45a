package snapshots

import (
	"context"
	"fmt"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/watch"
)

// What the guardian of durable state (package guardian) is told, and asked: every deletion of a
// savepoint's storage, of a FlinkSnapshot by retention, and of Flink's HA ConfigMaps asks it
// first, with what every application and session job of the namespace names, this shard's and the
// others'. It is read only when something is about to go: a pass that deletes nothing pays nothing.

// Namespace reads what the objects of a namespace name of durable state: this shard's from the
// caches, the other shards' live.
type Namespace struct {
	Observer watch.Observer
	// Sessions reads the session kinds; nil when the operator runs none.
	Sessions watch.SessionObserver
	// Others remembers the other shards' reads; Reader reads them (Reader.Shard nil: no shards).
	Others *OtherShards
	Reader ShardReader
}

// Guardian is the guardian of the owner's namespace as the owner's pass sees it. own is what the
// owner itself needs, told from its pass (with its checkpoint book and its status as stored), in
// place of what its cached copy names. window is the owner's retention's maxAge (0: none): a
// redeploy counts within it. disposing says that storage goes on its word: other shards are then
// read now, not from a read seconds old.
func (n Namespace) Guardian(ctx context.Context, owner Owner, own guardian.References, now time.Time, window time.Duration,
	disposing bool) (*guardian.Namespace, error) {
	namespace := owner.Meta.Namespace
	var refs []Refs
	apps, err := n.Observer.ApplicationsIn(namespace)
	if err != nil {
		return nil, fmt.Errorf("reading the namespace's applications: %w", err)
	}
	for _, a := range apps {
		if owner.Kind == v1beta1.FlinkApplicationKind && a.Name == owner.Meta.Name {
			continue
		}
		refs = append(refs, ApplicationRefs(a))
	}
	if n.Sessions != nil {
		jobs, err := n.Sessions.SessionJobsIn(namespace)
		if err != nil {
			return nil, fmt.Errorf("reading the namespace's session jobs: %w", err)
		}
		for _, j := range jobs {
			if owner.Kind == v1beta1.FlinkSessionJobKind && j.Name == owner.Meta.Name {
				continue
			}
			refs = append(refs, SessionJobRefs(j))
		}
		clusters, err := n.Sessions.SessionClustersIn(namespace)
		if err != nil {
			return nil, fmt.Errorf("reading the namespace's session clusters: %w", err)
		}
		for _, c := range clusters {
			// What the jobs left running on it started from: a job of a session job deleted
			// with deleteMode None runs on, from that state.
			refs = append(refs, SessionClusterRefs(c))
		}
	}
	if n.Reader.Shard != nil {
		others, err := n.Others.Restores(ctx, n.Reader, namespace, disposing)
		if err != nil {
			return nil, fmt.Errorf("reading what other shards restore from: %w", err)
		}
		refs = append(refs, others...)
	}
	all := []guardian.References{own}
	for _, r := range refs {
		all = append(all, r.References(now, window))
	}
	snapshots, err := n.Observer.SnapshotsIn(namespace)
	if err != nil {
		return nil, fmt.Errorf("reading the namespace's FlinkSnapshots: %w", err)
	}
	snaps := make([]guardian.Snapshot, 0, len(snapshots))
	for _, s := range snapshots {
		path := s.Status.Path
		if path == "" {
			// One registering a path shows it from the moment it exists, before its status is written.
			path = s.Spec.Path
		}
		snaps = append(snaps, guardian.Snapshot{Name: s.Name, Path: path})
		if s.DeletionTimestamp == nil && path != "" && s.Spec.Type != v1beta1.SnapshotCheckpoint {
			// A FlinkSnapshot shows its savepoint to its users (one kept with spec.keep, one a
			// user registered for the same path): while it is there, the storage stays.
			all = append(all, guardian.References{Holder: guardian.Holder{Kind: guardian.SnapshotKind, Name: s.Name, UID: string(s.UID)},
				Paths: []guardian.Use{{Name: path, Why: "it shows this savepoint"}}})
		}
	}
	return guardian.NewNamespace(all, snaps), nil
}
