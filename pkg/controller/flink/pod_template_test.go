package flink

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

func template(spec corev1.PodSpec) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{Spec: spec}
}

func container(pod corev1.PodSpec, name string) corev1.Container {
	i := slices.IndexFunc(pod.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		return corev1.Container{}
	}
	return pod.Containers[i]
}

func names[T any](items []T, name func(T) string) []string {
	var out []string
	for _, i := range items {
		out = append(out, name(i))
	}
	return out
}

func containerNames(cs []corev1.Container) []string { return names(cs, containerName) }

var (
	logShipper = corev1.Container{Name: "log-shipper", Image: "fluent-bit:3", VolumeMounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/opt/flink/log"}}}
	fetchJars  = corev1.Container{Name: "fetch-jars", Image: "busybox:1", Command: []string{"wget", "-O", "/jars/job.jar", "https://example.com/job.jar"}}
	logsVolume = corev1.Volume{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
)

// A sidecar and an initContainer from the whole cluster's template reach both components' pods, the
// main container first; the template's volume beside the spec's.
func TestPodTemplatesAddSidecarsAndInitContainers(t *testing.T) {
	app := testApp()
	app.Spec.Volumes = []corev1.Volume{configVolume}
	app.Spec.PodTemplate = template(corev1.PodSpec{
		Containers:     []corev1.Container{logShipper, {Name: MainContainerName, VolumeMounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/opt/flink/log"}}}},
		InitContainers: []corev1.Container{fetchJars},
		Volumes:        []corev1.Volume{logsVolume},
	})
	c := renderTestCluster(t, app)
	for component, pod := range map[string]corev1.PodSpec{"jobmanager": c.JobManager.Spec.Template.Spec, "taskmanager": c.TaskManager.Spec.Template.Spec} {
		assert.Equal(t, []string{component, "log-shipper"}, containerNames(pod.Containers), "the main container first, named for the component")
		assert.Equal(t, logShipper, pod.Containers[1])
		assert.Equal(t, []corev1.Container{fetchJars}, pod.InitContainers)
		assert.Equal(t, []corev1.Volume{logsVolume, configVolume}, pod.Volumes)
		assert.Equal(t, []corev1.VolumeMount{{Name: "logs", MountPath: "/opt/flink/log"}}, pod.Containers[0].VolumeMounts)
		assert.Equal(t, "flink-wordcount:1", pod.Containers[0].Image)
		assert.Equal(t, []string{component}, pod.Containers[0].Args)
	}
	assert.Equal(t, "log-shipper", app.Spec.PodTemplate.Spec.Containers[0].Name, "rendering leaves the spec alone")
	assert.Equal(t, MainContainerName, app.Spec.PodTemplate.Spec.Containers[1].Name)
}

// A template gives the main container probes, lifecycle hooks and a security context. The
// JobManager's readiness probe is the operator's unless a template sets one.
func TestTemplateProbesReachTheMainContainer(t *testing.T) {
	liveness := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("rpc")}}, PeriodSeconds: 30}
	startup := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/config", Port: intstr.FromInt32(8081)}}, FailureThreshold: 30}
	readiness := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/jobs/overview", Port: intstr.FromInt32(8081)}}}
	preStop := &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}}
	no := false
	app := testApp()
	app.Spec.PodTemplate = template(corev1.PodSpec{Containers: []corev1.Container{{Name: MainContainerName, LivenessProbe: liveness, Lifecycle: preStop,
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no}}}})
	app.Spec.TaskManagerConfig.PodTemplate = template(corev1.PodSpec{Containers: []corev1.Container{{Name: "taskmanager", StartupProbe: startup, ReadinessProbe: readiness}}})
	c := renderTestCluster(t, app)
	jm, tm := c.JobManager.Spec.Template.Spec.Containers[0], c.TaskManager.Spec.Template.Spec.Containers[0]
	for _, main := range []corev1.Container{jm, tm} {
		assert.Equal(t, liveness, main.LivenessProbe)
		assert.Equal(t, preStop, main.Lifecycle)
		assert.Equal(t, &corev1.SecurityContext{AllowPrivilegeEscalation: &no}, main.SecurityContext)
	}
	assert.Equal(t, "/overview", jm.ReadinessProbe.HTTPGet.Path, "the operator's readiness probe where no template sets one")
	assert.Nil(t, jm.StartupProbe)
	assert.Equal(t, startup, tm.StartupProbe)
	assert.Equal(t, readiness, tm.ReadinessProbe)

	app.Spec.JobManagerConfig.PodTemplate = template(corev1.PodSpec{Containers: []corev1.Container{{Name: "jobmanager", ReadinessProbe: readiness}}})
	c = renderTestCluster(t, app)
	assert.Equal(t, readiness, c.JobManager.Spec.Template.Spec.Containers[0].ReadinessProbe, "a template's readiness probe replaces the operator's")
	assert.Equal(t, liveness, c.JobManager.Spec.Template.Spec.Containers[0].LivenessProbe, "merged with the cluster's template")
}

