package flink

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pod templates. A component's pod is made of three layers, each laid over the one before:
//
//  1. spec.podTemplate, the whole cluster's;
//  2. the component's own, spec.jobManagerConfig.podTemplate or spec.taskManagerConfig.podTemplate;
//  3. the pod the operator renders from the rest of the spec (podSpec): Lyft's fields, and what the
//     operator owns.
//
// A later layer's field replaces the earlier one's whole where the later layer sets it (an empty
// list or map sets nothing), but for
//
//   - containers, initContainers, volumes, imagePullSecrets and a container's env: merged by name, an
//     item of the later layer replacing the earlier one's of the same name (containers are merged field
//     by field, as here);
//   - a container's volumeMounts by mountPath, its ports by number and protocol; its envFrom appended;
//   - labels, annotations, nodeSelector and resource requests and limits: merged key by key;
//   - securityContext (the pod's and a container's) and affinity: merged field by field.
//
// The main container is the one named after the component (jobmanager, taskmanager) or, as in the
// Apache Flink operator's templates, flink-main-container. The operator owns its name, image, args,
// the ports it opens, its cpu and memory (Flink's memory settings are derived from them) and the
// environment it renders (FLINK_PROPERTIES and the rest of operatorEnv, FLINK_APPLICATION_VERSION),
// and the labels it selects pods by. The JobManager's readiness probe is the operator's only where
// the templates set none. The main container comes first in the pod: kubectl's default container,
// and the one RenderCluster gives a BlueGreen version's colour.
//
// Without templates nothing of this runs: the pods are exactly what they were before templates existed.

// MainContainerName is the main container's name in the Apache Flink operator's pod templates, and in
// Flink's own (kubernetes.pod-template-file).
const MainContainerName = "flink-main-container"

// podTemplates are the spec's pod templates, each with its path in the object; nil ones are left out.
func podTemplates(o *ClusterOwner) []podTemplateAt {
	var out []podTemplateAt
	for _, t := range []podTemplateAt{
		{"spec.podTemplate", "", o.Spec.PodTemplate},
		{"spec.jobManagerConfig.podTemplate", JobManagerComponent, o.Spec.JobManagerConfig.PodTemplate},
		{"spec.taskManagerConfig.podTemplate", TaskManagerComponent, o.TaskManagerConfig.PodTemplate},
	} {
		if t.template != nil {
			out = append(out, t)
		}
	}
	return out
}

// podTemplateAt is one of the spec's pod templates: its path, the component it shapes ("" for both)
// and the template.
type podTemplateAt struct {
	path, component string
	template        *corev1.PodTemplateSpec
}

// componentTemplate is the component's pod template, layers 1 and 2 merged, its main container
// named after the component; nil when the spec has neither.
func componentTemplate(o *ClusterOwner, component string) *corev1.PodTemplateSpec {
	var out *corev1.PodTemplateSpec
	for _, t := range podTemplates(o) {
		if t.component != "" && t.component != component {
			continue
		}
		layer := normalTemplate(t.template, component)
		if out == nil {
			out = &layer
			continue
		}
		merged := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
			Labels:      mergeMaps(out.Labels, layer.Labels),
			Annotations: mergeMaps(out.Annotations, layer.Annotations),
		}, Spec: mergePodSpec(out.Spec, layer.Spec)}
		out = &merged
	}
	return out
}

// normalTemplate is a copy of the template with only what a template can give a pod: its labels,
// annotations and spec (names, owners, finalizers are the Deployment's to set). Its main container is
// named after the component, and the deprecated serviceAccount is read as serviceAccountName, as
// the API server reads it.
func normalTemplate(t *corev1.PodTemplateSpec, component string) corev1.PodTemplateSpec {
	t = t.DeepCopy()
	out := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: t.Labels, Annotations: t.Annotations}, Spec: t.Spec}
	for i := range out.Spec.Containers {
		if out.Spec.Containers[i].Name == MainContainerName {
			out.Spec.Containers[i].Name = component
		}
	}
	if out.Spec.ServiceAccountName == "" {
		out.Spec.ServiceAccountName = out.Spec.DeprecatedServiceAccount
	}
	out.Spec.DeprecatedServiceAccount = ""
	return out
}

