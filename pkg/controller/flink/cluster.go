package flink

import (
	"maps"
	"strconv"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Cluster is the objects of one Flink cluster of an application or a session cluster.
type Cluster struct {
	JobManager  *appsv1.Deployment
	TaskManager *appsv1.Deployment
	// Service is the cluster's versioned Service, named VersionedServiceName.
	Service *corev1.Service
	// VersionService is the Service named after a BlueGreen colour (VersionServiceName); nil
	// outside BlueGreen.
	VersionService *corev1.Service
	// LogConfig is the ConfigMap of the spec's logConfiguration (LogConfigName); nil without one.
	LogConfig *corev1.ConfigMap
}

// RenderCluster renders the owner's cluster with this hash, each object controlled by the owner so
// that deleting it garbage-collects the cluster. The hash is taken as given (normally the owner's
// cluster hash), so a caller can re-render a cluster it knows by hash. A BlueGreen version's cluster
// carries its colour: the pod label VersionLabel, the environment variable FLINK_APPLICATION_VERSION
// (so that a job can tag its output by colour) and a Service named after the colour; version is
// empty otherwise, and always for owners that have no versions.
func (o ClusterOwner) RenderCluster(hash string, version v1beta1.FlinkApplicationVersion) (*Cluster, error) {
	if err := checkCluster(&o); err != nil {
		return nil, err
	}
	jmConfig, tmConfig, err := o.RenderFlinkConfig(hash)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Service: versionedService(&o, hash)}
	for _, d := range []struct {
		out       **appsv1.Deployment
		component string
		name      string
		replicas  int32
		pod       component
	}{
		{&c.JobManager, JobManagerComponent, JobManagerNameOf(o.Name, hash), o.JobManagerReplicas(), jobManagerPod(&o, jmConfig)},
		{&c.TaskManager, TaskManagerComponent, TaskManagerNameOf(o.Name, hash), o.TaskManagers, taskManagerPod(&o, tmConfig)},
	} {
		dep := deployment(&o, hash, d.component, d.name, d.replicas)
		dep.Spec.Template = pod(&o, hash, d.pod)
		if version != "" {
			dep.Labels[VersionLabel] = string(version)
			dep.Spec.Template.Labels[VersionLabel] = string(version)
			ctr := &dep.Spec.Template.Spec.Containers[0]
			ctr.Env = append([]corev1.EnvVar{{Name: VersionEnv, Value: string(version)}}, ctr.Env...)
		}
		*d.out = dep
	}
	c.JobManager.Annotations = map[string]string{CheckpointRetentionAnnotation: RenderedCheckpointRetention(o.Spec.FlinkConfig)}
	if n := CheckpointsToRetain(o.Spec.FlinkConfig, o.KeepCheckpointsFor); n > 0 {
		c.JobManager.Annotations[RetainedCheckpointsAnnotation] = strconv.Itoa(n)
	}
	if version != "" {
		c.VersionService = versionService(&o, hash, version)
	}
	c.LogConfig = logConfig(&o, hash)
	return c, nil
}

// podLabels identify the pods of one component of one cluster. They are also the Deployment's
// selector, which cannot change, so they hold nothing the user controls.
func podLabels(o *ClusterOwner, hash, component string) map[string]string {
	return map[string]string{AppLabel: o.Name, HashLabel: hash, ComponentLabel: component}
}

// objectLabels are the owner's own labels under the operator's, which win on a clash because
// the operator finds its objects by them.
func objectLabels(o *ClusterOwner, operator map[string]string) map[string]string {
	out := maps.Clone(o.Labels)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, operator)
	return out
}

// podAnnotations are the owner's annotations but kubectl's record of the last applied manifest,
// which is the owner's, not its pods'.
func podAnnotations(o *ClusterOwner) map[string]string {
	out := maps.Clone(o.Annotations)
	delete(out, corev1.LastAppliedConfigAnnotation)
	if len(out) == 0 {
		return nil
	}
	return out
}

// objectMeta is the metadata of an object of the owner's cluster. The owner's annotations are not
// copied: they carry kubectl's last-applied-configuration, which is no business of the objects.
func objectMeta(o *ClusterOwner, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       o.Namespace,
		Labels:          labels,
		OwnerReferences: []metav1.OwnerReference{o.ownerReference()},
	}
}

// deployment renders a Deployment without its pod template. The strategy is Recreate because a
// cluster's pods never roll: an update makes a new cluster, and a replaced JobManager pod must be gone
// before its successor starts, or both would claim the cluster.
func deployment(o *ClusterOwner, hash, component, name string, replicas int32) *appsv1.Deployment {
	selector := podLabels(o, hash, component)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: objectMeta(o, name, objectLabels(o, selector)),
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: maps.Clone(selector)},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
		},
	}
}

// pod renders the pod template of one component of the cluster with this hash, laid over the spec's
// pod templates when it has any (pod_template.go).
func pod(o *ClusterOwner, hash string, c component) corev1.PodTemplateSpec {
	selector := podLabels(o, hash, c.name)
	out := corev1.PodTemplateSpec{
		// The pods carry the owner's labels and annotations, as the Lyft operator's do: users
		// select pods, route logs and set up monitoring by them.
		ObjectMeta: metav1.ObjectMeta{Labels: objectLabels(o, selector), Annotations: podAnnotations(o)},
		Spec:       podSpec(o, c),
	}
	mountLogConfig(o, hash, &out.Spec)
	if t := componentTemplate(o, c.name); t != nil {
		out = overTemplate(o, c, t, out, selector)
	}
	if c.name == JobManagerComponent {
		copyJarOnStart(o, &out.Spec)
	}
	return out
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

func jobManagerPod(o *ClusterOwner, flinkConfig string) component {
	c := o.Spec.JobManagerConfig
	return component{
		name:        JobManagerComponent,
		flinkConfig: flinkConfig,
		resources:   o.JobManagerResources(),
		ports: []corev1.ContainerPort{
			containerPort("rpc", o.RPCPort()),
			containerPort("blob", o.BlobPort()),
			containerPort("query", o.QueryPort()),
			containerPort("ui", o.UIPort()),
			containerPort("metrics", o.MetricsQueryPort()),
		},
		envConfig:    c.EnvConfig,
		nodeSelector: c.NodeSelector,
		tolerations:  c.Tolerations,
		affinity:     c.Affinity,
		// Ready once the REST API answers, which is what the operator needs before submitting the job.
		readiness: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/overview",
				Port: intstr.FromInt32(o.UIPort()),
			}},
			InitialDelaySeconds: 10,
			PeriodSeconds:       5,
			TimeoutSeconds:      1,
			FailureThreshold:    2,
		},
	}
}

func taskManagerPod(o *ClusterOwner, flinkConfig string) component {
	c := o.TaskManagerConfig
	return component{
		name:        TaskManagerComponent,
		flinkConfig: flinkConfig,
		resources:   o.TaskManagerResources(),
		ports: []corev1.ContainerPort{
			containerPort("rpc", o.RPCPort()),
			containerPort("blob", o.BlobPort()),
			containerPort("query", o.QueryPort()),
			containerPort("metrics", o.MetricsQueryPort()),
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
// callers may change the result without changing the owner.
func podSpec(o *ClusterOwner, c component) corev1.PodSpec {
	s := o.Spec.DeepCopy()
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
			Env:             append(operatorEnv(o, c), env.Env...),
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
func operatorEnv(o *ClusterOwner, c component) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "APP_NAME", Value: o.Name},
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