// Pod fields the spec has none of pass through from the templates.
func TestPriorityClassesTopologySpreadAndTheRestPassThrough(t *testing.T) {
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{AppLabel: "wordcount"}}}}
	aliases := []corev1.HostAlias{{IP: "10.0.0.10", Hostnames: []string{"kafka"}}}
	grace := int64(120)
	app := testApp()
	app.Spec.PodTemplate = template(corev1.PodSpec{PriorityClassName: "batch", TopologySpreadConstraints: spread, HostAliases: aliases,
		TerminationGracePeriodSeconds: &grace, DNSPolicy: corev1.DNSClusterFirst})
	app.Spec.TaskManagerConfig.PodTemplate = template(corev1.PodSpec{PriorityClassName: "streaming"})
	c := renderTestCluster(t, app)
	jm, tm := c.JobManager.Spec.Template.Spec, c.TaskManager.Spec.Template.Spec
	assert.Equal(t, "batch", jm.PriorityClassName)
	assert.Equal(t, "streaming", tm.PriorityClassName, "the component's template over the cluster's")
	for _, pod := range []corev1.PodSpec{jm, tm} {
		assert.Equal(t, spread, pod.TopologySpreadConstraints)
		assert.Equal(t, aliases, pod.HostAliases)
		assert.Equal(t, &grace, pod.TerminationGracePeriodSeconds)
		assert.Equal(t, corev1.DNSClusterFirst, pod.DNSPolicy)
	}
}

// Template labels and annotations reach the pods over the owner's; the labels the operator selects
// pods by are its own.
func TestTemplateLabelsAndAnnotations(t *testing.T) {
	app := testApp()
	app.Annotations["owner"] = "data"
	app.Spec.PodTemplate = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
		Name: "ignored", Namespace: "elsewhere", Finalizers: []string{"x"},
		Labels:      map[string]string{"team": "platform", "sidecar.istio.io/inject": "true", AppLabel: "spoofed", HashLabel: "spoofed"},
		Annotations: map[string]string{"prometheus.io/scrape": "true", "owner": "platform"},
	}}
	app.Spec.JobManagerConfig.PodTemplate = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
		Labels: map[string]string{ComponentLabel: "spoofed", "role": "coordinator"}, Annotations: map[string]string{"prometheus.io/port": "9249"}}}
	c, err := RenderCluster(app, "0a1b2c3d", v1beta1.BlueFlinkApplication)
	require.NoError(t, err)
	jm, tm := c.JobManager.Spec.Template, c.TaskManager.Spec.Template
	assert.Equal(t, map[string]string{AppLabel: "wordcount", HashLabel: "0a1b2c3d", ComponentLabel: "jobmanager", VersionLabel: "blue",
		"team": "platform", "sidecar.istio.io/inject": "true", "role": "coordinator"}, jm.Labels)
	assert.Equal(t, map[string]string{AppLabel: "wordcount", HashLabel: "0a1b2c3d", ComponentLabel: "taskmanager", VersionLabel: "blue",
		"team": "platform", "sidecar.istio.io/inject": "true"}, tm.Labels)
	assert.Equal(t, map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9249", "owner": "platform"}, jm.Annotations)
	assert.Equal(t, map[string]string{"prometheus.io/scrape": "true", "owner": "platform"}, tm.Annotations)
	assert.Empty(t, jm.Name)
	assert.Empty(t, jm.Namespace)
	assert.Empty(t, jm.Finalizers)
	assert.Equal(t, map[string]string{AppLabel: "wordcount", HashLabel: "0a1b2c3d", ComponentLabel: "jobmanager"}, c.JobManager.Spec.Selector.MatchLabels)
	assert.Equal(t, "data", c.JobManager.Labels["team"], "the Deployment carries the owner's labels, not the template's")
}