// overTemplate lays the pod the operator renders for component c over the component's template t
// (layer 3 over layers 1 and 2). rendered carries the owner's labels and annotations and the
// selector labels, which win over the template's.
func overTemplate(o *ClusterOwner, c component, t *corev1.PodTemplateSpec, rendered corev1.PodTemplateSpec, selector map[string]string) corev1.PodTemplateSpec {
	labels := mergeMaps(rendered.Labels, t.Labels)
	maps.Copy(labels, selector)
	out := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: mergeMaps(rendered.Annotations, t.Annotations)},
		Spec:       mergePodSpec(t.Spec, rendered.Spec),
	}
	i := slices.IndexFunc(out.Spec.Containers, func(x corev1.Container) bool { return x.Name == c.name })
	main := out.Spec.Containers[i]
	fromTemplate := corev1.Container{}
	if j := slices.IndexFunc(t.Spec.Containers, func(x corev1.Container) bool { return x.Name == c.name }); j >= 0 {
		fromTemplate = t.Spec.Containers[j]
	}
	// The operator's environment first, so that the template's variables may refer to it with
	// $(NAME); then the template's, but for the names the operator or envConfig set; envConfig's last.
	owned := append(operatorEnv(o, c), corev1.EnvVar{Name: VersionEnv})
	main.Env = operatorEnv(o, c)
	for _, e := range fromTemplate.Env {
		if !slices.ContainsFunc(owned, sameName(e)) && !slices.ContainsFunc(c.envConfig.Env, sameName(e)) {
			main.Env = append(main.Env, e)
		}
	}
	main.Env = append(main.Env, c.envConfig.DeepCopy().Env...)
	// The operator's ports first, then the template's others.
	main.Ports = slices.Clone(rendered.Spec.Containers[0].Ports)
	for _, p := range fromTemplate.Ports {
		if !slices.ContainsFunc(main.Ports, func(q corev1.ContainerPort) bool { return portKey(q) == portKey(p) }) {
			main.Ports = append(main.Ports, p)
		}
	}
	// cpu and memory are the operator's, requests and limits alike: Flink's memory is sized from them.
	own := rendered.Spec.Containers[0].Resources
	main.Resources.Requests = mergeMaps(withoutCPUAndMemory(fromTemplate.Resources.Requests), own.Requests)
	main.Resources.Limits = mergeMaps(withoutCPUAndMemory(fromTemplate.Resources.Limits), own.Limits)
	// Defaults of the operator's that are no one's choice: the template's where it makes one.
	if o.Spec.ImagePullPolicy == "" && fromTemplate.ImagePullPolicy != "" {
		main.ImagePullPolicy = fromTemplate.ImagePullPolicy
	}
	if fromTemplate.ReadinessProbe != nil {
		main.ReadinessProbe = fromTemplate.ReadinessProbe
	}
	out.Spec.Containers = append([]corev1.Container{main}, slices.Delete(out.Spec.Containers, i, i+1)...)
	return out
}

// mergePodSpec lays over on base (see the top of this file), sharing both's values.
func mergePodSpec(base, over corev1.PodSpec) corev1.PodSpec {
	out := base
	overlayFields(&out, &over, "Containers", "InitContainers", "Volumes", "ImagePullSecrets", "NodeSelector", "SecurityContext", "Affinity")
	out.Containers = mergeByKey(base.Containers, over.Containers, containerName, mergeContainer)
	out.InitContainers = mergeByKey(base.InitContainers, over.InitContainers, containerName, mergeContainer)
	out.Volumes = mergeByKey(base.Volumes, over.Volumes, func(v corev1.Volume) string { return v.Name }, nil)
	out.ImagePullSecrets = mergeByKey(base.ImagePullSecrets, over.ImagePullSecrets, func(r corev1.LocalObjectReference) string { return r.Name }, nil)
	out.NodeSelector = mergeMaps(base.NodeSelector, over.NodeSelector)
	out.SecurityContext = mergeStruct(base.SecurityContext, over.SecurityContext)
	out.Affinity = mergeStruct(base.Affinity, over.Affinity)
	return out
}

// mergeContainer lays one container over another of the same name.
func mergeContainer(base, over corev1.Container) corev1.Container {
	out := base
	overlayFields(&out, &over, "Env", "EnvFrom", "VolumeMounts", "Ports", "Resources", "SecurityContext")
	out.Env = mergeByKey(base.Env, over.Env, func(e corev1.EnvVar) string { return e.Name }, nil)
	out.EnvFrom = append(slices.Clip(base.EnvFrom), over.EnvFrom...)
	out.VolumeMounts = mergeByKey(base.VolumeMounts, over.VolumeMounts, func(m corev1.VolumeMount) string { return m.MountPath }, nil)
	out.Ports = mergeByKey(base.Ports, over.Ports, portKey, nil)
	out.Resources = corev1.ResourceRequirements{
		Requests: mergeMaps(base.Resources.Requests, over.Resources.Requests),
		Limits:   mergeMaps(base.Resources.Limits, over.Resources.Limits),
		Claims:   mergeByKey(base.Resources.Claims, over.Resources.Claims, func(c corev1.ResourceClaim) string { return c.Name }, nil),
	}
	out.SecurityContext = mergeStruct(base.SecurityContext, over.SecurityContext)
	return out
}

func containerName(c corev1.Container) string { return c.Name }

func withoutCPUAndMemory(l corev1.ResourceList) corev1.ResourceList {
	out := maps.Clone(l)
	delete(out, corev1.ResourceCPU)
	delete(out, corev1.ResourceMemory)
	return out
}

