package clusters

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// CachedPod is all the pod cache keeps of a pod: the answers a pass asks of it, worked out once
// when the pod changes instead of at every pass, and the little metadata that ties it to a cluster.
// A pass only counts a cluster's pods, asks which are Ready and what keeps one from running
// (Group); a corev1.Pod kept for that, even trimmed, is a struct of 1,152 bytes with its
// conditions, container statuses and labels beside it. At 10,000 applications the cache holds
// 30,000 pods, and the collector marks every byte of them in each cycle: the length of its mark
// phases is what the slowest passes wait for.
type CachedPod struct {
	// ObjectMeta keeps the name, namespace, UID, resourceVersion, the deletion timestamp and
	// the three labels the operator reads (app, hash, component): the informer's keys and indexes
	// read it, and k8.HashOf.
	metav1.ObjectMeta
	// Ready: the pod is Ready and not on its way out (PodReady).
	Ready bool
	// Progress is the steps Kubernetes took in starting it (PodProgress).
	Progress int
	// Problem says what keeps it from running, in Kubernetes' words; "" when nothing does
	// (PodProblem).
	Problem string
}

// PodForCache is what the cache keeps of p.
func PodForCache(p *corev1.Pod) *CachedPod {
	labels := make(map[string]string, 3)
	for _, k := range [...]string{k8.AppLabel, k8.HashLabel, k8.ComponentLabel} {
		if v, ok := p.Labels[k]; ok {
			labels[k] = v
		}
	}
	return &CachedPod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			DeletionTimestamp: p.DeletionTimestamp, Labels: labels},
		Ready: PodReady(p), Progress: PodProgress(p), Problem: PodProblem(p),
	}
}

// GetObjectKind is runtime.Object's: the cache never asks a pod its kind.
func (p *CachedPod) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject is runtime.Object's.
func (p *CachedPod) DeepCopyObject() runtime.Object {
	c := *p
	p.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// Terminating tells whether the pod is on its way out.
func (p *CachedPod) Terminating() bool { return p.DeletionTimestamp != nil }