// Lyft's fields win over the templates where both set the same thing, and keep what the templates
// add beside it.
func TestLyftFieldsWinOverTheTemplate(t *testing.T) {
	user, group, fsGroup := int64(9999), int64(9999), int64(2000)
	app := testApp()
	app.Spec.ImagePullPolicy = corev1.PullAlways
	app.Spec.ServiceAccountName = "flink"
	app.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	app.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &user}
	app.Spec.Volumes = []corev1.Volume{configVolume}
	app.Spec.VolumeMounts = []corev1.VolumeMount{{Name: "conf", MountPath: "/conf"}}
	app.Spec.JobManagerConfig.NodeSelector = map[string]string{"pool": "jm"}
	app.Spec.JobManagerConfig.Tolerations = []corev1.Toleration{{Key: "dedicated", Value: "flink"}}
	app.Spec.JobManagerConfig.Affinity = nodeAffinity("pool", corev1.NodeSelectorOpIn, true)
	app.Spec.JobManagerConfig.Resources = memoryResources("1", "2Gi")
	app.Spec.JobManagerConfig.EnvConfig = v1beta1.EnvironmentConfig{Env: []corev1.EnvVar{{Name: "LEVEL", Value: "lyft"}},
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "lyft"}}}}}
	antiAffinity := &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1,
		PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}}}
	app.Spec.JobManagerConfig.PodTemplate = template(corev1.PodSpec{
		ServiceAccountName: "template", ImagePullSecrets: []corev1.LocalObjectReference{{Name: "mirror"}, {Name: "registry"}},
		SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr(int64(1)), RunAsGroup: &group, FSGroup: &fsGroup},
		Volumes:         []corev1.Volume{{Name: "conf", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, logsVolume},
		NodeSelector:    map[string]string{"pool": "template", "disk": "ssd"},
		Tolerations:     []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}},
		Affinity:        &corev1.Affinity{NodeAffinity: nodeAffinity("zone", corev1.NodeSelectorOpExists, true).NodeAffinity, PodAntiAffinity: antiAffinity},
		Containers: []corev1.Container{{Name: "jobmanager", ImagePullPolicy: corev1.PullNever,
			Env:          []corev1.EnvVar{{Name: "LEVEL", Value: "template"}, {Name: "EXTRA", Value: "$(APP_NAME)"}},
			EnvFrom:      []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "template"}}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/conf"}, {Name: "logs", MountPath: "/opt/flink/log"}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceEphemeralStorage: resource.MustParse("10Gi")},
				Limits: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("10Gi"), corev1.ResourceMemory: resource.MustParse("1Gi"),
					corev1.ResourceCPU: resource.MustParse("8")}},
		}},
	})
	jm := renderTestCluster(t, app).JobManager.Spec.Template.Spec
	main := jm.Containers[0]
	assert.Equal(t, "flink", jm.ServiceAccountName)
	assert.Equal(t, []corev1.LocalObjectReference{{Name: "mirror"}, {Name: "registry"}}, jm.ImagePullSecrets)
	assert.Equal(t, &corev1.PodSecurityContext{RunAsUser: &user, RunAsGroup: &group, FSGroup: &fsGroup}, jm.SecurityContext, "merged field by field")
	assert.Equal(t, []corev1.Volume{configVolume, logsVolume}, jm.Volumes, "spec.volumes replace the template's of the same name")
	assert.Equal(t, map[string]string{"pool": "jm", "disk": "ssd"}, jm.NodeSelector)
	assert.Equal(t, app.Spec.JobManagerConfig.Tolerations, jm.Tolerations, "a list without names is replaced whole")
	assert.Equal(t, app.Spec.JobManagerConfig.Affinity.NodeAffinity, jm.Affinity.NodeAffinity)
	assert.Equal(t, antiAffinity, jm.Affinity.PodAntiAffinity)
	assert.Equal(t, corev1.PullAlways, main.ImagePullPolicy)
	assert.Equal(t, "lyft", envValue(main.Env, "LEVEL"))
	assert.Equal(t, []string{"APP_NAME", "HOST_NAME", "HOST_IP", "FLINK_DEPLOYMENT_TYPE", "FLINK_PROPERTIES", "OPERATOR_FLINK_CONFIG", "EXTRA", "LEVEL"},
		envNames(main.Env), "the operator's environment, the template's, envConfig's")
	assert.Equal(t, []string{"template", "lyft"}, names(main.EnvFrom, func(e corev1.EnvFromSource) string { return e.ConfigMapRef.Name }))
	assert.Equal(t, []corev1.VolumeMount{{Name: "conf", MountPath: "/conf"}, {Name: "logs", MountPath: "/opt/flink/log"}}, main.VolumeMounts)
	assert.Equal(t, resource.MustParse("1"), main.Resources.Requests[corev1.ResourceCPU], "cpu and memory are the operator's")
	assert.Equal(t, resource.MustParse("2Gi"), main.Resources.Requests[corev1.ResourceMemory])
	assert.Equal(t, resource.MustParse("10Gi"), main.Resources.Requests[corev1.ResourceEphemeralStorage], "other resources are the template's")
	assert.Equal(t, corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("10Gi")}, main.Resources.Limits,
		"the spec limits neither cpu nor memory, and so neither does the container")

	app.Spec.ImagePullPolicy, app.Spec.ServiceAccountName = "", ""
	jm = renderTestCluster(t, app).JobManager.Spec.Template.Spec
	assert.Equal(t, corev1.PullNever, jm.Containers[0].ImagePullPolicy, "the template's, where the spec sets none")
	assert.Equal(t, "template", jm.ServiceAccountName)
}

