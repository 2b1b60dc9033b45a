package flinkapplication

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
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

// ReconcileSessionCluster runs one pass of the state machine for one FlinkSessionCluster.
func (e *Environment) ReconcileSessionCluster(ctx context.Context, namespace, name string) (time.Duration, error) {
	cluster, err := e.Sessions.SessionCluster(namespace, name)
	if apierrors.IsNotFound(err) {
		e.forgetApp(sessionClusterKindName + "/" + namespace + "/" + name)
		return untilChanged, nil
	}
	if err != nil {
		return 0, err
	}
	if e.staleCache(sessionClusterKindName, cluster) {
		return staleCacheRetry, nil
	}
	jobs, err := e.Sessions.SessionJobsOf(namespace, name)
	if err != nil {
		return 0, err
	}
	working := cluster.DeepCopy()
	owner := flink.OwnerFromSessionCluster(working)
	clusters, _, err := e.Observer.Owned(owner)
	if err != nil {
		return 0, err
	}
	ha, err := e.Observer.HAConfigMaps(namespace, name)
	if err != nil {
		return 0, err
	}
	var others []*v1beta1.FlinkSessionJob
	if e.Shard != nil && (cluster.DeletionTimestamp != nil || len(clusters) > 1) {
		// Before a Flink cluster or the finalizer goes: jobs of other shards may still name it.
		if others, err = e.OtherShardJobsOf(ctx, namespace, name); err != nil {
			return 0, err
		}
	}
	working.Status.Jobs = sessionJobRefs(jobs)
	rc := newContext(ctx, &fsm.Pass{Config: e.Config, Now: e.Clock.Now()}, sessionClusterKind, e)
	rc.Hash, rc.Clusters, rc.HAConfigMaps, rc.ClusterOwner = flink.SessionClusterHash(cluster), clusters, ha, owner
	rc.session = &sessionState{ClusterName: name, Cluster: cluster, Jobs: jobs, OtherShardJobs: others}
	rc.bind(sessionClusterSubject{working}, sessionClusterSubject{cluster})
	admitLeftJobs(rc, cluster.Status.Jobs)
	return e.runPass(rc, sessionClusterPass)
}

// runPass is the one pass of every kind (kindpass.Run).
func (e *Environment) runPass(rc *Context, k *fsm.Kind[*Context]) (time.Duration, error) {
	return kindpass.Run(rc, k)
}

// The passes of the three kinds, which differ in how their status is migrated, summarized and
// written.
var (
	applicationPass = kindpass.PassOf(machine, applicationKindName, kindpass.Steps[*Context]{
		Migrate: migrateStatus, Summarize: summarize, Write: writeStatus})
	sessionJobPass     = kindpass.PassOf(machine, sessionJobKindName, kindpass.Steps[*Context]{Summarize: summarize})
	sessionClusterPass = kindpass.PassOf(machine, sessionClusterKindName, kindpass.Steps[*Context]{Summarize: summarizeSessionCluster})
)

// summarizeSessionCluster sets the cluster's Ready and Progressing conditions: Ready while the
// running Flink cluster serves jobs; Progressing while a new one starts or jobs still move to it.
func summarizeSessionCluster(rc *Context) {
	st, m := rc.Owned, rc.Machine
	m.ObservedGeneration = rc.Meta.Generation
	phase := rc.Subject.Phase().Normalized()
	ready := metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(phase),
		ObservedGeneration: rc.Meta.Generation, Message: m.Reason}
	if st.DeployHash != "" && rc.Clusters[st.DeployHash].Ready() && phase != PhaseDeleting {
		ready.Status, ready.Reason = metav1.ConditionTrue, "ClusterReady"
		ready.Message = fmt.Sprintf("Flink cluster %s serves jobs", st.DeployHash)
	}
	progressing := metav1.Condition{Type: v1beta1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: string(phase),
		ObservedGeneration: rc.Meta.Generation}
	moving := false
	for hash := range rc.Clusters {
		if hash != st.DeployHash && len(jobsOnCluster(rc, hash)) > 0 {
			moving = true
		}
	}
	switch {
	case phase == PhaseClusterStarting || phase == PhaseUpdating || phase == PhaseNew:
		progressing.Status = metav1.ConditionTrue
	case moving:
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, "JobsMoving", m.Reason
	}
	fsm.SetCondition(m, ready, rc.Now)
	fsm.SetCondition(m, progressing, rc.Now)
}
