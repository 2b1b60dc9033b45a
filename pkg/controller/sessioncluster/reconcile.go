package sessioncluster

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// Reconcile runs one pass of the state machine for one FlinkSessionCluster. It returns when to look
// again; negative means only on a change.
func Reconcile(ctx context.Context, e *kindpass.Environment, namespace, name string) (time.Duration, error) {
	cluster, err := e.Sessions.SessionCluster(namespace, name)
	if apierrors.IsNotFound(err) {
		e.Forget(KindName + "/" + namespace + "/" + name)
		return fsm.UntilChanged, nil
	}
	if err != nil {
		return 0, err
	}
	if e.StaleCache(KindName, cluster) {
		return fsm.StaleCacheRetry, nil
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
	p := newPass(ctx, e, cluster, working)
	p.Hash, p.Clusters, p.HAConfigMaps, p.ClusterOwner = flink.SessionClusterHash(cluster), clusters, ha, owner
	p.Jobs, p.OtherShardJobs = jobs, others
	p.Bind(Subject{p.Cluster}, Subject{cluster})
	admitLeftJobs(p, cluster.Status.Jobs)
	return kindpass.Run(p, pass)
}

// machine is the phase machine (fsm.Machine) over the session cluster's pass.
var machine = fsm.Machine[*Pass]{
	Pass:  func(p *Pass) *fsm.Pass { return p.Pass.Pass.Pass },
	Table: func(*Pass) map[fsm.Phase]fsm.Spec[*Pass] { return table },
	Key:   func(p *Pass) string { return p.Key() },
	DeletionRequested: func(*Pass) string {
		return "FlinkSessionCluster deleted; it is removed once no FlinkSessionJob names it"
	},
	Classify: func(err error) (string, bool) { return jobs.ErrorMethod(err), jobs.IsRetryable(err) },
}

// pass is the session cluster's pass (fsm.Kind).
var pass = kindpass.PassOf(machine, KindName, kindpass.Steps[*Pass]{Summarize: summarize})

// summarize sets the cluster's Ready and Progressing conditions: Ready while the running Flink
// cluster serves jobs; Progressing while a new one starts or jobs still move to it.
func summarize(p *Pass) {
	st, m := p.Owned, p.Machine
	m.ObservedGeneration = p.Meta.Generation
	phase := p.Subject.Phase().Normalized()
	ready := metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(phase),
		ObservedGeneration: p.Meta.Generation, Message: m.Reason}
	if st.DeployHash != "" && p.Clusters[st.DeployHash].Ready() && phase != fsm.PhaseDeleting {
		ready.Status, ready.Reason = metav1.ConditionTrue, "ClusterReady"
		ready.Message = fmt.Sprintf("Flink cluster %s serves jobs", st.DeployHash)
	}
	progressing := metav1.Condition{Type: v1beta1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: string(phase),
		ObservedGeneration: p.Meta.Generation}
	moving := false
	for hash := range p.Clusters {
		if hash != st.DeployHash && len(jobsOnCluster(p, hash)) > 0 {
			moving = true
		}
	}
	switch {
	case phase == fsm.PhaseClusterStarting || phase == fsm.PhaseUpdating || phase == fsm.PhaseNew:
		progressing.Status = metav1.ConditionTrue
	case moving:
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, "JobsMoving", m.Reason
	}
	fsm.SetCondition(m, ready, p.Now)
	fsm.SetCondition(m, progressing, p.Now)
}
