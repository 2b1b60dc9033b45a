package kindpass

import (
	"context"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// The owner's FlinkSnapshots are kept by package snapshots, a step of the owner's pass
// (docs/snapshots.md); these hand it the pass's values.

// namespaceState reads what the objects of a namespace, of every shard, name of durable state.
func (e *Environment) namespaceState() snapshots.Namespace {
	return snapshots.Namespace{Observer: e.Observer, Sessions: e.Sessions, Others: &e.otherShards, Reader: e.shardReader()}
}

// syncSnapshots makes and updates the FlinkSnapshots that show the ledger's entries.
func syncSnapshots(p *Pass) {
	if p.Job == nil || p.Env.Apps == nil || p.MayAct() != nil {
		return
	}
	ret := p.Settings.SavepointRetention
	snapshots.Sync(p, p.SnapshotPass(), ShardLabels(p.Env.Shard, p.Meta.Labels), ret != nil && ret.DisposeOlder)
}

// answerSnapshotRequests answers the users' FlinkSnapshots, and disposes of the storage of deleted
// ones through a running JobManager of the owner.
func answerSnapshotRequests(p *Pass) {
	if p.Job == nil || p.Env.Apps == nil || p.MayAct() != nil {
		return
	}
	d := snapshots.Disposal{Guardian: func() (*guardian.Namespace, error) { return StateGuardian(p, true) }}
	if hash := jobstate.LiveCluster(p.Job); hash != "" && p.Clusters[hash].Ready() {
		d.Dispose = func(path string) error { return p.Flink().Flink().DisposeSavepoint(p, p.FlinkURL(hash), path) }
	}
	snapshots.Answer(p, p.SnapshotPass(), string(p.Subject.Phase()), d)
}

// retainSnapshots deletes the owner's savepoint FlinkSnapshots that retention lets go.
func retainSnapshots(p *Pass) {
	if p.Job == nil || p.Env.Apps == nil || p.Meta.DeletionTimestamp != nil || p.MayAct() != nil {
		return
	}
	snapshots.Retain(p, p.SnapshotPass(), retention(p), &p.Env.kept, p.Key(),
		func() (*guardian.Namespace, error) { return StateGuardian(p, false) })
}

// retention is how many of its savepoint FlinkSnapshots the owner keeps and for how long (0: no
// limit): its spec's savepointRetention, else the operator's.
func retention(p *Pass) snapshots.Retention {
	r := snapshots.Retention{Keep: p.Config.SnapshotKeep, MaxAge: p.Config.SnapshotMaxAge.Duration}
	if ret := p.Settings.SavepointRetention; ret != nil {
		if ret.Keep > 0 {
			r.Keep = int(ret.Keep)
		}
		if ret.MaxAge != nil {
			r.MaxAge = ret.MaxAge.Duration
		}
	}
	return r
}

// ResolveRestoreSnapshot reads the path of the FlinkSnapshot the spec's restoreSnapshot names into
// the settings.
func ResolveRestoreSnapshot(p *Pass) {
	snapshots.ResolveRestore(p.Env.Observer.Snapshot, p.Meta.Namespace, p.Settings)
}

// ReconcileOrphanedSnapshot is the pass of a FlinkSnapshot whose owner is gone (snapshots.Orphans).
func (e *Environment) ReconcileOrphanedSnapshot(ctx context.Context, namespace, name string) (time.Duration, error) {
	o := snapshots.Orphans{Observer: e.Observer, Sessions: e.Sessions, Others: e.shardReader(), Fence: e.Acting, Apps: e.Apps,
		FieldManager: FieldManager}
	return fsm.UntilChanged, o.Answer(ctx, namespace, name)
}