func sameName(e corev1.EnvVar) func(corev1.EnvVar) bool {
	return func(x corev1.EnvVar) bool { return x.Name == e.Name }
}

// portKey is what makes two container ports the same port: number and protocol (TCP when unset).
func portKey(p corev1.ContainerPort) string {
	protocol := p.Protocol
	if protocol == "" {
		protocol = corev1.ProtocolTCP
	}
	return fmt.Sprintf("%d/%s", p.ContainerPort, protocol)
}

// overlayFields sets each field of *dst that *src sets to src's, but for the fields named in except,
// which the caller merges. A field is set when it is not its type's zero value, and a list or a map
// when it is not empty: JSON does not tell an empty one from none (the cluster hash hashes both
// alike), so neither may the merge.
func overlayFields[T any](dst, src *T, except ...string) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range d.NumField() {
		f := s.Field(i)
		if f.IsZero() || (f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.Len() == 0 || slices.Contains(except, d.Type().Field(i).Name) {
			continue
		}
		d.Field(i).Set(f)
	}
}

// mergeStruct is base with every field over sets laid over it; nil when both are.
func mergeStruct[T any](base, over *T) *T {
	if base == nil || over == nil {
		if base == nil {
			return over
		}
		return base
	}
	out := *base
	overlayFields(&out, over)
	return &out
}

// mergeByKey is base with each item of over that has the key of one of base's laid over it in its
// place (by merge, or replacing it whole when merge is nil), and over's other items after them.
func mergeByKey[T any, K comparable](base, over []T, key func(T) K, merge func(base, over T) T) []T {
	if len(over) == 0 {
		return base
	}
	out := slices.Clone(base)
	for _, o := range over {
		i := slices.IndexFunc(out, func(b T) bool { return key(b) == key(o) })
		switch {
		case i < 0:
			out = append(out, o)
		case merge != nil:
			out[i] = merge(out[i], o)
		default:
			out[i] = o
		}
	}
	return out
}

// mergeMaps is base with over's entries over it; nil when both are empty.
func mergeMaps[K comparable, V any](base, over map[K]V) map[K]V {
	if len(base)+len(over) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = make(map[K]V, len(over))
	}
	maps.Copy(out, over)
	return out
}

// checkPodTemplates names the first thing of the spec's pod templates that the merge cannot make
// sense of, or that the API server refuses in a Deployment's pod template.
func checkPodTemplates(o *ClusterOwner) error {
	for _, t := range podTemplates(o) {
		s := &t.template.Spec
		if len(s.EphemeralContainers) > 0 {
			return fmt.Errorf("%s.spec.ephemeralContainers: a pod template cannot have ephemeral containers", t.path)
		}
		mains, ports := []string{MainContainerName, t.component}, jobManagerPod(o, "").ports
		if t.component == TaskManagerComponent {
			ports = taskManagerPod(o, "").ports
		}
		if t.component == "" {
			// A container named after one component in the whole cluster's template would be that
			// component's main container and a sidecar of the other's.
			for i, c := range s.Containers {
				if c.Name == JobManagerComponent || c.Name == TaskManagerComponent {
					return fmt.Errorf("%s.spec.containers[%d]: the whole cluster's template names its main container %s, not %s (the name of one component's, in that component's podTemplate)",
						t.path, i, MainContainerName, c.Name)
				}
			}
			mains = []string{MainContainerName}
		}
		main := -1
		for i, c := range s.Containers {
			if !slices.Contains(mains, c.Name) {
				continue
			}
			if main >= 0 {
				return fmt.Errorf("%s.spec.containers[%d]: %s and %s both name the main container; keep one", t.path, i, s.Containers[main].Name, c.Name)
			}
			main = i
			if err := checkMainContainer(fmt.Sprintf("%s.spec.containers[%d]", t.path, i), &c, ports); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkMainContainer refuses what a template's main container cannot set: FLINK_PROPERTIES, as
// envConfig cannot, and a port under the name of one the operator opens (operator) on another
// number (the container would have two ports of that name).
func checkMainContainer(field string, c *corev1.Container, operator []corev1.ContainerPort) error {
	for j, e := range c.Env {
		if e.Name == "FLINK_PROPERTIES" {
			return fmt.Errorf("%s.env[%d]: FLINK_PROPERTIES carries the configuration the operator renders and cannot be set; use flinkConfig", field, j)
		}
	}
	for j, p := range c.Ports {
		for _, q := range operator {
			if p.Name == q.Name && p.ContainerPort != q.ContainerPort {
				return fmt.Errorf("%s.ports[%d]: the operator opens port %s on %d; name this port otherwise (or set the spec's port field to move the operator's)",
					field, j, p.Name, q.ContainerPort)
			}
		}
	}
	return nil
}
