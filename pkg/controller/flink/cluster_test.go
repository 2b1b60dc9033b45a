package flink

import (
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func renderTestCluster(t *testing.T, app *v1beta1.FlinkApplication) *Cluster {
	t.Helper()
	c, err := RenderCluster(app, "0a1b2c3d", "")
	require.NoError(t, err)
	return c
}

func envNames(env []corev1.EnvVar) []string {
	var names []string
	for _, e := range env {
		names = append(names, e.Name)
	}
	return names
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func TestRenderClusterOwnershipAndLabels(t *testing.T) {
	app := testApp()
	app.Labels[AppLabel] = "spoofed" // the operator's labels must win
	c := renderTestCluster(t, app)

	objects := []metav1.Object{c.JobManager, c.TaskManager, c.Service}
	for _, obj := range objects {
		assert.Equal(t, "flink", obj.GetNamespace(), obj.GetName())
		assert.True(t, k8.IsOwnedBy(obj, app), obj.GetName())
		assert.Equal(t, "wordcount", obj.GetLabels()[AppLabel], obj.GetName())
		assert.Equal(t, "0a1b2c3d", k8.HashOf(obj), obj.GetName())
		assert.Equal(t, "wordcount", obj.GetLabels()[k8.AppLabel], obj.GetName())
		for k := range obj.GetAnnotations() {
			assert.Contains(t, []string{CheckpointRetentionAnnotation, RetainedCheckpointsAnnotation}, k,
				"%s: only the operator's own annotations (application annotations carry last-applied-configuration)", obj.GetName())
		}
	}
	assert.Equal(t, "wordcount-0a1b2c3d-jm", c.JobManager.Name)
	assert.Equal(t, "wordcount-0a1b2c3d-tm", c.TaskManager.Name)
	assert.Equal(t, "wordcount-0a1b2c3d", c.Service.Name)
	assert.Equal(t, "data", c.JobManager.Labels["team"], "application labels go on Deployments")
	assert.Equal(t, map[string]string{AppLabel: "wordcount", HashLabel: "0a1b2c3d"}, c.Service.Labels)

	for component, d := range map[string]*appsv1.Deployment{JobManagerComponent: c.JobManager, TaskManagerComponent: c.TaskManager} {
		want := map[string]string{AppLabel: "wordcount", HashLabel: "0a1b2c3d", ComponentLabel: component}
		assert.Equal(t, want, d.Spec.Selector.MatchLabels, component)
		// The pods carry the application's labels too, as the Lyft operator's do; the selector
		// holds only the operator's.
		assert.Equal(t, map[string]string{AppLabel: "wordcount", HashLabel: "0a1b2c3d", ComponentLabel: component, "team": "data"},
			d.Spec.Template.Labels, component)
		assert.Equal(t, component, d.Labels[ComponentLabel])
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		require.NoError(t, err)
		assert.True(t, sel.Matches(labels.Set(d.Spec.Template.Labels)), "selector must match the pod template")
		assert.Equal(t, appsv1.RecreateDeploymentStrategyType, d.Spec.Strategy.Type)
	}
	assert.True(t, labels.SelectorFromSet(c.Service.Spec.Selector).Matches(labels.Set(c.JobManager.Spec.Template.Labels)))
	assert.False(t, labels.SelectorFromSet(c.Service.Spec.Selector).Matches(labels.Set(c.TaskManager.Spec.Template.Labels)))

	// Rendering must not alias the application.
	c.JobManager.Labels["team"] = "changed"
	assert.Equal(t, "data", app.Labels["team"])
}

func TestRenderClusterPods(t *testing.T) {
	app := testApp()
	app.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	app.Spec.ServiceAccountName = "flink"
	app.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(9999))}
	app.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	app.Spec.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	// Two JobManagers only make sense with high availability, which the cluster then needs.
	app.Spec.JobManagerConfig.Replicas = ptr(int32(2))
	app.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
	app.Spec.JobManagerConfig.NodeSelector = map[string]string{"pool": "jm"}
	app.Spec.TaskManagerConfig.Tolerations = []corev1.Toleration{{Key: "dedicated", Value: "flink"}}
	app.Spec.TaskManagerConfig.EnvConfig = v1beta1.EnvironmentConfig{
		Env:     []corev1.EnvVar{{Name: "USER_VAR", Value: "1"}},
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}},
	}
	c := renderTestCluster(t, app)

	jm, tm := c.JobManager.Spec.Template.Spec, c.TaskManager.Spec.Template.Spec
	assert.Equal(t, int32(2), *c.JobManager.Spec.Replicas)
	assert.Equal(t, int32(2), *c.TaskManager.Spec.Replicas, "parallelism 3 over 2 slots")
	for _, pod := range []corev1.PodSpec{jm, tm} {
		require.Len(t, pod.Containers, 1)
		assert.Equal(t, "flink-wordcount:1", pod.Containers[0].Image)
		assert.Equal(t, corev1.PullIfNotPresent, pod.Containers[0].ImagePullPolicy)
		assert.Equal(t, app.Spec.ImagePullSecrets, pod.ImagePullSecrets)
		assert.Equal(t, "flink", pod.ServiceAccountName)
		assert.Equal(t, app.Spec.SecurityContext, pod.SecurityContext)
		assert.Equal(t, app.Spec.Volumes, pod.Volumes)
		assert.Equal(t, app.Spec.VolumeMounts, pod.Containers[0].VolumeMounts)
	}
	assert.Equal(t, map[string]string{"pool": "jm"}, jm.NodeSelector)
	assert.Nil(t, tm.NodeSelector)
	assert.Equal(t, app.Spec.TaskManagerConfig.Tolerations, tm.Tolerations)
	assert.Nil(t, jm.Tolerations)

	jmc, tmc := jm.Containers[0], tm.Containers[0]
	assert.Equal(t, "jobmanager", jmc.Name)
	assert.Equal(t, []string{"jobmanager"}, jmc.Args)
	assert.Equal(t, "taskmanager", tmc.Name)
	assert.Equal(t, []string{"taskmanager"}, tmc.Args)

	portsOf := func(c corev1.Container) map[string]int32 {
		out := map[string]int32{}
		for _, p := range c.Ports {
			out[p.Name] = p.ContainerPort
		}
		return out
	}
	assert.Equal(t, map[string]int32{"rpc": 6123, "blob": 6125, "query": 6124, "ui": 8081, "metrics": 50101}, portsOf(jmc))
	assert.Equal(t, map[string]int32{"rpc": 6123, "blob": 6125, "query": 6124, "metrics": 50101}, portsOf(tmc))

	operatorEnv := []string{"APP_NAME", "HOST_NAME", "HOST_IP", "FLINK_DEPLOYMENT_TYPE", "FLINK_PROPERTIES", "OPERATOR_FLINK_CONFIG"}
	assert.Equal(t, operatorEnv, envNames(jmc.Env))
	assert.Equal(t, append(operatorEnv, "USER_VAR"), envNames(tmc.Env), "user env comes after the operator's")
	assert.Equal(t, app.Spec.TaskManagerConfig.EnvConfig.EnvFrom, tmc.EnvFrom)
	assert.Equal(t, "wordcount", envValue(jmc.Env, "APP_NAME"))
	assert.Equal(t, "metadata.name", jmc.Env[1].ValueFrom.FieldRef.FieldPath)
	assert.Equal(t, "status.podIP", jmc.Env[2].ValueFrom.FieldRef.FieldPath)
	assert.Equal(t, "taskmanager", envValue(tmc.Env, "FLINK_DEPLOYMENT_TYPE"))

	jmConfig, tmConfig, err := RenderFlinkConfig(app, "0a1b2c3d")
	require.NoError(t, err)
	assert.Equal(t, jmConfig, envValue(jmc.Env, "FLINK_PROPERTIES"))
	assert.Equal(t, jmConfig, envValue(jmc.Env, "OPERATOR_FLINK_CONFIG"))
	assert.Equal(t, tmConfig, envValue(tmc.Env, "FLINK_PROPERTIES"))
	assert.Contains(t, envValue(tmc.Env, "FLINK_PROPERTIES"), "taskmanager.numberOfTaskSlots: 2")

	require.NotNil(t, jmc.ReadinessProbe)
	assert.Equal(t, "/overview", jmc.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, intstr.FromInt32(8081), jmc.ReadinessProbe.HTTPGet.Port)
	assert.Equal(t, []int32{10, 5, 1, 2}, []int32{jmc.ReadinessProbe.InitialDelaySeconds,
		jmc.ReadinessProbe.PeriodSeconds, jmc.ReadinessProbe.TimeoutSeconds, jmc.ReadinessProbe.FailureThreshold})
	assert.Nil(t, tmc.ReadinessProbe)

	// Rendering must not alias the application's slices and maps.
	tm.Tolerations[0].Key = "changed"
	jm.NodeSelector["pool"] = "changed"
	assert.Equal(t, "dedicated", app.Spec.TaskManagerConfig.Tolerations[0].Key)
	assert.Equal(t, "jm", app.Spec.JobManagerConfig.NodeSelector["pool"])
}

