package flinkapplication

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/watch"
)

// The informers, their caches and what wakes whom are package watch's. What they read besides the
// caches (phase deadlines, the checkpoint book, the autoscaler's vertex names) is handed in here.

// Collector is the Prometheus collector of the per-object series, to register beside the
// controller's metrics.
func (c *Controller) Collector() prometheus.Collector {
	m := watch.ObjectMetrics{
		Deadline: func(kind, namespace, name string) (time.Time, bool) {
			return c.env.Deadline(kind + "/" + namespace + "/" + name)
		},
		VertexName:  func(v v1beta1.VertexScaling) string { return shownVertexName(nameOr(v.Name, v.ID)) },
		MaxVertices: maxTrackedVertices,
	}
	if book := c.env.Book; book != nil {
		m.BookCheckpoint = func(kind, namespace, name string) (string, time.Time, bool) {
			k := checkpointbook.Key{Namespace: namespace, Kind: kind, Name: name}
			page, _ := c.watch.Listers().CheckpointBookPage(namespace, checkpointbook.PageName(k))
			e, ok := book.Newest(k, page)
			return e.JobID, e.At, ok
		}
	}
	return c.watch.Collector(m)
}

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
