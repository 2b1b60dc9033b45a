package flink

import (
	"maps"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Cluster is the objects of one Flink cluster of an application.
type Cluster struct {
	JobManager  *appsv1.Deployment
	TaskManager *appsv1.Deployment
	// Service is the cluster's versioned Service, named VersionedServiceName.
	Service *corev1.Service
	// VersionService is the Service named after a BlueGreen colour (VersionServiceName); nil
	// outside BlueGreen.
	VersionService *corev1.Service
}

// RenderCluster renders the cluster with this hash, each object controlled by app so that deleting
// the application garbage-collects it. The hash is taken as given (normally ClusterHash(app)), so a
// caller can re-render a cluster it knows by hash. A BlueGreen version's cluster carries its colour:
// the pod label VersionLabel, the environment variable FLINK_APPLICATION_VERSION (so that a job can
// tag its output by colour) and a Service named after the colour; version is empty otherwise.
func RenderCluster(app *v1beta1.FlinkApplication, hash string, version v1beta1.FlinkApplicationVersion) (*Cluster, error) {
	if err := checkCluster(app); err != nil {
		return nil, err
	}
	jmConfig, tmConfig, err := RenderFlinkConfig(app, hash)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Service: versionedService(app, hash)}
	for _, d := range []struct {
		out       **appsv1.Deployment
		component string
		name      string
		replicas  int32
		pod       component
	}{
		{&c.JobManager, JobManagerComponent, JobManagerName(app, hash), JobManagerReplicas(app), jobManagerPod(app, jmConfig)},
		{&c.TaskManager, TaskManagerComponent, TaskManagerName(app, hash), TaskManagerReplicas(app), taskManagerPod(app, tmConfig)},
	} {
		dep := deployment(app, hash, d.component, d.name, d.replicas)
		dep.Spec.Template.Spec = podSpec(app, d.pod)
		if version != "" {
			dep.Labels[VersionLabel] = string(version)
			dep.Spec.Template.Labels[VersionLabel] = string(version)
			ctr := &dep.Spec.Template.Spec.Containers[0]
			ctr.Env = append([]corev1.EnvVar{{Name: VersionEnv, Value: string(version)}}, ctr.Env...)
		}
		*d.out = dep
	}
	if version != "" {
		c.VersionService = versionService(app, hash, version)
	}
	return c, nil
}

// podLabels identify the pods of one component of one cluster. They are also the Deployment's
// selector, which cannot change, so they hold nothing the user controls.
func podLabels(app *v1beta1.FlinkApplication, hash, component string) map[string]string {
	return map[string]string{AppLabel: app.Name, HashLabel: hash, ComponentLabel: component}
}

// objectLabels are the application's own labels under the operator's, which win on a clash because
// the operator finds its objects by them.
func objectLabels(app *v1beta1.FlinkApplication, operator map[string]string) map[string]string {
	out := maps.Clone(app.Labels)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, operator)
	return out
}

// podAnnotations are the application's annotations but kubectl's record of the last applied
// manifest, which is the application's, not its pods'.
func podAnnotations(app *v1beta1.FlinkApplication) map[string]string {
	out := maps.Clone(app.Annotations)
	delete(out, corev1.LastAppliedConfigAnnotation)
	if len(out) == 0 {
		return nil
	}
	return out
}

// objectMeta is the metadata of an object of the application. The application's annotations are
// not copied: they carry kubectl's last-applied-configuration, which is no business of the objects.
func objectMeta(app *v1beta1.FlinkApplication, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       app.Namespace,
		Labels:          labels,
		OwnerReferences: []metav1.OwnerReference{k8.OwnerReference(app)},
	}
}

// deployment renders a Deployment without its pod spec. The strategy is Recreate because a cluster's
// pods never roll: an update makes a new cluster, and a replaced JobManager pod must be gone before
// its successor starts, or both would claim the cluster.
func deployment(app *v1beta1.FlinkApplication, hash, component, name string, replicas int32) *appsv1.Deployment {
	selector := podLabels(app, hash, component)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: objectMeta(app, name, objectLabels(app, selector)),
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: maps.Clone(selector)},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				// The pods carry the application's labels and annotations, as the Lyft operator's
				// do: users select pods, route logs and set up monitoring by them.
				ObjectMeta: metav1.ObjectMeta{Labels: objectLabels(app, selector), Annotations: podAnnotations(app)},
			},
		},
	}
}