// The operator owns the main container's name, image, args, ports and the environment it renders:
// a template cannot change them.
func TestTheMainContainersOwnedFieldsAreTheOperators(t *testing.T) {
	app := testApp()
	app.Spec.PodTemplate = template(corev1.PodSpec{Containers: []corev1.Container{{
		Name: MainContainerName, Image: "evil:1", Args: []string{"bash"}, Command: []string{"/wrapper.sh", "/docker-entrypoint.sh"},
		Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 8081}, {Name: "prom", ContainerPort: 9249}},
		Env: []corev1.EnvVar{{Name: "APP_NAME", Value: "other"}, {Name: VersionEnv, Value: "green"}, {Name: "HOST_IP", Value: "1.2.3.4"},
			{Name: "TZ", Value: "UTC"}},
	}}})
	c, err := RenderCluster(app, "0a1b2c3d", v1beta1.BlueFlinkApplication)
	require.NoError(t, err)
	for _, d := range []corev1.PodSpec{c.JobManager.Spec.Template.Spec, c.TaskManager.Spec.Template.Spec} {
		main := d.Containers[0]
		assert.Equal(t, "flink-wordcount:1", main.Image)
		assert.Equal(t, []string{main.Name}, main.Args)
		assert.Equal(t, []string{"/wrapper.sh", "/docker-entrypoint.sh"}, main.Command, "the command is the template's: it is given the operator's args")
		assert.Equal(t, "wordcount", envValue(main.Env, "APP_NAME"))
		assert.Equal(t, "blue", envValue(main.Env, VersionEnv))
		assert.Equal(t, "UTC", envValue(main.Env, "TZ"))
		assert.Len(t, slices.DeleteFunc(envNames(main.Env), func(n string) bool { return n != "HOST_IP" }), 1, "no variable twice")
		assert.Contains(t, main.Ports, corev1.ContainerPort{Name: "prom", ContainerPort: 9249})
		assert.Contains(t, main.Ports, containerPort("rpc", 6123))
	}
	jm := c.JobManager.Spec.Template.Spec.Containers[0]
	assert.Contains(t, jm.Ports, containerPort("ui", 8081), "the operator's port 8081 replaces the template's")
	assert.NotContains(t, jm.Ports, corev1.ContainerPort{Name: "web", ContainerPort: 8081})
	assert.Contains(t, c.TaskManager.Spec.Template.Spec.Containers[0].Ports, corev1.ContainerPort{Name: "web", ContainerPort: 8081},
		"the TaskManager opens no UI port")
}

