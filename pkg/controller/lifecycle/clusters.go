package lifecycle

import (
	"slices"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// The writes that create, scale and delete the object's Flink clusters (package clusters), through
// the pass: behind its fence, with its Events, and the pass's view of the clusters kept current.

// Writer is how the pass writes the Kubernetes objects of its clusters: in the object's
// namespace, as the operator, behind the pass's fence.
func (p *Pass) Writer() clusters.Writer {
	return clusters.Writer{Kube: p.Kube, Namespace: p.Meta.Namespace, FieldManager: p.FieldManager, Fence: p.MayAct}
}

// MayAct is nil while this replica may change Kubernetes or Flink: it holds its leader lease.
func (p *Pass) MayAct() error {
	if p.Fence == nil {
		return nil
	}
	if err := p.Fence(); err != nil {
		return jobs.Retryable("Fence", err)
	}
	return nil
}

// Announce tells the Events a cluster write returned as the pass's.
func (p *Pass) Announce(events []clusters.Event) {
	for _, e := range events {
		p.Event(e.Warning, e.Reason, e.Message)
	}
}

// CreateCluster creates what is missing of the owner's cluster with this hash, as the version
// names it (a BlueGreen colour; "" for none). Its JobManager keeps a job's checkpoints for as long
// as the operator may take to record one.
func (p *Pass) CreateCluster(owner flink.ClusterOwner, hash string, version v1beta1.FlinkApplicationVersion) error {
	owner.KeepCheckpointsFor = p.Config.CheckpointRecordInterval.Duration + p.Config.StatusPollInterval.Duration + p.CheckpointRecords().Delay()
	return StepError(clusters.Create(p, p.Writer(), p.PodPolicy, owner, hash, version, p.Clusters[hash]))
}

// ScaleTaskManagers sets the TaskManagers of the cluster with this hash to want.
func (p *Pass) ScaleTaskManagers(hash string, want int32) error {
	c := p.Clusters[hash]
	tm, events, err := clusters.Scale(p, p.Writer(), c, want)
	if err != nil {
		return StepError(err)
	}
	p.Announce(events)
	if c != nil {
		c.TaskManager = tm
	}
	return nil
}

// DeleteCluster deletes the cluster with this hash, and forgets it in the pass.
func (p *Pass) DeleteCluster(hash string) error {
	c := p.Clusters[hash]
	if c == nil {
		return nil
	}
	if err := clusters.Delete(p, p.Writer(), p.Meta.Name, hash, c); err != nil {
		return StepError(err)
	}
	delete(p.Clusters, hash)
	return nil
}

// DeleteClustersExcept deletes every cluster of the object but those with the hashes kept, and
// returns the hashes it deleted.
func (p *Pass) DeleteClustersExcept(keep ...string) ([]string, error) {
	var gone []string
	for hash, c := range p.Clusters {
		if hash != "" && slices.Contains(keep, hash) || c.Empty() {
			continue
		}
		if err := p.DeleteCluster(hash); err != nil {
			return gone, err
		}
		gone = append(gone, hash)
	}
	return gone, nil
}

// StepError is a cluster write's error as a step's: permanent when the API server refused the
// object itself, retryable otherwise.
func StepError(err error) error {
	ce, ok := err.(*clusters.Error)
	if !ok {
		return err
	}
	if ce.Permanent {
		return jobs.Permanent(ce.Step, ce.Err)
	}
	return jobs.Retryable(ce.Step, ce.Err)
}
