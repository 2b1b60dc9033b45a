package sessionjob

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// Reconcile runs one pass of the state machine for one FlinkSessionJob on the Flink clusters of
// the FlinkSessionCluster it names. It returns when to look again; negative means only on a change.
func Reconcile(ctx context.Context, e *kindpass.Environment, m *Memory, namespace, name string) (time.Duration, error) {
	job, err := e.Sessions.SessionJob(namespace, name)
	if apierrors.IsNotFound(err) {
		e.Forget(KindName + "/" + namespace + "/" + name)
		return fsm.UntilChanged, nil
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
	if e.StaleCache(KindName, job) {
		return fsm.StaleCacheRetry, nil
	}
	if cluster == nil && e.Shard != nil && job.Spec.ClusterName != "" {
		// Not in the cache may be in another shard: then the job is held, not left to think its
		// cluster gone (shard_edges.go).
		if after, held, err := holdForOtherShard(ctx, e, m, job); held || err != nil {
			return after, err
		}
	}
	// Without its FlinkSessionCluster the job has no cluster to run on; the owner still names
	// where its clusters would be.
	owner := flink.ClusterOwner{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: job.Spec.ClusterName}}
	objects := map[string]*clusters.Objects{}
	var ha map[string][]string
	if cluster != nil {
		owner = flink.OwnerFromSessionCluster(cluster)
		if objects, _, err = e.Observer.Owned(owner); err != nil {
			return 0, err
		}
		if ha, err = e.Observer.HAConfigMaps(namespace, cluster.Name); err != nil {
			return 0, err
		}
	}
	snapshots, err := e.Observer.Snapshots(namespace, KindName, name)
	if err != nil {
		return 0, err
	}
	working := job.DeepCopy()
	p := newPass(ctx, e, m, job)
	p.Hash, p.Clusters, p.Snapshots, p.ClusterOwner = Hash(job), objects, snapshots, owner
	p.Cluster, p.ClusterHAConfigMaps = cluster, ha
	p.Settings = settings(job, cluster)
	p.Bind(Subject{working}, Subject{job})
	kindpass.ResolveRestoreSnapshot(p.Pass)
	return kindpass.Run(p, pass)
}

// machine is the phase machine (fsm.Machine) over the session job's pass.
var machine = fsm.Machine[*Pass]{
	Pass:  func(p *Pass) *fsm.Pass { return p.Pass.Pass.Pass },
	Table: func(*Pass) map[fsm.Phase]fsm.Spec[*Pass] { return table },
	Key:   func(p *Pass) string { return p.Key() },
	DeletionRequested: func(p *Pass) string {
		return fmt.Sprintf("%s deleted; deleteMode %s", KindName, p.Settings.DeleteMode)
	},
	HeldBy:   func(p *Pass, _ error) string { return jobManagerHABringsBack(p) },
	Classify: func(err error) (string, bool) { return jobs.ErrorMethod(err), jobs.IsRetryable(err) },
}

// pass is the session job's pass (fsm.Kind).
var pass = kindpass.PassOf(machine, KindName, kindpass.Steps[*Pass]{Summarize: func(p *Pass) { p.Summarize() }})

// Drawn is what the docs draw of the kind's state machine.
func Drawn() fsm.Drawn[*Pass] {
	listed := make([]string, len(v1beta1.SessionJobPhases))
	for i, p := range v1beta1.SessionJobPhases {
		listed[i] = string(p)
	}
	return fsm.Drawn[*Pass]{Table: table, Listed: listed, Global: fsm.GlobalExits, EndOfLife: "job handled per deleteMode, finalizer removed"}
}