// component is what differs between the JobManager and TaskManager pods.
type component struct {
	name         string
	flinkConfig  string
	resources    corev1.ResourceRequirements
	ports        []corev1.ContainerPort
	envConfig    v1beta1.EnvironmentConfig
	nodeSelector map[string]string
	tolerations  []corev1.Toleration
	affinity     *corev1.Affinity
	readiness    *corev1.Probe
}

func jobManagerPod(app *v1beta1.FlinkApplication, flinkConfig string) component {
	c := app.Spec.JobManagerConfig
	return component{
		name:        JobManagerComponent,
		flinkConfig: flinkConfig,
		resources:   JobManagerResources(app),
		ports: []corev1.ContainerPort{
			containerPort("rpc", RPCPort(app)),
			containerPort("blob", BlobPort(app)),
			containerPort("query", QueryPort(app)),
			containerPort("ui", UIPort(app)),
			containerPort("metrics", MetricsQueryPort(app)),
		},
		envConfig:    c.EnvConfig,
		nodeSelector: c.NodeSelector,
		tolerations:  c.Tolerations,
		affinity:     c.Affinity,
		// Ready once the REST API answers, which is what the operator needs before submitting the job.
		readiness: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/overview",
				Port: intstr.FromInt32(UIPort(app)),
			}},
			InitialDelaySeconds: 10,
			PeriodSeconds:       5,
			TimeoutSeconds:      1,
			FailureThreshold:    2,
		},
	}
}

func taskManagerPod(app *v1beta1.FlinkApplication, flinkConfig string) component {
	c := app.Spec.TaskManagerConfig
	return component{
		name:        TaskManagerComponent,
		flinkConfig: flinkConfig,
		resources:   TaskManagerResources(app),
		ports: []corev1.ContainerPort{
			containerPort("rpc", RPCPort(app)),
			containerPort("blob", BlobPort(app)),
			containerPort("query", QueryPort(app)),
			containerPort("metrics", MetricsQueryPort(app)),
		},
		envConfig:    c.EnvConfig,
		nodeSelector: c.NodeSelector,
		tolerations:  c.Tolerations,
		affinity:     c.Affinity,
	}
}

func containerPort(name string, port int32) corev1.ContainerPort {
	return corev1.ContainerPort{Name: name, ContainerPort: port, Protocol: corev1.ProtocolTCP}
}

// podSpec renders the pod of one component. The spec's slices and pointers are deep-copied so that
// callers may change the result without changing the application.
func podSpec(app *v1beta1.FlinkApplication, c component) corev1.PodSpec {
	s := app.Spec.DeepCopy()
	pullPolicy := s.ImagePullPolicy
	if pullPolicy == "" {
		pullPolicy = corev1.PullIfNotPresent
	}
	env := c.envConfig.DeepCopy()
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name:            c.name,
			Image:           s.Image,
			ImagePullPolicy: pullPolicy,
			Args:            []string{c.name},
			Ports:           c.ports,
			Env:             append(operatorEnv(app, c), env.Env...),
			EnvFrom:         env.EnvFrom,
			Resources:       c.resources,
			VolumeMounts:    s.VolumeMounts,
			ReadinessProbe:  c.readiness,
		}},
		Volumes:            s.Volumes,
		ImagePullSecrets:   s.ImagePullSecrets,
		ServiceAccountName: s.ServiceAccountName,
		SecurityContext:    s.SecurityContext,
		NodeSelector:       maps.Clone(c.nodeSelector),
		Tolerations:        deepCopyTolerations(c.tolerations),
		Affinity:           c.affinity.DeepCopy(),
	}
}

// operatorEnv is the environment the image's entrypoint reads, before the user's, so that a user
// variable can refer to these with $(NAME).
func operatorEnv(app *v1beta1.FlinkApplication, c component) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "APP_NAME", Value: app.Name},
		{Name: "HOST_NAME", ValueFrom: fieldRef("metadata.name")},
		{Name: "HOST_IP", ValueFrom: fieldRef("status.podIP")},
		{Name: "FLINK_DEPLOYMENT_TYPE", Value: c.name},
		{Name: "FLINK_PROPERTIES", Value: c.flinkConfig},
		// Images written for Lyft's operator read this name (lyft/flinkk8soperator#135).
		{Name: "OPERATOR_FLINK_CONFIG", Value: c.flinkConfig},
	}
}

func fieldRef(path string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
}

func deepCopyTolerations(in []corev1.Toleration) []corev1.Toleration {
	if in == nil {
		return nil
	}
	out := make([]corev1.Toleration, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