func TestRenderClusterResources(t *testing.T) {
	tests := []struct {
		name       string
		jm, tm     *corev1.ResourceRequirements
		wantJM     corev1.ResourceList
		wantTM     corev1.ResourceList
		wantLimits bool
	}{
		{name: "Lyft defaults, requests equal limits", wantLimits: true,
			wantJM: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("3072Mi")},
			wantTM: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1024Mi")}},
		{name: "spec wins", jm: memoryResources("1", "2Gi"), tm: memoryResources("500m", "4Gi"),
			wantJM: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
			wantTM: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("4Gi")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := testApp()
			app.Spec.JobManagerConfig.Resources = tt.jm
			app.Spec.TaskManagerConfig.Resources = tt.tm
			c := renderTestCluster(t, app)
			jm := c.JobManager.Spec.Template.Spec.Containers[0].Resources
			tm := c.TaskManager.Spec.Template.Spec.Containers[0].Resources
			assert.True(t, equalResources(tt.wantJM, jm.Requests), "jm requests %v", jm.Requests)
			assert.True(t, equalResources(tt.wantTM, tm.Requests), "tm requests %v", tm.Requests)
			if tt.wantLimits {
				assert.True(t, equalResources(tt.wantJM, jm.Limits))
				assert.True(t, equalResources(tt.wantTM, tm.Limits))
			} else {
				assert.Empty(t, jm.Limits)
			}
		})
	}
}

func equalResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		if q.Cmp(b[k]) != 0 {
			return false
		}
	}
	return true
}

func TestRenderClusterPropagatesConfigErrors(t *testing.T) {
	app := testApp()
	app.Spec.FlinkConfig["nested"] = map[string]interface{}{"a": "b"}
	_, err := RenderCluster(app, "h", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"nested"`)
}

func TestRenderClusterOwnerReferenceWithoutTypeMeta(t *testing.T) {
	app := testApp()
	c := renderTestCluster(t, app)
	ref := c.JobManager.OwnerReferences[0]
	assert.Equal(t, "flink.k8s.io/v1beta1", ref.APIVersion)
	assert.Equal(t, "FlinkApplication", ref.Kind)
	assert.Equal(t, app.UID, ref.UID)
	assert.True(t, *ref.Controller)
}

func TestServices(t *testing.T) {
	app := testApp()
	app.Spec.UIPort = ptr(int32(9081))
	c := renderTestCluster(t, app)
	generic := RenderGenericService(app, "0a1b2c3d")

	portsOf := func(s *corev1.Service) map[string]int32 {
		out := map[string]int32{}
		for _, p := range s.Spec.Ports {
			out[p.Name] = p.Port
			assert.Equal(t, intstr.FromInt32(p.Port), p.TargetPort)
		}
		return out
	}
	jmPods := map[string]string{AppLabel: "wordcount", HashLabel: "0a1b2c3d", ComponentLabel: JobManagerComponent}

	assert.Equal(t, corev1.ClusterIPNone, c.Service.Spec.ClusterIP, "versioned service is headless")
	assert.Equal(t, jmPods, c.Service.Spec.Selector)
	assert.Equal(t, map[string]int32{"rpc": 6123, "blob": 6125, "query": 6124, "ui": 9081, "metrics": 50101}, portsOf(c.Service))

	assert.Equal(t, "wordcount", generic.Name)
	assert.Equal(t, "flink", generic.Namespace)
	assert.Equal(t, corev1.ServiceTypeClusterIP, generic.Spec.Type)
	assert.Empty(t, generic.Spec.ClusterIP, "the generic service gets a virtual IP")
	assert.Equal(t, jmPods, generic.Spec.Selector)
	assert.Equal(t, map[string]string{AppLabel: "wordcount"}, generic.Labels, "not tied to a hash")
	assert.Equal(t, map[string]int32{"ui": 9081, "rpc": 6123}, portsOf(generic))
	assert.True(t, k8.IsOwnedBy(generic, app))

	repointed := RenderGenericService(app, "ffffffff")
	assert.Equal(t, "ffffffff", repointed.Spec.Selector[HashLabel])
	assert.Equal(t, generic.Name, repointed.Name)
}

// The application's annotations reach its pods, all but kubectl's last-applied-configuration.
func TestRenderClusterPodsCarryTheApplicationsAnnotations(t *testing.T) {
	app := testApp()
	app.Annotations = map[string]string{"prometheus.io/scrape": "true", corev1.LastAppliedConfigAnnotation: "{...}"}
	c := renderTestCluster(t, app)
	for _, d := range []*appsv1.Deployment{c.JobManager, c.TaskManager} {
		assert.Equal(t, map[string]string{"prometheus.io/scrape": "true"}, d.Spec.Template.Annotations, d.Name)
		assert.NotContains(t, d.Annotations, "prometheus.io/scrape", "not on the Deployment itself")
	}
}
