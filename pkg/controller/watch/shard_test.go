package watch

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

const shardKey = "flinkfsm.io/shard"

// What a shard does not select is listed by negating each of its requirements; a requirement that
// cannot be negated lists everything, and the caller filters.
func TestOutsideShardNegatesEachRequirement(t *testing.T) {
	for selector, want := range map[string][]string{
		"flinkfsm.io/shard=a":          {"flinkfsm.io/shard!=a"},
		"team in (x,y),!legacy":        {"legacy", "team notin (x,y)"},
		"tier!=batch,region notin (e)": {"region in (e)", "tier=batch"},
		"replicas>3":                   {""},
	} {
		sel, err := labels.Parse(selector)
		require.NoError(t, err)
		got := outsideShard(sel)
		slices.Sort(got)
		assert.Equal(t, want, got, selector)
	}
}

// queued is what a Watch's event handlers asked to queue, as the loop's keys print.
type queued struct{ keys []string }

// shardQueue is a Watch of shard a with its caches filled by hand and no informers: what the
// event handlers of children, snapshots and session jobs queue is noted in the queued it returns.
func shardQueue(t *testing.T, cached ...metav1.Object) (*Watch, *queued) {
	sel, err := labels.Parse(shardKey + "=a")
	require.NoError(t, err)
	return queueOf(t, sel, cached...)
}

// queueOf is a Watch of the shard (nil for all) with its caches filled by hand and no informers.
func queueOf(t *testing.T, sel labels.Selector, cached ...metav1.Object) (*Watch, *queued) {
	q := &queued{}
	c := &Watch{cfg: Config{Shard: sel, Enqueue: func(kind, namespace, name string) {
		q.keys = append(q.keys, kind+" "+namespace+"/"+name)
	}}, jobIndexes: map[string]cache.Indexer{}, ownIndexes: map[string]map[string]cache.Indexer{}}
	byKind := map[string]cache.Indexer{}
	for _, kind := range []string{v1beta1.FlinkApplicationKind, v1beta1.FlinkSessionClusterKind, v1beta1.FlinkSessionJobKind} {
		byKind[kind] = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{clusterIndex: sessionJobCluster})
	}
	c.ownIndexes[metav1.NamespaceAll], c.jobIndexes[metav1.NamespaceAll] = byKind, byKind[v1beta1.FlinkSessionJobKind]
	for _, o := range cached {
		kind := map[string]string{"*v1beta1.FlinkApplication": v1beta1.FlinkApplicationKind, "*v1beta1.FlinkSessionCluster": v1beta1.FlinkSessionClusterKind,
			"*v1beta1.FlinkSessionJob": v1beta1.FlinkSessionJobKind}[reflectName(o)]
		require.NoError(t, byKind[kind].Add(o))
	}
	return c, q
}

func reflectName(o any) string { return fmt.Sprintf("%T", o) }

// drain is what was queued since the last drain, each key once, in order.
func (q *queued) drain() []string {
	out := slices.Compact(slices.Sorted(slices.Values(q.keys)))
	q.keys = nil
	return out
}

// Children, HA ConfigMaps, FlinkSnapshots and session jobs wake only owners in the shard: an
// owner of another shard is never queued, so never looked at.
func TestOnlyOwnersInTheShardAreWoken(t *testing.T) {
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	c, q := shardQueue(t, &v1beta1.FlinkApplication{ObjectMeta: meta("mine")}, &v1beta1.FlinkSessionCluster{ObjectMeta: meta("session")})
	controlledBy := func(kind, name string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-jm",
			OwnerReferences: []metav1.OwnerReference{{Kind: kind, Name: name, Controller: ptr.To(true)}}}}
	}
	for _, d := range []*appsv1.Deployment{controlledBy(v1beta1.FlinkApplicationKind, "mine"), controlledBy(v1beta1.FlinkApplicationKind, "theirs"),
		controlledBy(v1beta1.FlinkSessionClusterKind, "session"), controlledBy(v1beta1.FlinkSessionClusterKind, "their-session")} {
		c.enqueueOwner(d)
	}
	c.enqueueOwner(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p", Labels: map[string]string{k8.AppLabel: "theirs"}}})
	assert.Equal(t, []string{"FlinkApplication jobs/mine", "FlinkSessionCluster jobs/session"}, q.drain())

	now := metav1.Now()
	for _, s := range []*v1beta1.FlinkSnapshot{
		{ObjectMeta: meta("s1"), Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: v1beta1.FlinkApplicationKind, Name: "mine"}}},
		{ObjectMeta: meta("s2"), Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: v1beta1.FlinkApplicationKind, Name: "theirs"}}},
		// Deleted: an orphan is looked at by the shard its labels are in.
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3", DeletionTimestamp: &now, Labels: map[string]string{shardKey: "b"}},
			Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: v1beta1.FlinkApplicationKind, Name: "gone"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s4", DeletionTimestamp: &now, Labels: map[string]string{shardKey: "a"}},
			Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: v1beta1.FlinkApplicationKind, Name: "gone"}}},
	} {
		c.enqueueSnapshotOwner(s)
	}
	assert.Equal(t, []string{"FlinkApplication jobs/mine", "FlinkSnapshot jobs/s4"}, q.drain())

	// A session job of this shard naming a cluster of another wakes itself, not the cluster.
	c.addOwn(objectKey{Kind: v1beta1.FlinkSessionClusterKind, ObjectName: cache.ObjectName{Namespace: ns, Name: "their-session"}})
	assert.Empty(t, q.drain())
}

// A delete the informer missed reaches the handlers as a DeletedFinalStateUnknown tombstone that
// carries the last state it knew; the application behind it is woken up all the same.
func TestATombstoneWakesTheApplicationBehindIt(t *testing.T) {
	app := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tomb", UID: "uid-tomb"}}
	app.APIVersion, app.Kind = v1beta1.SchemeGroupVersion.String(), v1beta1.FlinkApplicationKind
	c, q := queueOf(t, nil, app)
	want := []string{"FlinkApplication jobs/tomb"}
	tombstone := func(obj metav1.Object) cache.DeletedFinalStateUnknown {
		return cache.DeletedFinalStateUnknown{Key: obj.GetNamespace() + "/" + obj.GetName(), Obj: obj}
	}
	owned := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{k8.AppLabel: app.Name, k8.HashLabel: "abc"},
			OwnerReferences: []metav1.OwnerReference{k8.OwnerReference(app)}}
	}
	jobManagerPod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
			k8.AppLabel: app.Name, k8.HashLabel: "abc", k8.ComponentLabel: "jobmanager",
		}, OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name + "-rs", UID: "rs",
			Controller: ptr.To(true)}}}}
	}

	c.enqueueOwner(tombstone(&appsv1.Deployment{ObjectMeta: owned("tomb-abc-jm")}))
	assert.Equal(t, want, q.drain(), "tombstone of a Deployment")
	c.enqueueOwner(tombstone(&corev1.Service{ObjectMeta: owned("tomb-abc")}))
	assert.Equal(t, want, q.drain(), "tombstone of a Service")
	c.enqueueOwner(tombstone(clusters.PodForCache(jobManagerPod("tomb-abc-jm-0"))))
	assert.Equal(t, want, q.drain(), "tombstone of a JobManager pod, as the pod cache keeps it")
	c.enqueueOwner(tombstone(jobManagerPod("tomb-abc-jm-1")))
	assert.Equal(t, want, q.drain(), "tombstone of a whole JobManager pod")
	c.enqueue(tombstone(app))
	assert.Equal(t, want, q.drain(), "tombstone of the application")
}
