package flinkapplication

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessioncluster"
)

// ReconcileSessionJob runs one pass of the state machine for one FlinkSessionJob on the Flink
// clusters of the FlinkSessionCluster it names.
func (e *Environment) ReconcileSessionJob(ctx context.Context, namespace, name string) (time.Duration, error) {
	job, err := e.Sessions.SessionJob(namespace, name)
	if apierrors.IsNotFound(err) {
		e.forgetApp(sessionJobKindName + "/" + namespace + "/" + name)
		return untilChanged, nil
	}
	if err != nil {
		return 0, err
	}
	cluster, err := e.Sessions.SessionCluster(namespace, job.Spec.ClusterName)
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	if err != nil {
		cluster = nil
	}
	if e.staleCache(sessionJobKindName, job) {
		return staleCacheRetry, nil
	}
	if cluster == nil && e.Shard != nil && job.Spec.ClusterName != "" {
		// Not in the cache may be in another shard: then the job is held, not left to think its
		// cluster gone (shard_edges.go).
		if after, held, err := e.holdForOtherShard(ctx, job); held || err != nil {
			return after, err
		}
	}
	// Without its FlinkSessionCluster the job has no cluster to run on; the owner still names
	// where its clusters would be.
	owner := flink.ClusterOwner{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: job.Spec.ClusterName}}
	clusters := map[string]*ClusterObjects{}
	var ha map[string][]string
	if cluster != nil {
		owner = flink.OwnerFromSessionCluster(cluster)
		if clusters, _, err = e.Observer.Owned(owner); err != nil {
			return 0, err
		}
		if ha, err = e.Observer.HAConfigMaps(namespace, cluster.Name); err != nil {
			return 0, err
		}
	}
	snapshots, err := e.Observer.Snapshots(namespace, sessionJobKindName, name)
	if err != nil {
		return 0, err
	}
	working := job.DeepCopy()
	rc := newContext(ctx, &fsm.Pass{Config: e.Config, Now: e.Clock.Now()}, sessionJobKind, e)
	rc.Hash, rc.Clusters, rc.Snapshots, rc.ClusterOwner = sessionJobHash(job), clusters, snapshots, owner
	rc.session = &sessionState{ClusterName: job.Spec.ClusterName, Cluster: cluster, Job: job, ClusterHAConfigMaps: ha}
	rc.Settings = sessionJobSettings(job, cluster)
	rc.bind(sessionJobSubject{working}, sessionJobSubject{job})
	kindpass.ResolveRestoreSnapshot(rc.Pass)
	return e.runPass(rc, sessionJobPass)
}

// ReconcileSessionCluster runs one pass of the state machine for one FlinkSessionCluster
// (sessioncluster.Reconcile).
func (e *Environment) ReconcileSessionCluster(ctx context.Context, namespace, name string) (time.Duration, error) {
	return sessioncluster.Reconcile(ctx, &e.Environment, namespace, name)
}

// runPass is the one pass of every kind (kindpass.Run).
func (e *Environment) runPass(rc *Context, k *fsm.Kind[*Context]) (time.Duration, error) {
	return kindpass.Run(rc, k)
}

// The passes of the two kinds, which differ in how their status is migrated, summarized and
// written.
var (
	applicationPass = kindpass.PassOf(machine, applicationKindName, kindpass.Steps[*Context]{
		Migrate: migrateStatus, Summarize: summarize, Write: writeStatus})
	sessionJobPass = kindpass.PassOf(machine, sessionJobKindName, kindpass.Steps[*Context]{Summarize: summarize})
)
