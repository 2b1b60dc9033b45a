package watch

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
)

// The caches keep of a Deployment what a pass reads (its replicas, labels, the operator's own
// annotation and its status's replica counts) and not its pod template, selector, strategy, the
// Deployment controller's conditions or other annotations, which the operator rendered or does not
// read and which were most of each of 20,000 cached Deployments at 10,000 applications.
func TestTheCacheKeepsOfADeploymentWhatAPassReads(t *testing.T) {
	n := int32(2)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "wc-1-jm", Generation: 3, Labels: map[string]string{"flink-app": "wc"},
			Annotations:   map[string]string{"flink.k8s.io/checkpoints-retained": "10", "deployment.kubernetes.io/revision": "1"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "flinkfsm"}}},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"flink-app": "wc"}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"flink-app": "wc"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "jobmanager", Image: "flink:1.20"}}}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
				Message: "Deployment has minimum availability."}}},
	}
	out, err := trimForCache(d)
	assert.NoError(t, err)
	got := out.(*appsv1.Deployment)
	assert.Empty(t, got.ManagedFields)
	assert.Equal(t, corev1.PodTemplateSpec{}, got.Spec.Template)
	assert.Nil(t, got.Spec.Selector)
	assert.Empty(t, got.Status.Conditions)
	assert.Equal(t, map[string]string{"flink.k8s.io/checkpoints-retained": "10"}, got.Annotations)
	assert.Equal(t, int32(2), clusters.Replicas(got))
	assert.Equal(t, "wc", got.Labels["flink-app"])
	assert.Equal(t, appsv1.DeploymentStatus{ObservedGeneration: 3, ReadyReplicas: 2, AvailableReplicas: 2}, got.Status)
	assert.Equal(t, int64(3), got.Generation)

	d.Annotations = map[string]string{"deployment.kubernetes.io/revision": "1"}
	out, _ = trimForCache(d)
	assert.Nil(t, out.(*appsv1.Deployment).Annotations, "no annotation of the operator's")
}

// The caches keep of a Service its metadata and what decides where a call through it lands (its
// type, external name and selector), which a pass judges before it calls a JobManager through it
// (flink.JobManagerServiceProblem) and compares with the one it renders (selects), and not its
// ports, cluster IPs or the API server's other defaults.
func TestTheCacheKeepsOfAServiceWhatAPassReads(t *testing.T) {
	selector := map[string]string{"flink-app": "wc", "flink-app-hash": "abc", "flink-deployment-type": "jobmanager"}
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "wc-abc", Labels: map[string]string{"flink-app": "wc", "flink-app-hash": "abc"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone, ClusterIPs: []string{corev1.ClusterIPNone},
			Ports: []corev1.ServicePort{{Name: "ui", Port: 8081}}, SessionAffinity: corev1.ServiceAffinityNone, Selector: selector},
	}
	out, err := trimForCache(s)
	assert.NoError(t, err)
	got := out.(*corev1.Service)
	assert.Equal(t, corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: selector}, got.Spec)
	assert.Equal(t, "abc", k8.HashOf(got))
	assert.True(t, clusters.Selects(got, selector))

	// A Service a tenant pointed elsewhere is still seen to be so once cached.
	elsewhere := &corev1.Service{ObjectMeta: s.ObjectMeta, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName,
		ExternalName: "jm.other-team.svc.cluster.local", Ports: s.Spec.Ports}}
	out, _ = trimForCache(elsewhere)
	assert.Equal(t, corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "jm.other-team.svc.cluster.local"},
		out.(*corev1.Service).Spec)
}

// The pod cache keeps of a pod what podReady, podProblem and podProgress say of it, worked out from
// the whole pod, and the metadata the informer and clusters.Group read.
func TestTheCacheKeepsOfAPodWhatAPassReads(t *testing.T) {
	now := metav1.Now()
	running := corev1.ContainerStatus{Name: "jobmanager", Image: "flink:1.20", ImageID: "sha256:abc", ContainerID: "containerd://1",
		Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}
	crashing := corev1.ContainerStatus{Name: "taskmanager", Image: "flink:1.20", RestartCount: 7,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", Message: strings.Repeat("stack trace ", 300), StartedAt: now, FinishedAt: now}}}
	pulling := corev1.ContainerStatus{Name: "jobmanager", Image: "flink:nope",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "not found"}}}
	condition := func(typ corev1.PodConditionType, status corev1.ConditionStatus, reason, message string) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: now}
	}
	pods := map[string]corev1.PodStatus{
		"ready": {Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: "10.1.0.1", PodIPs: []corev1.PodIP{{IP: "10.1.0.1"}}, StartTime: &now,
			QOSClass: corev1.PodQOSBurstable, Conditions: []corev1.PodCondition{condition(corev1.PodReady, corev1.ConditionTrue, "", "")},
			ContainerStatuses: []corev1.ContainerStatus{running}},
		"crash-looping": {Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{condition(corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", "")},
			InitContainerStatuses: []corev1.ContainerStatus{running}, ContainerStatuses: []corev1.ContainerStatus{crashing}},
		"pulling": {Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{pulling}},
		"unschedulable": {Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			condition(corev1.PodScheduled, corev1.ConditionFalse, corev1.PodReasonUnschedulable, "0/3 nodes are available: 3 Insufficient cpu.")}},
	}
	for name, status := range pods {
		t.Run(name, func(t *testing.T) {
			whole := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "7",
				Labels: map[string]string{k8.AppLabel: "wc", k8.HashLabel: "0123abcd", k8.ComponentLabel: "jobmanager",
					"pod-template-hash": "5d8f", "team": "payments"},
				Annotations: map[string]string{"prometheus.io/scrape": "true"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "jobmanager"}}}, Status: status}
			out, err := trimForCache(whole.DeepCopy())
			assert.NoError(t, err)
			kept := out.(*clusters.CachedPod)
			assert.Equal(t, clusters.PodReady(whole), kept.Ready)
			assert.Equal(t, clusters.PodProblem(whole), kept.Problem)
			assert.Equal(t, clusters.PodProgress(whole), kept.Progress)
			assert.Equal(t, "ns/"+name, cache.MetaObjectToName(kept).String(), "the informer's key")
			assert.Equal(t, "7", kept.ResourceVersion)
			assert.Equal(t, map[string]string{k8.AppLabel: "wc", k8.HashLabel: "0123abcd", k8.ComponentLabel: "jobmanager"}, kept.Labels,
				"the labels that tie it to a cluster, no others")
			assert.Empty(t, kept.Annotations)
			again, err := trimForCache(kept)
			assert.NoError(t, err)
			assert.Same(t, kept, again, "a kept pod is kept as it is: the informer may transform an object twice")
			assert.Equal(t, kept, kept.DeepCopyObject())
		})
	}
}
