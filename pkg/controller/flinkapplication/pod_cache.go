package flinkapplication

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// cachedPod is all the pod cache keeps of a pod: the answers a pass asks of it, worked out once
// when the pod changes instead of at every pass, and the little metadata that ties it to a cluster.
// A pass only counts a cluster's pods, asks which are Ready and what keeps one from running
// (groupOwned); a corev1.Pod kept for that, even trimmed, is a struct of 1,152 bytes with its
// conditions, container statuses and labels beside it. At 10,000 applications the cache holds
// 30,000 pods, and the collector marks every byte of them in each cycle: the length of its mark
// phases is what the slowest passes wait for.
type cachedPod struct {
	// ObjectMeta keeps the name, namespace, UID, resourceVersion, the deletion timestamp and
	// the three labels the operator reads (app, hash, component): the informer's keys and indexes
	// read it, and k8.HashOf.
	metav1.ObjectMeta
	// ready: the pod is Ready and not on its way out (podReady).
	ready bool
	// progress is the steps Kubernetes took in starting it (podProgress).
	progress int
	// problem says what keeps it from running, in Kubernetes' words; "" when nothing does
	// (podProblem).
	problem string
}

// podForCache is what the cache keeps of p.
func podForCache(p *corev1.Pod) *cachedPod {
	labels := make(map[string]string, 3)
	for _, k := range [...]string{k8.AppLabel, k8.HashLabel, k8.ComponentLabel} {
		if v, ok := p.Labels[k]; ok {
			labels[k] = v
		}
	}
	return &cachedPod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			DeletionTimestamp: p.DeletionTimestamp, Labels: labels},
		ready: podReady(p), progress: podProgress(p), problem: podProblem(p),
	}
}

// GetObjectKind is runtime.Object's: the cache never asks a pod its kind.
func (p *cachedPod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject is runtime.Object's.
func (p *cachedPod) DeepCopyObject() runtime.Object {
	c := *p
	p.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// terminating tells whether the pod is on its way out.
func (p *cachedPod) terminating() bool { return p.DeletionTimestamp != nil }
