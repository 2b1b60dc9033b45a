package flinkapplication

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// The cluster operations are package clusters'; these take the pass, hand it the values it reads,
// and keep in the working copy what they wrote.

// fieldManager names the operator's writes in managedFields.
const fieldManager = "flinkfsm"

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
	return rc.CreateCluster(owner, hash, version)
}

// allAtOnce runs the independent requests of one step side by side (clusters.AllAtOnce).
func allAtOnce(requests []func() error) error { return clusters.AllAtOnce(requests) }

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
	svc, err := clusters.PointService(rc, rc.Writer(), flink.RenderGenericService(rc.App, hash), rc.GenericService)
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

// The Kubernetes objects of one Flink cluster are package clusters'. The names below keep the
// handlers' words for them; what takes the pass (*Context) turns its values into the working copy,
// Events and step errors.

// ClusterObjects are the Kubernetes objects of one Flink cluster.
type ClusterObjects = clusters.Objects

// cachedPod is all the pod cache keeps of a pod.
type cachedPod = clusters.CachedPod

type (
	namespaceCache = clusters.NamespaceCache
)

// stepsPerPod are the steps a pod takes in starting.
const stepsPerPod = clusters.StepsPerPod

func replicas(d *appsv1.Deployment) int32 { return clusters.Replicas(d) }

// kubeError classifies a failed write of a Deployment or Service (clusters.KubeError).
func kubeError(step string, err error) error { return stepError(clusters.KubeError(step, err)) }

// startingClusterProgress is the progress of the cluster an application's deployment starts.
func startingClusterProgress(rc *Context) fsm.Steps {
	return fsm.Steps(rc.Clusters[jobstate.TargetCluster(&rc.App.Status.JobOwnerStatus)].Steps())
}

// stepError carries a failed write of package clusters on as the job core's step error
// (lifecycle.StepError).
func stepError(err error) error { return lifecycle.StepError(err) }
