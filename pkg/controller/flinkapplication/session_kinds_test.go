package flinkapplication

import (
	"context"
	"sync"
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

// sessionJobMemories keeps each environment's session job memory (sessionjob.Memory), which the
// operator's wiring keeps beside the environment.
var sessionJobMemories sync.Map

// sessionJobs is the environment's session job memory.
func (e *Environment) sessionJobs() *sessionjob.Memory {
	m, _ := sessionJobMemories.LoadOrStore(e, &sessionjob.Memory{})
	return m.(*sessionjob.Memory)
}

// ReconcileSessionJob runs one pass of the state machine for one FlinkSessionJob.
func (e *Environment) ReconcileSessionJob(ctx context.Context, namespace, name string) (time.Duration, error) {
	return sessionjob.Reconcile(ctx, &e.Environment, e.sessionJobs(), namespace, name)
}

// ReconcileSessionCluster runs one pass of the state machine for one FlinkSessionCluster.
func (e *Environment) ReconcileSessionCluster(ctx context.Context, namespace, name string) (time.Duration, error) {
	return sessioncluster.Reconcile(ctx, &e.Environment, namespace, name)
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
