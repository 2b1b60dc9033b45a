package sessionjob

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// A session job at the edge of a shard (kindpass/shard.go): one of this shard whose session cluster is
// another's.

// heldRecheck is how often a held session job looks whether its cluster still is in another shard.
// A cluster relabelled into this shard wakes it at once; one relabelled elsewhere or deleted does
// not, as this operator does not watch it.
const heldRecheck = time.Minute

// ReasonOtherShard is the Ready condition's reason, and the Event's, of a FlinkSessionJob whose
// FlinkSessionCluster is in another shard.
const ReasonOtherShard = "SessionClusterInAnotherShard"

// holdForOtherShard holds a FlinkSessionJob whose FlinkSessionCluster is not in this shard's cache
// but exists: the cluster, its Flink clusters and its jobs are another operator's, and this one
// neither submits the job there nor takes it for lost. Its Ready condition and an Event say why and
// what to do; nothing else is done, its deletion included, until job and cluster are in one shard.
// held is false when the cluster does not exist (the job waits for it as it always did).
func holdForOtherShard(ctx context.Context, e *kindpass.Environment, m *Memory, job *v1beta1.FlinkSessionJob) (after time.Duration, held bool, err error) {
	cluster, err := e.Apps.FlinkV1beta1().FlinkSessionClusters(job.Namespace).Get(ctx, job.Spec.ClusterName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, true, err
	}
	if e.InShard(cluster) {
		// Relabelled into this shard a moment ago: the cache has not caught up yet.
		return fsm.StaleCacheRetry, true, nil
	}
	msg := fmt.Sprintf("FlinkSessionCluster %s is in another shard: %s does not select its labels {%s}. A session job and its "+
		"cluster must be in one shard; nothing is done for this job, its deletion included, until it is labelled into the "+
		"cluster's shard or the cluster into this one", cluster.Name, e.DescribeShard(), labels.Set(cluster.Labels))
	working := job.DeepCopy()
	p := newPass(ctx, e, m, job)
	p.Bind(Subject{working}, Subject{job})
	if c := meta.FindStatusCondition(p.Machine.Conditions, v1beta1.ConditionReady); c != nil && c.Status == metav1.ConditionFalse &&
		c.Reason == ReasonOtherShard && c.Message == msg {
		return heldRecheck, true, nil
	}
	p.Machine.Reason = msg
	fsm.SetCondition(p.Machine, metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: ReasonOtherShard,
		Message: msg, ObservedGeneration: job.Generation}, p.Now)
	p.Showable()
	if err := kindpass.Persist(p.Pass); err != nil {
		return 0, true, err
	}
	e.Recorder.Event(working, kindpass.EventType(true), ReasonOtherShard, msg)
	return heldRecheck, true, nil
}
