package flinkapplication

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
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
//     it deletes a FlinkSnapshot (otherShardRestores), so that it never retires what another shard
//     restores from.

// shardSelector is the shard's label selector as list options carry it; "" for all.
func (e *Environment) shardSelector() string { return watch.ShardSelector(e.Shard) }

// inShard tells whether the shard selects an object by its labels; true when the operator owns all.
func (e *Environment) inShard(m metav1.Object) bool { return watch.InShard(e.Shard, m) }

// describeShard names the shard in messages.
func (e *Environment) describeShard() string {
	return fmt.Sprintf("this operator's shard (shardSelector %q)", e.shardSelector())
}

// shardLabels are the owner's values of the labels the shard selector reads, for a FlinkSnapshot
// it creates: a snapshot that outlives its owner then stays in the shard its owner was in.
func shardLabels(shard labels.Selector, owner map[string]string) map[string]string {
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

// fromWatchCache lists without a quorum read of etcd.
func fromWatchCache(selector string) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: selector, ResourceVersion: "0"}
}

// otherShardsFreshFor is how long what the other shards of a namespace restore from serves
// retention. Retirements come in bursts (the savepoints of applications on one schedule), and each
// read lists every application of the other shards; a reference another shard adds within this
// time is not seen by a retirement decided meanwhile, as one added in this shard is not seen while
// the informer catches up.
const otherShardsFreshFor = 10 * time.Second

// otherShardReads keeps, per namespace, what the other shards restore from, with one read in flight.
type otherShardReads struct {
	reads   singleflight.Group
	entries sync.Map // namespace → otherShardRead
}

type otherShardRead struct {
	refs []restoreRefs
	at   time.Time
}

// otherShardRestores is what the applications and session jobs of other shards in the namespace
// restore from, read live at most otherShardsFreshFor ago; with live set, read now: a read a few
// seconds old may only ever keep state, and what disposes of storage must see a reference another
// shard made since (a retirement only deletes the object; its storage is judged again, live).
func (e *Environment) otherShardRestores(ctx context.Context, namespace string, live bool) ([]restoreRefs, error) {
	fresh := func() ([]restoreRefs, bool) {
		if v, ok := e.otherShards.entries.Load(namespace); ok && e.Clock.Since(v.(otherShardRead).at) < otherShardsFreshFor {
			return v.(otherShardRead).refs, true
		}
		return nil, false
	}
	if live {
		return e.readOtherShards(ctx, namespace)
	}
	if refs, ok := fresh(); ok {
		return refs, nil
	}
	v, err, _ := e.otherShards.reads.Do(namespace, func() (interface{}, error) {
		if refs, ok := fresh(); ok {
			return refs, nil
		}
		return e.readOtherShards(ctx, namespace)
	})
	if err != nil {
		return nil, err
	}
	return v.([]restoreRefs), nil
}

// readOtherShards reads what the other shards' objects of the namespace name, and keeps it.
func (e *Environment) readOtherShards(ctx context.Context, namespace string) ([]restoreRefs, error) {
	at := e.Clock.Now()
	apps, err := e.otherShardApplications(ctx, namespace)
	if err != nil {
		return nil, err
	}
	jobs, err := e.otherShardSessionJobs(ctx, namespace)
	if err != nil {
		return nil, err
	}
	clusters, err := e.otherShardSessionClusters(ctx, namespace)
	if err != nil {
		return nil, err
	}
	refs := make([]restoreRefs, 0, len(apps)+len(jobs)+len(clusters))
	for _, c := range clusters {
		refs = append(refs, sessionClusterRefs(c))
	}
	for _, a := range apps {
		refs = append(refs, applicationRefs(a))
	}
	for _, j := range jobs {
		refs = append(refs, sessionJobStateRefs(j))
	}
	e.otherShards.entries.Store(namespace, otherShardRead{refs: refs, at: at})
	return refs, nil
}

// otherShardApplications are the namespace's FlinkApplications of other shards.
func (e *Environment) otherShardApplications(ctx context.Context, namespace string) ([]*v1beta1.FlinkApplication, error) {
	return watch.OtherShards(e.Shard, func(sel string) ([]*v1beta1.FlinkApplication, error) {
		list, err := e.Apps.FlinkV1beta1().FlinkApplications(namespace).List(ctx, fromWatchCache(sel))
		if err != nil {
			return nil, err
		}
		return pointersTo(list.Items), nil
	})
}

// otherShardSessionJobs are the namespace's FlinkSessionJobs of other shards.
func (e *Environment) otherShardSessionJobs(ctx context.Context, namespace string) ([]*v1beta1.FlinkSessionJob, error) {
	return watch.OtherShards(e.Shard, func(sel string) ([]*v1beta1.FlinkSessionJob, error) {
		list, err := e.Apps.FlinkV1beta1().FlinkSessionJobs(namespace).List(ctx, fromWatchCache(sel))
		if err != nil {
			return nil, err
		}
		return pointersTo(list.Items), nil
	})
}

// otherShardSessionClusters are the namespace's FlinkSessionClusters of other shards.
func (e *Environment) otherShardSessionClusters(ctx context.Context, namespace string) ([]*v1beta1.FlinkSessionCluster, error) {
	return watch.OtherShards(e.Shard, func(sel string) ([]*v1beta1.FlinkSessionCluster, error) {
		list, err := e.Apps.FlinkV1beta1().FlinkSessionClusters(namespace).List(ctx, fromWatchCache(sel))
		if err != nil {
			return nil, err
		}
		return pointersTo(list.Items), nil
	})
}

// otherShardJobsOf are the FlinkSessionJobs of other shards that name the cluster.
func (e *Environment) otherShardJobsOf(ctx context.Context, namespace, cluster string) ([]*v1beta1.FlinkSessionJob, error) {
	all, err := e.otherShardSessionJobs(ctx, namespace)
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

// jobNames lists jobs by name for a message.
func jobNames(jobs []*v1beta1.FlinkSessionJob) string {
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	return strings.Join(names, ", ")
}

// pointersTo points at each item of a list, in place.
func pointersTo[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
