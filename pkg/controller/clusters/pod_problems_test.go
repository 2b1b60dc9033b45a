package clusters

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

func TestOnlyPodChangesAPassReadsWakeTheApplication(t *testing.T) {
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "wc-tm-0", Labels: map[string]string{
		k8.AppLabel: "wc", k8.HashLabel: "0123abcd", k8.ComponentLabel: "taskmanager"}}}
	change := func(edit func(p *corev1.Pod)) *CachedPod {
		p := pending.DeepCopy()
		edit(p)
		return PodForCache(p)
	}
	scheduled := change(func(p *corev1.Pod) { p.Spec.NodeName = "node-1" })
	running := change(func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	})
	ready := change(func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	})
	pulling := change(func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "not found"}}}}
	})
	leaving := change(func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} })
	relabelled := change(func(p *corev1.Pod) { p.Labels[k8.HashLabel] = "89abcdef" })

	unchanged := change(func(*corev1.Pod) {})
	assert.False(t, PodChangeMatters(unchanged, scheduled), "bound to a node")
	assert.False(t, PodChangeMatters(scheduled, running), "started, not ready yet")
	assert.True(t, PodChangeMatters(running, ready), "ready")
	assert.True(t, PodChangeMatters(ready, running), "no longer ready")
	assert.True(t, PodChangeMatters(unchanged, pulling), "a problem appeared")
	assert.True(t, PodChangeMatters(unchanged, leaving), "terminating")
	assert.True(t, PodChangeMatters(unchanged, relabelled), "moved to another cluster")
	assert.True(t, PodChangeMatters("not a pod", unchanged))
}
