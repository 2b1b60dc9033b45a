package flinkapplication

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The cluster operations are package clusters'; these take the pass, hand it the values it reads,
// and keep in the working copy what they wrote.

// fieldManager names the operator's writes in managedFields.
const fieldManager = "flinkfsm"

// writer makes the pass's writes of its clusters' objects, fenced by mayAct.
func (rc *Context) writer() clusters.Writer {
	return clusters.Writer{Kube: rc.env.Kube, Namespace: rc.Meta.Namespace, FieldManager: fieldManager, Fence: rc.mayAct}
}

// announce records the Events of a cluster operation as the pass's.
func (rc *Context) announce(events []clusters.Event) {
	for _, e := range events {
		rc.Event(e.Warning, e.Reason, e.Message)
	}
}

// podPolicy is the pod policy of the pass's Namespace, read through the Namespace cache.
func (rc *Context) podPolicy() clusters.PodPolicy {
	return clusters.PodPolicy{Kube: rc.env.Kube, Namespaces: &rc.env.namespaces, Clock: rc.env.Clock,
		AdmissionPolicyEnforced: rc.Config.AdmissionPolicyEnforced}
}

// createCluster creates whatever of the cluster with this hash does not exist yet, rendered from
// owner in the colour its record has (clusters.Create).
func createCluster(rc *Context, owner flink.ClusterOwner, hash string) error {
	var version v1beta1.FlinkApplicationVersion
	if rc.App != nil {
		version = versionOf(&rc.App.Status, hash)
	}
	// A checkpoint the operator records must outlive the look after next at the job's checkpoints
	// (checkpointRecordWindow), or a job lost with its JobManager would restart from one Flink
	// deleted meanwhile; a record in the checkpoint book waits for its page's write as well.
	owner.KeepCheckpointsFor = rc.Config.CheckpointRecordInterval.Duration + rc.Config.StatusPollInterval.Duration + rc.CheckpointRecords().Delay()
	return stepError(clusters.Create(rc, rc.writer(), rc.podPolicy(), owner, hash, version, rc.Clusters[hash]))
}

// allAtOnce runs the independent requests of one step side by side (clusters.AllAtOnce).
func allAtOnce(requests []func() error) error { return clusters.AllAtOnce(requests) }

// scaleTaskManagers sets the TaskManager replicas of the cluster with this hash, for a parallelism
// changed in place.
func scaleTaskManagers(rc *Context, hash string, want int32) error {
	c := rc.Clusters[hash]
	tm, events, err := clusters.Scale(rc, rc.writer(), c, want)
	if err != nil {
		return stepError(err)
	}
	rc.announce(events)
	if c != nil {
		c.TaskManager = tm
	}
	return nil
}

// deleteCluster deletes the cluster with this hash (clusters.Delete) and forgets it.
func deleteCluster(rc *Context, hash string) error {
	c := rc.Clusters[hash]
	if c == nil {
		return nil
	}
	if err := clusters.Delete(rc, rc.writer(), rc.Meta.Name, hash, c); err != nil {
		return stepError(err)
	}
	delete(rc.Clusters, hash)
	return nil
}

// deleteClustersExcept removes every owned cluster but the kept ones and says which went.
func deleteClustersExcept(rc *Context, keep ...string) ([]string, error) {
	var gone []string
	for hash, c := range rc.Clusters {
		if contains(keep, hash) || c.Empty() {
			continue
		}
		if err := deleteCluster(rc, hash); err != nil {
			return gone, err
		}
		gone = append(gone, hash)
	}
	return gone, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x != "" && x == s {
			return true
		}
	}
	return false
}

// pointGenericService makes the application's stable Service select the JobManager of this cluster,
// and then sees to the Flink UI's Ingress, which routes to that Service. An Ingress refused is no
// failure of the deploy: Running reports it.
func pointGenericService(rc *Context, hash string) error {
	if err := pointService(rc, hash); err != nil {
		return err
	}
	_, err := ensureUIIngress(rc)
	return err
}

func pointService(rc *Context, hash string) error {
	svc, err := clusters.PointService(rc, rc.writer(), flink.RenderGenericService(rc.App, hash), rc.GenericService)
	if err != nil {
		return stepError(err)
	}
	rc.GenericService = svc
	return nil
}

// selects tells whether the Service selects exactly the pods of this selector (clusters.Selects).
func selects(svc *corev1.Service, selector map[string]string) bool {
	return clusters.Selects(svc, selector)
}