// The component's template is laid over the whole cluster's: containers merged by name, the
// component's fields over the cluster's.
func TestAComponentsTemplateIsLaidOverTheClusters(t *testing.T) {
	app := testApp()
	app.Spec.PodTemplate = template(corev1.PodSpec{
		Containers: []corev1.Container{{Name: MainContainerName, Env: []corev1.EnvVar{{Name: "A", Value: "cluster"}, {Name: "B", Value: "cluster"}}},
			logShipper},
		Volumes:      []corev1.Volume{logsVolume},
		Tolerations:  []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}},
		NodeSelector: map[string]string{"disk": "ssd"},
	})
	bigLogs := corev1.Volume{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr(resource.MustParse("5Gi"))}}}
	app.Spec.TaskManagerConfig.PodTemplate = template(corev1.PodSpec{
		Containers: []corev1.Container{{Name: "taskmanager", Env: []corev1.EnvVar{{Name: "B", Value: "taskmanager"}, {Name: "C", Value: "taskmanager"}}},
			{Name: "log-shipper", Image: "fluent-bit:4"}, {Name: "profiler", Image: "async-profiler:1"}},
		Volumes:      []corev1.Volume{bigLogs},
		Tolerations:  []corev1.Toleration{{Key: "dedicated", Value: "flink"}},
		NodeSelector: map[string]string{},
	})
	c := renderTestCluster(t, app)
	jm, tm := c.JobManager.Spec.Template.Spec, c.TaskManager.Spec.Template.Spec
	assert.Equal(t, []string{"jobmanager", "log-shipper"}, containerNames(jm.Containers))
	assert.Equal(t, []string{"taskmanager", "log-shipper", "profiler"}, containerNames(tm.Containers))
	assert.Equal(t, "cluster", envValue(tm.Containers[0].Env, "A"))
	assert.Equal(t, "taskmanager", envValue(tm.Containers[0].Env, "B"))
	assert.Equal(t, "taskmanager", envValue(tm.Containers[0].Env, "C"))
	assert.Equal(t, "cluster", envValue(jm.Containers[0].Env, "B"))
	assert.Equal(t, "fluent-bit:4", container(tm, "log-shipper").Image)
	assert.Equal(t, logShipper.VolumeMounts, container(tm, "log-shipper").VolumeMounts, "a container is merged field by field")
	assert.Equal(t, []corev1.Volume{bigLogs}, tm.Volumes, "a volume of the same name is replaced whole")
	assert.Equal(t, []corev1.Volume{logsVolume}, jm.Volumes)
	assert.Equal(t, []corev1.Toleration{{Key: "dedicated", Value: "flink"}}, tm.Tolerations, "a list without names is replaced whole")
	assert.Equal(t, app.Spec.PodTemplate.Spec.Tolerations, jm.Tolerations)
	assert.Equal(t, map[string]string{"disk": "ssd"}, tm.NodeSelector, "an empty map sets nothing, as JSON cannot tell it from none")
}

