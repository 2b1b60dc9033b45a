package flinkapplication

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessioncluster"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
	"github.com/flinkfsm/flinkfsm/pkg/controller/watch"
)

// The world runs the session kinds beside the application over one environment, as the operator
// does (pkg/operator's kinds): the scenarios where an application and session jobs meet live here.

const (
	sessionJobKindName     = v1beta1.FlinkSessionJobKind
	sessionClusterKindName = v1beta1.FlinkSessionClusterKind
	snapshotKindName       = v1beta1.FlinkSnapshotKind
)

// sessionJobs is the session job memory (sessionjob.Memory) of the operator process the world
// runs now: each environment, a process, has its own, which the operator's list of kinds keeps
// beside it. Kept by the world, so that it goes with the world.
func (w *world) sessionJobs() *sessionjob.Memory {
	w.sessionJobMu.Lock()
	defer w.sessionJobMu.Unlock()
	if w.sessionJobMemory == nil {
		w.sessionJobMemory = map[*Environment]*sessionjob.Memory{}
	}
	m, ok := w.sessionJobMemory[w.env]
	if !ok {
		m = &sessionjob.Memory{}
		w.sessionJobMemory[w.env] = m
	}
	return m
}

// reconcileSessionJob runs one pass of the state machine for one FlinkSessionJob.
func (w *world) reconcileSessionJob(ctx context.Context, namespace, name string) (time.Duration, error) {
	return sessionjob.Reconcile(ctx, &w.env.Environment, w.sessionJobs(), namespace, name)
}

// reconcileSessionCluster runs one pass of the state machine for one FlinkSessionCluster.
func (w *world) reconcileSessionCluster(ctx context.Context, namespace, name string) (time.Duration, error) {
	return sessioncluster.Reconcile(ctx, &w.env.Environment, namespace, name)
}

// objectKey names an object across kinds (kindpass.ObjectKey).
func objectKey(kind string, obj metav1.Object) string { return kindpass.ObjectKey(kind, obj) }

// groupOwned sorts the application's Deployments and Services into clusters by hash, counts each
// cluster's pods, and finds its generic Service (clusters.Group).
func groupOwned(owner flink.ClusterOwner, deploys []*appsv1.Deployment, services []*corev1.Service, pods []*cachedPod,
	configMaps []*corev1.ConfigMap) (map[string]*ClusterObjects, *corev1.Service) {
	return clusters.Group(owner, deploys, services, pods, configMaps)
}

// haConfigMapsByHash groups HA ConfigMaps by the hash of the cluster they belong to.
func haConfigMapsByHash(objs []interface{}) map[string][]string {
	return watch.HAConfigMapsByHash(objs)
}
