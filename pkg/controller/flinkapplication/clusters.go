package flinkapplication

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

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

func podForCache(p *corev1.Pod) *cachedPod { return clusters.PodForCache(p) }

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
