package snapshots

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	"github.com/flinkfsm/flinkfsm/pkg/controller/watch"
)

// With a shard selector (docs/operations.md, "Running several operator instances"), the objects of
// other shards are in no cache of this operator; before it deletes a FlinkSnapshot or disposes of
// storage, it reads what they restore from, live, so that it never retires what another shard
// restores from.

// OtherShardsFreshFor is how long what the other shards of a namespace restore from serves
// retention. Retirements come in bursts (the savepoints of applications on one schedule), and each
// read lists every application of the other shards; a reference another shard adds within this
// time is not seen by a retirement decided meanwhile, as one added in this shard is not seen while
// the informer catches up.
const OtherShardsFreshFor = 10 * time.Second

// ShardReader reads the objects of the other shards of a namespace, from the API server's watch
// cache.
type ShardReader struct {
	Apps versioned.Interface
	// Shard is this operator's shard selector; nil when it owns all (there are no other shards).
	Shard labels.Selector
	Clock clock.PassiveClock
}

// OtherShards keeps, per namespace, what the other shards restore from, with one read in flight.
// The zero value is ready.
type OtherShards struct {
	reads   singleflight.Group
	entries sync.Map // namespace → otherShardRead
}

type otherShardRead struct {
	refs []Refs
	at   time.Time
}

// Restores is what the applications, session jobs and session clusters of other shards in the
// namespace restore from, read at most OtherShardsFreshFor ago; with live set, read now: a read a
// few seconds old may only ever keep state, and what disposes of storage must see a reference
// another shard made since (a retirement only deletes the object; its storage is judged again,
// live).
func (o *OtherShards) Restores(ctx context.Context, r ShardReader, namespace string, live bool) ([]Refs, error) {
	fresh := func() ([]Refs, bool) {
		if v, ok := o.entries.Load(namespace); ok && r.Clock.Since(v.(otherShardRead).at) < OtherShardsFreshFor {
			return v.(otherShardRead).refs, true
		}
		return nil, false
	}
	if live {
		return o.read(ctx, r, namespace)
	}
	if refs, ok := fresh(); ok {
		return refs, nil
	}
	v, err, _ := o.reads.Do(namespace, func() (interface{}, error) {
		if refs, ok := fresh(); ok {
			return refs, nil
		}
		return o.read(ctx, r, namespace)
	})
	if err != nil {
		return nil, err
	}
	return v.([]Refs), nil
}

// read reads what the other shards' objects of the namespace name, and keeps it.
func (o *OtherShards) read(ctx context.Context, r ShardReader, namespace string) ([]Refs, error) {
	at := r.Clock.Now()
	apps, err := r.Applications(ctx, namespace)
	if err != nil {
		return nil, err
	}
	jobs, err := r.SessionJobs(ctx, namespace)
	if err != nil {
		return nil, err
	}
	clusters, err := r.SessionClusters(ctx, namespace)
	if err != nil {
		return nil, err
	}
	refs := make([]Refs, 0, len(apps)+len(jobs)+len(clusters))
	for _, c := range clusters {
		refs = append(refs, SessionClusterRefs(c))
	}
	for _, a := range apps {
		refs = append(refs, ApplicationRefs(a))
	}
	for _, j := range jobs {
		refs = append(refs, SessionJobRefs(j))
	}
	o.entries.Store(namespace, otherShardRead{refs: refs, at: at})
	return refs, nil
}

// Applications are the namespace's FlinkApplications of other shards.
func (r ShardReader) Applications(ctx context.Context, namespace string) ([]*v1beta1.FlinkApplication, error) {
	return watch.OtherShards(r.Shard, func(sel string) ([]*v1beta1.FlinkApplication, error) {
		list, err := r.Apps.FlinkV1beta1().FlinkApplications(namespace).List(ctx, fromWatchCache(sel))
		if err != nil {
			return nil, err
		}
		return pointersTo(list.Items), nil
	})
}

// SessionJobs are the namespace's FlinkSessionJobs of other shards.
func (r ShardReader) SessionJobs(ctx context.Context, namespace string) ([]*v1beta1.FlinkSessionJob, error) {
	return watch.OtherShards(r.Shard, func(sel string) ([]*v1beta1.FlinkSessionJob, error) {
		list, err := r.Apps.FlinkV1beta1().FlinkSessionJobs(namespace).List(ctx, fromWatchCache(sel))
		if err != nil {
			return nil, err
		}
		return pointersTo(list.Items), nil
	})
}

// SessionClusters are the namespace's FlinkSessionClusters of other shards.
func (r ShardReader) SessionClusters(ctx context.Context, namespace string) ([]*v1beta1.FlinkSessionCluster, error) {
	return watch.OtherShards(r.Shard, func(sel string) ([]*v1beta1.FlinkSessionCluster, error) {
		list, err := r.Apps.FlinkV1beta1().FlinkSessionClusters(namespace).List(ctx, fromWatchCache(sel))
		if err != nil {
			return nil, err
		}
		return pointersTo(list.Items), nil
	})
}

// OwnerExists tells whether the owner a FlinkSnapshot names, absent from this shard's caches,
// exists in another shard: its operator answers the snapshot.
func (r ShardReader) OwnerExists(ctx context.Context, namespace, kind, name string) (bool, error) {
	var err error
	switch kind {
	case v1beta1.FlinkApplicationKind:
		_, err = r.Apps.FlinkV1beta1().FlinkApplications(namespace).Get(ctx, name, metav1.GetOptions{})
	case v1beta1.FlinkSessionJobKind:
		_, err = r.Apps.FlinkV1beta1().FlinkSessionJobs(namespace).Get(ctx, name, metav1.GetOptions{})
	default:
		return false, nil
	}
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// fromWatchCache lists without a quorum read of etcd.
func fromWatchCache(selector string) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: selector, ResourceVersion: "0"}
}

// pointersTo points at each item of a list, in place.
func pointersTo[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
