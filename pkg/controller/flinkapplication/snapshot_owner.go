package flinkapplication

import (
	"context"
	"time"

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
func syncSnapshots(rc *Context) {
	if rc.Job == nil || rc.env.Apps == nil || rc.MayAct() != nil {
		return
	}
	ret := rc.Settings.SavepointRetention
	snapshots.Sync(rc, rc.SnapshotPass(), shardLabels(rc.env.Shard, rc.Meta.Labels), ret != nil && ret.DisposeOlder)
}

// answerSnapshotRequests answers the users' FlinkSnapshots, and disposes of the storage of deleted
// ones through a running JobManager of the owner.
func answerSnapshotRequests(rc *Context) {
	if rc.Job == nil || rc.env.Apps == nil || rc.MayAct() != nil {
		return
	}
	d := snapshots.Disposal{Guardian: func() (*guardian.Namespace, error) { return stateGuardian(rc, true) }}
	if hash := jobstate.LiveCluster(rc.Job); hash != "" && rc.Clusters[hash].Ready() {
		d.Dispose = func(path string) error { return rc.Flink().Flink().DisposeSavepoint(rc, rc.FlinkURL(hash), path) }
	}
	snapshots.Answer(rc, rc.SnapshotPass(), string(rc.Subject.Phase()), d)
}

// retainSnapshots deletes the owner's savepoint FlinkSnapshots that retention lets go.
func retainSnapshots(rc *Context) {
	if rc.Job == nil || rc.env.Apps == nil || rc.Meta.DeletionTimestamp != nil || rc.MayAct() != nil {
		return
	}
	snapshots.Retain(rc, rc.SnapshotPass(), retention(rc), &rc.env.kept, rc.Key(),
		func() (*guardian.Namespace, error) { return stateGuardian(rc, false) })
}

// retention is how many of its savepoint FlinkSnapshots the owner keeps and for how long (0: no
// limit): its spec's savepointRetention, else the operator's.
func retention(rc *Context) snapshots.Retention {
	r := snapshots.Retention{Keep: rc.Config.SnapshotKeep, MaxAge: rc.Config.SnapshotMaxAge.Duration}
	if ret := rc.Settings.SavepointRetention; ret != nil {
		if ret.Keep > 0 {
			r.Keep = int(ret.Keep)
		}
		if ret.MaxAge != nil {
			r.MaxAge = ret.MaxAge.Duration
		}
	}
	return r
}

// resolveRestoreSnapshot reads the path of the FlinkSnapshot the spec's restoreSnapshot names into
// the settings.
func resolveRestoreSnapshot(rc *Context) {
	snapshots.ResolveRestore(rc.env.Observer.Snapshot, rc.Meta.Namespace, rc.Settings)
}

// reconcileOrphanedSnapshot is the pass of a FlinkSnapshot whose owner is gone (snapshots.Orphans).
func (e *Environment) reconcileOrphanedSnapshot(ctx context.Context, namespace, name string) (time.Duration, error) {
	o := snapshots.Orphans{Observer: e.Observer, Sessions: e.Sessions, Others: e.shardReader(), Fence: e.Acting, Apps: e.Apps,
		FieldManager: fieldManager}
	return untilChanged, o.Answer(ctx, namespace, name)
}