// Without templates the pods are rendered as they were before templates existed; with empty ones
// the merge renders the same pods.
func TestEmptyTemplatesRenderTheSamePods(t *testing.T) {
	apps := map[string]*v1beta1.FlinkApplication{"typical": testApp()}
	full := testApp()
	full.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	full.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(9999))}
	full.Spec.Volumes = []corev1.Volume{configVolume}
	full.Spec.VolumeMounts = []corev1.VolumeMount{{Name: "conf", MountPath: "/conf"}}
	full.Spec.JobManagerConfig.NodeSelector = map[string]string{"pool": "jm"}
	full.Spec.TaskManagerConfig.Tolerations = []corev1.Toleration{{Key: "dedicated", Value: "flink"}}
	full.Spec.TaskManagerConfig.EnvConfig.Env = []corev1.EnvVar{{Name: "USER_VAR", Value: "1"}}
	apps["full"] = full
	for name, app := range apps {
		want := renderTestCluster(t, app)
		for _, edit := range []func(a *v1beta1.FlinkApplication){
			func(a *v1beta1.FlinkApplication) { a.Spec.PodTemplate = &corev1.PodTemplateSpec{} },
			func(a *v1beta1.FlinkApplication) {
				a.Spec.JobManagerConfig.PodTemplate, a.Spec.TaskManagerConfig.PodTemplate = &corev1.PodTemplateSpec{}, &corev1.PodTemplateSpec{}
			},
		} {
			withTemplates := app.DeepCopy()
			edit(withTemplates)
			got := renderTestCluster(t, withTemplates)
			assert.Equal(t, want.JobManager.Spec.Template, got.JobManager.Spec.Template, name)
			assert.Equal(t, want.TaskManager.Spec.Template, got.TaskManager.Spec.Template, name)
		}
	}
	for name, c := range testSessionClusters() {
		o := OwnerFromSessionCluster(c)
		want, err := o.RenderCluster("0a1b2c3d", "")
		require.NoError(t, err)
		o.Spec.PodTemplate = &corev1.PodTemplateSpec{}
		got, err := o.RenderCluster("0a1b2c3d", "")
		require.NoError(t, err)
		assert.Equal(t, want.TaskManager.Spec.Template, got.TaskManager.Spec.Template, name)
	}
}

// A session cluster's pods take templates as an application's do.
func TestASessionClusterWithPodTemplates(t *testing.T) {
	c := testSessionClusters()["full"]
	c.Spec.PodTemplate = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"tier": "shared"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{logShipper}, Volumes: []corev1.Volume{logsVolume}, PriorityClassName: "shared"}}
	c.Spec.TaskManagerConfig.PodTemplate = template(corev1.PodSpec{InitContainers: []corev1.Container{fetchJars}})
	cluster, err := OwnerFromSessionCluster(c).RenderCluster(SessionClusterHash(c), "")
	require.NoError(t, err)
	tm := cluster.TaskManager.Spec.Template
	assert.Equal(t, []string{"taskmanager", "log-shipper"}, containerNames(tm.Spec.Containers))
	assert.Equal(t, []corev1.Container{fetchJars}, tm.Spec.InitContainers)
	assert.Empty(t, cluster.JobManager.Spec.Template.Spec.InitContainers)
	assert.Equal(t, "shared", tm.Spec.PriorityClassName)
	assert.Equal(t, "shared", tm.Labels["tier"])
	assert.Contains(t, tm.Spec.Containers[0].Env, corev1.EnvVar{Name: "MODE", Value: "session"})
	assert.Equal(t, []corev1.Volume{logsVolume, c.Spec.Volumes[0]}, tm.Spec.Volumes)
}

// A change to any template starts a new cluster; without templates no hash changes (the golden
// hashes of hash_test.go and owner_test.go).
func TestPodTemplatesAreHashed(t *testing.T) {
	base := testApp()
	sidecar := template(corev1.PodSpec{Containers: []corev1.Container{logShipper}})
	for name, edit := range map[string]func(a *v1beta1.FlinkApplication){
		"the cluster's":     func(a *v1beta1.FlinkApplication) { a.Spec.PodTemplate = sidecar },
		"the JobManager's":  func(a *v1beta1.FlinkApplication) { a.Spec.JobManagerConfig.PodTemplate = sidecar },
		"the TaskManagers'": func(a *v1beta1.FlinkApplication) { a.Spec.TaskManagerConfig.PodTemplate = sidecar },
		"an empty one":      func(a *v1beta1.FlinkApplication) { a.Spec.PodTemplate = &corev1.PodTemplateSpec{} },
		"a template's annotation": func(a *v1beta1.FlinkApplication) {
			a.Spec.PodTemplate = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"a": "b"}}}
		},
	} {
		app := base.DeepCopy()
		edit(app)
		assert.NotEqual(t, goldenHash, ClusterHash(app), name)
	}
	withTemplate := base.DeepCopy()
	withTemplate.Spec.PodTemplate = sidecar
	changed := withTemplate.DeepCopy()
	changed.Spec.PodTemplate.Spec.Containers[0].Image = "fluent-bit:4"
	assert.NotEqual(t, ClusterHash(withTemplate), ClusterHash(changed))

	for name, c := range testSessionClusters() {
		c.Spec.TaskManagerConfig.PodTemplate = sidecar
		assert.NotEqual(t, goldenSessionHashes[name], SessionClusterHash(c), name)
	}
}

