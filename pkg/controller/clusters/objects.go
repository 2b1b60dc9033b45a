package clusters

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// Objects are the Kubernetes objects of one Flink cluster.
type Objects struct {
	Hash        string
	JobManager  *appsv1.Deployment
	TaskManager *appsv1.Deployment
	Service     *corev1.Service
	// VersionService is the Service named after the cluster's BlueGreen colour, if it has one.
	VersionService *corev1.Service
	// LogConfig is the ConfigMap of the cluster's logging configuration, if it has one.
	LogConfig *corev1.ConfigMap
	// JobManagerPods counts the cluster's JobManager pods, terminating ones included: a JobManager
	// whose Deployment is gone may still run its job until its pod is.
	JobManagerPods int
	// ReadyJobManagerPods and ReadyTaskManagerPods count the cluster's Ready pods that are not
	// terminating.
	ReadyJobManagerPods, ReadyTaskManagerPods int
	// Problem says why a pod of the cluster does not run, as Kubernetes reports it (unschedulable,
	// an image that cannot be pulled, a crash loop); "" when none is known.
	Problem string
	// Progress counts the steps Kubernetes has taken in starting the cluster's pods: one for each
	// pod that exists, is scheduled, runs, and is Ready, terminating and ended pods not counted, and
	// no more for a component than its Deployment's pods can take. A starting cluster's deadline
	// bounds the time it goes without a new step (progress.go).
	Progress int
	// MostProgress is the most steps its Deployments' pods can take: four each.
	MostProgress int
	// jobManagerSteps and taskManagerSteps are the steps of the cluster's pods of each component,
	// before countSteps caps them.
	jobManagerSteps, taskManagerSteps int
}

// Ready tells whether the cluster's JobManager and all its TaskManagers run: Kubernetes reports its
// Deployments so, or, sooner, its pods are Ready. A Deployment's status follows its pods through the
// ReplicaSet and Deployment controllers, a second or more later on a busy control plane; the pods
// are what the job runs in, and Flink's own slot count is checked before a job is submitted.
func (c *Objects) Ready() bool {
	if c == nil || c.JobManager == nil || c.TaskManager == nil || c.Service == nil {
		return false
	}
	jm, tm := c.JobManager, c.TaskManager
	deployments := jm.Status.ObservedGeneration >= jm.Generation && jm.Status.AvailableReplicas >= 1 &&
		tm.Status.ObservedGeneration >= tm.Generation && tm.Status.ReadyReplicas >= Replicas(tm)
	pods := c.ReadyJobManagerPods >= 1 && c.ReadyTaskManagerPods >= int(Replicas(tm))
	return deployments || pods
}

// JobManagerGone tells whether the cluster's JobManager can no longer run anything: its Deployment
// is gone and no JobManager pod is left, terminating ones included. A cluster not found is gone.
func (c *Objects) JobManagerGone() bool {
	return c == nil || c.JobManager == nil && c.JobManagerPods == 0
}

// Empty tells whether none of the cluster's own objects is left (its pods aside).
func (c *Objects) Empty() bool {
	return c.JobManager == nil && c.TaskManager == nil && c.Service == nil && c.VersionService == nil && c.LogConfig == nil
}

// Replicas is how many pods a Deployment asks for: none when the Deployment is missing (deleted
// under a running job, which the autoscaler's apply path must survive), one when unset.
func Replicas(d *appsv1.Deployment) int32 {
	if d == nil {
		return 0
	}
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// PodReady tells whether the pod is Ready and not on its way out.
func PodReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Group sorts the owner's Deployments and Services into clusters by hash, counts each cluster's
// pods, and finds its generic Service. Objects the owner does not control are left out.
func Group(owner flink.ClusterOwner, deploys []*appsv1.Deployment, services []*corev1.Service, pods []*CachedPod,
	configMaps []*corev1.ConfigMap) (map[string]*Objects, *corev1.Service) {
	clusters := map[string]*Objects{}
	get := func(hash string) *Objects {
		if clusters[hash] == nil {
			clusters[hash] = &Objects{Hash: hash}
		}
		return clusters[hash]
	}
	for _, d := range deploys {
		hash := k8.HashOf(d)
		if hash == "" || !owner.IsOwnerOf(d) {
			continue
		}
		switch d.Name {
		case flink.JobManagerNameOf(owner.Name, hash):
			get(hash).JobManager = d
		case flink.TaskManagerNameOf(owner.Name, hash):
			get(hash).TaskManager = d
		}
	}
	var generic *corev1.Service
	for _, s := range services {
		if !owner.IsOwnerOf(s) {
			continue
		}
		if s.Name == flink.GenericServiceNameOf(owner.Name) {
			generic = s
		} else if hash := k8.HashOf(s); hash != "" && s.Name == flink.VersionedServiceNameOf(owner.Name, hash) {
			get(hash).Service = s
		} else if v := s.Labels[flink.VersionLabel]; hash != "" && v != "" && s.Name == flink.VersionServiceNameOf(owner.Name, v1beta1.FlinkApplicationVersion(v)) {
			get(hash).VersionService = s
		}
	}
	for _, cm := range configMaps {
		if hash := k8.HashOf(cm); hash != "" && cm.Name == flink.LogConfigName(owner.Name, hash) && owner.IsOwnerOf(cm) {
			get(hash).LogConfig = cm
		}
	}
	for _, p := range pods {
		// Pods are owned by ReplicaSets; the labels tie them to a cluster of this owner.
		hash := k8.HashOf(p)
		if p.Labels[k8.AppLabel] != owner.Name || hash == "" {
			continue
		}
		c := get(hash)
		switch p.Labels[k8.ComponentLabel] {
		case flink.JobManagerComponent:
			c.jobManagerSteps += p.Progress
			c.JobManagerPods++
			if p.Ready {
				c.ReadyJobManagerPods++
			}
		case flink.TaskManagerComponent:
			c.taskManagerSteps += p.Progress
			if p.Ready {
				c.ReadyTaskManagerPods++
			}
		}
		if p.Problem != "" && c.Problem == "" {
			c.Problem = p.Problem
		}
	}
	for _, c := range clusters {
		c.countSteps()
	}
	return clusters, generic
}
