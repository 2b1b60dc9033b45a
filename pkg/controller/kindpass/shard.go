package kindpass

import (
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
	"github.com/flinkfsm/flinkfsm/pkg/controller/watch"
)

// Shards (docs/operations.md, "Running several operator instances"). An operator with a shard
// selector owns, in the namespaces it watches, the FlinkApplications, FlinkSessionClusters and
// FlinkSessionJobs that the selector selects, and nothing else:
//
//   - Their informers list and watch only those (pkg/controller/watch), so the operator never caches,
//     reconciles or writes another. An object relabelled out of the shard reaches the informer as
//     deleted; its pass finds it gone and forgets what it remembered of it, deleting nothing (only
//     a deletionTimestamp starts the Deleting phase, and the finalizer stays for the new owner).
//     The instance it moved to sees it added and takes it over through the normal first pass,
//     which observes the cluster and the job before it does anything.
//   - A FlinkSnapshot is in the shard of its owner, whatever its own labels: FlinkSnapshots are
//     cached whole, and only those whose owner is in the shard wake anything. The operator puts its
//     owner's values of the selector's labels on the FlinkSnapshots it creates, so that one that
//     outlives its owner is still some shard's.
//   - Deployments, Services, pods, ConfigMaps and Ingresses are cached by the operator's labels,
//     whatever their owner's shard: only those of an owner in the shard wake it.
//   - A FlinkSessionJob and its FlinkSessionCluster must be in one shard. A job whose cluster is
//     in another is held: the pass says so in its Ready condition and an Event and does nothing
//     else, its deletion included, until one of them is relabelled (holdForOtherShard). A cluster
//     reads, before it removes a Flink cluster or its finalizer, the jobs of other shards that
//     name it, so that it never removes what such a job still runs on.
//   - Retention reads the restore paths of the other shards' applications and session jobs before
//     it deletes a FlinkSnapshot (snapshots.OtherShards), so that it never retires what another
//     shard restores from.

// ShardSelector is the shard's label selector as list options carry it; "" for all.
func (e *Environment) ShardSelector() string { return watch.ShardSelector(e.Shard) }

// InShard tells whether the shard selects an object by its labels; true when the operator owns all.
func (e *Environment) InShard(m metav1.Object) bool { return watch.InShard(e.Shard, m) }

// DescribeShard names the shard in messages.
func (e *Environment) DescribeShard() string {
	return fmt.Sprintf("this operator's shard (shardSelector %q)", e.ShardSelector())
}

// shardReader reads the other shards' objects.
func (e *Environment) shardReader() snapshots.ShardReader {
	return snapshots.ShardReader{Apps: e.Apps, Shard: e.Shard, Clock: e.Clock}
}

// ShardLabels are the owner's values of the labels the shard selector reads, for a FlinkSnapshot
// it creates: a snapshot that outlives its owner then stays in the shard its owner was in.
func ShardLabels(shard labels.Selector, owner map[string]string) map[string]string {
	if shard == nil {
		return nil
	}
	reqs, _ := shard.Requirements()
	out := map[string]string{}
	for _, r := range reqs {
		if v, ok := owner[r.Key()]; ok {
			out[r.Key()] = v
		}
	}
	return out
}

// OtherShardJobsOf are the FlinkSessionJobs of other shards that name the cluster.
func (e *Environment) OtherShardJobsOf(ctx context.Context, namespace, cluster string) ([]*v1beta1.FlinkSessionJob, error) {
	all, err := e.shardReader().SessionJobs(ctx, namespace)
	if err != nil {
		return nil, err
	}
	var out []*v1beta1.FlinkSessionJob
	for _, j := range all {
		if j.Spec.ClusterName == cluster {
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}