// What the merge cannot make sense of is refused before anything is created, naming the field.
func TestTemplatesTheMergeCannotReadAreRefused(t *testing.T) {
	main := func(c corev1.Container) corev1.PodSpec {
		return corev1.PodSpec{Containers: []corev1.Container{logShipper, c}}
	}
	for _, c := range []struct {
		name string
		edit func(a *v1beta1.FlinkApplication)
		want string
	}{
		{"ephemeral containers", func(a *v1beta1.FlinkApplication) {
			a.Spec.PodTemplate = template(corev1.PodSpec{EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}}})
		}, "spec.podTemplate.spec.ephemeralContainers: a pod template cannot have ephemeral containers"},
		{"a component's name in the cluster's template", func(a *v1beta1.FlinkApplication) {
			a.Spec.PodTemplate = template(main(corev1.Container{Name: "taskmanager"}))
		}, "spec.podTemplate.spec.containers[1]: the whole cluster's template names its main container flink-main-container, not taskmanager"},
		{"two main containers", func(a *v1beta1.FlinkApplication) {
			a.Spec.JobManagerConfig.PodTemplate = template(corev1.PodSpec{Containers: []corev1.Container{{Name: MainContainerName}, logShipper, {Name: "jobmanager"}}})
		}, "spec.jobManagerConfig.podTemplate.spec.containers[2]: flink-main-container and jobmanager both name the main container"},
		{"FLINK_PROPERTIES", func(a *v1beta1.FlinkApplication) {
			a.Spec.TaskManagerConfig.PodTemplate = template(main(corev1.Container{Name: "taskmanager", Env: []corev1.EnvVar{{Name: "FLINK_PROPERTIES", Value: "x: y"}}}))
		}, "spec.taskManagerConfig.podTemplate.spec.containers[1].env[0]: FLINK_PROPERTIES carries the configuration the operator renders"},
		{"a port named as the operator's", func(a *v1beta1.FlinkApplication) {
			a.Spec.PodTemplate = template(main(corev1.Container{Name: MainContainerName, Ports: []corev1.ContainerPort{{Name: "ui", ContainerPort: 8080}}}))
		}, "spec.podTemplate.spec.containers[1].ports[0]: the operator opens port ui on 8081"},
	} {
		app := testApp()
		c.edit(app)
		_, err := RenderCluster(app, "0a1b2c3d", "")
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
		}
	}
	app := testApp()
	app.Spec.TaskManagerConfig.PodTemplate = template(main(corev1.Container{Name: MainContainerName, Ports: []corev1.ContainerPort{{Name: "ui", ContainerPort: 8080}}}))
	_, err := RenderCluster(app, "0a1b2c3d", "")
	assert.NoError(t, err, "a TaskManager opens no ui port")
}

// The operator judges the pods it renders, templates merged, with every rule: what a template adds
// is in them, named at its place in the pod.
func TestTheRenderedPodsCarryWhatTheTemplatesAdd(t *testing.T) {
	yes := true
	app := testApp()
	app.Spec.TaskManagerConfig.PodTemplate = template(corev1.PodSpec{HostNetwork: true,
		Containers: []corev1.Container{{Name: "debug", Image: "busybox:1", SecurityContext: &corev1.SecurityContext{Privileged: &yes}}}})
	c := renderTestCluster(t, app)
	assert.Equal(t, "", podRefusal(&c.JobManager.Spec.Template, PodPolicyFrom(nil)))
	assert.Equal(t, "spec.hostNetwork: "+hostNamespacesRefusal, podRefusal(&c.TaskManager.Spec.Template, PodPolicyFrom(nil)))
	c.TaskManager.Spec.Template.Spec.HostNetwork = false
	assert.Equal(t, "spec.containers[1].securityContext.privileged: "+privilegedRefusal, podRefusal(&c.TaskManager.Spec.Template, PodPolicyFrom(nil)))
}
