package flink

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The pod policy in pod templates: each rule refuses in a template what it refuses in the spec's own
// fields, and the fields only a template has, in both layers, naming the field by its path in the
// object. TestBothLayersOfThePodPolicyAgree runs these cases beside policyCases and secretCases.

func withClusterTemplate(t corev1.PodTemplateSpec) func(*v1beta1.FlinkApplication) {
	return func(app *v1beta1.FlinkApplication) { app.Spec.PodTemplate = &t }
}

func withJobManagerTemplate(t corev1.PodTemplateSpec) func(*v1beta1.FlinkApplication) {
	return func(app *v1beta1.FlinkApplication) { app.Spec.JobManagerConfig.PodTemplate = &t }
}

func withTaskManagerTemplate(t corev1.PodTemplateSpec) func(*v1beta1.FlinkApplication) {
	return func(app *v1beta1.FlinkApplication) { app.Spec.TaskManagerConfig.PodTemplate = &t }
}

func podOf(spec corev1.PodSpec) corev1.PodTemplateSpec { return corev1.PodTemplateSpec{Spec: spec} }

// withSidecar is a pod whose main container comes first, then a sidecar with this security context.
func withSidecar(sc *corev1.SecurityContext) corev1.PodTemplateSpec {
	return podOf(corev1.PodSpec{Containers: []corev1.Container{{Name: MainContainerName}, {Name: "sidecar", Image: "busybox:1", SecurityContext: sc}}})
}

func withInit(sc *corev1.SecurityContext) corev1.PodTemplateSpec {
	return podOf(corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1", SecurityContext: sc}}})
}

// probeHostWant is the probe and lifecycle hosts rule's refusal, after the field it names.
const probeHostWant = "probes and lifecycle hooks may not name a host"

func httpProbe(host string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: host, Path: "/", Port: intstr.FromInt32(8081)}}}
}

func templatePolicyCases() []policyCase {
	yes, no, root, user := true, false, int64(0), int64(1000)
	unmasked := corev1.UnmaskedProcMount
	both := func(edits ...func(*v1beta1.FlinkApplication)) func(*v1beta1.FlinkApplication) {
		return func(app *v1beta1.FlinkApplication) {
			for _, e := range edits {
				e(app)
			}
		}
	}
	cp := map[string]string{"node-role.kubernetes.io/control-plane": ""}
	const apparmor = "container.apparmor.security.beta.kubernetes.io/sidecar"
	grace := int64(60)
	return []policyCase{
		{"a template with a sidecar, an initContainer, probes, a priority class and a topology spread passes", "", both(
			withClusterTemplate(corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "data"}, Annotations: map[string]string{apparmor: "runtime/default"}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: MainContainerName, LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(6123)}}}, SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: &no, RunAsNonRoot: &yes, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}},
						{Name: "sidecar", Image: "fluent-bit:3", Ports: []corev1.ContainerPort{{ContainerPort: 2020}}}},
					InitContainers:                []corev1.Container{{Name: "init", Image: "busybox:1"}},
					Volumes:                       []corev1.Volume{logsVolume, configVolume},
					PriorityClassName:             "streaming",
					TopologySpreadConstraints:     []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway}},
					TerminationGracePeriodSeconds: &grace,
					SecurityContext:               &corev1.PodSecurityContext{RunAsUser: &user, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				}}),
			withTaskManagerTemplate(podOf(corev1.PodSpec{Tolerations: []corev1.Toleration{dedicated}}))), nil, ""},

		{"hostPath in the cluster's template", "hostPath volumes", withClusterTemplate(podOf(corev1.PodSpec{Volumes: []corev1.Volume{configVolume, hostPathRoot}})), nil,
			"spec.podTemplate.spec.volumes[1]: hostPath volume root is not allowed"},
		{"hostPath in a template allowed", "hostPath volumes", withJobManagerTemplate(podOf(corev1.PodSpec{Volumes: []corev1.Volume{hostPathRoot}})),
			map[string]string{AllowHostPathAnnotation: "true"}, ""},

		{"nfs in the TaskManagers' template", "volume types", withTaskManagerTemplate(podOf(corev1.PodSpec{Volumes: []corev1.Volume{nfsVolume}})), nil,
			"spec.taskManagerConfig.podTemplate.spec.volumes[0].nfs: volume data has type nfs, which is not allowed"},
		{"nfs in a template allowed", "volume types", withTaskManagerTemplate(podOf(corev1.PodSpec{Volumes: []corev1.Volume{nfsVolume}})),
			map[string]string{AllowedVolumeTypesAnnotation: "nfs"}, ""},

		{"a HostProcess sidecar", "Windows HostProcess", withClusterTemplate(withSidecar(&corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: &yes}})),
			nil, "spec.podTemplate.spec.containers[1].securityContext.windowsOptions.hostProcess: Windows HostProcess pods are not allowed"},
		{"a HostProcess template", "Windows HostProcess", withJobManagerTemplate(podOf(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
			WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: &yes}}})), nil,
			"spec.jobManagerConfig.podTemplate.spec.securityContext.windowsOptions.hostProcess: Windows HostProcess pods are not allowed"},
		{"a HostProcess sidecar allowed", "Windows HostProcess", withClusterTemplate(withSidecar(&corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: &yes}})),
			map[string]string{AllowHostProcessAnnotation: "true"}, ""},

		{"hostNetwork", "host namespaces", withJobManagerTemplate(podOf(corev1.PodSpec{HostNetwork: true})), nil,
			"spec.jobManagerConfig.podTemplate.spec.hostNetwork: pods may not share the node's network, process or IPC namespace"},
		{"hostPID", "host namespaces", withClusterTemplate(podOf(corev1.PodSpec{HostPID: true})), nil, "spec.podTemplate.spec.hostPID: pods may not share"},
		{"hostIPC", "host namespaces", withTaskManagerTemplate(podOf(corev1.PodSpec{HostIPC: true})), nil, "spec.taskManagerConfig.podTemplate.spec.hostIPC:"},

		{"a privileged sidecar", "privileged containers", withClusterTemplate(withSidecar(&corev1.SecurityContext{Privileged: &yes})), nil,
			"spec.podTemplate.spec.containers[1].securityContext.privileged: privileged containers are not allowed"},
		{"a privileged initContainer", "privileged containers", withTaskManagerTemplate(withInit(&corev1.SecurityContext{Privileged: &yes})), nil,
			"spec.taskManagerConfig.podTemplate.spec.initContainers[0].securityContext.privileged: privileged containers are not allowed"},
		{"a privileged main container", "privileged containers", withJobManagerTemplate(podOf(corev1.PodSpec{Containers: []corev1.Container{{Name: "jobmanager",
			SecurityContext: &corev1.SecurityContext{Privileged: &yes}}}})), nil, "spec.jobManagerConfig.podTemplate.spec.containers[0].securityContext.privileged:"},
		{"privileged false passes", "privileged containers", withClusterTemplate(withSidecar(&corev1.SecurityContext{Privileged: &no})), nil, ""},

		{"SYS_ADMIN", "capabilities", withJobManagerTemplate(podOf(corev1.PodSpec{Containers: []corev1.Container{{Name: "jobmanager", SecurityContext: &corev1.SecurityContext{
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE", "SYS_ADMIN"}}}}}})), nil,
			"spec.jobManagerConfig.podTemplate.spec.containers[0].securityContext.capabilities.add[1]: capability SYS_ADMIN is not allowed (allowed: AUDIT_WRITE, CHOWN,"},
		{"baseline capabilities pass", "capabilities", withClusterTemplate(withSidecar(&corev1.SecurityContext{Capabilities: &corev1.Capabilities{
			Add: []corev1.Capability{"NET_BIND_SERVICE", "CHOWN"}, Drop: []corev1.Capability{"ALL"}}})), nil, ""},

		{"a host port", "host ports", withClusterTemplate(podOf(corev1.PodSpec{Containers: []corev1.Container{{Name: MainContainerName}, {Name: "exporter", Image: "e:1",
			Ports: []corev1.ContainerPort{{ContainerPort: 9090}, {ContainerPort: 9091, HostPort: 9091}}}}})), nil,
			"spec.podTemplate.spec.containers[1].ports[1].hostPort: host ports are not allowed"},

		{"SELinux type in a template", "SELinux", withClusterTemplate(podOf(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}}})),
			nil, "spec.podTemplate.spec.securityContext.seLinuxOptions.type: SELinux type spc_t is not allowed (allowed: container_t"},
		{"SELinux user of a main container", "SELinux", withJobManagerTemplate(podOf(corev1.PodSpec{Containers: []corev1.Container{{Name: MainContainerName,
			SecurityContext: &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{User: "system_u"}}}}})), nil,
			"spec.jobManagerConfig.podTemplate.spec.containers[0].securityContext.seLinuxOptions.user: setting the SELinux user is not allowed"},
		{"SELinux of a sidecar allowed", "SELinux", withClusterTemplate(withSidecar(&corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}})),
			map[string]string{AllowSELinuxOptionsAnnotation: "true"}, ""},

		{"an unmasked /proc", "/proc mount type", withTaskManagerTemplate(podOf(corev1.PodSpec{Containers: []corev1.Container{{Name: "sidecar", Image: "s:1",
			SecurityContext: &corev1.SecurityContext{ProcMount: &unmasked}}}})), nil,
			"spec.taskManagerConfig.podTemplate.spec.containers[0].securityContext.procMount: /proc mount type Unmasked is not allowed (allowed: Default)"},

		{"seccomp Unconfined in an initContainer", "seccomp", withClusterTemplate(withInit(&corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}})),
			nil, "spec.podTemplate.spec.initContainers[0].securityContext.seccompProfile.type: seccomp profile Unconfined is not allowed"},
		{"seccomp Unconfined in a template", "seccomp", withTaskManagerTemplate(podOf(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}})), nil,
			"spec.taskManagerConfig.podTemplate.spec.securityContext.seccompProfile.type: seccomp profile Unconfined is not allowed"},
		{"seccomp Unconfined in an initContainer allowed", "seccomp", withClusterTemplate(withInit(&corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}})),
			map[string]string{AllowUnconfinedSeccompAnnotation: "true"}, ""},

		{"AppArmor Unconfined in a sidecar", "AppArmor", withClusterTemplate(withSidecar(&corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}})),
			nil, "spec.podTemplate.spec.containers[1].securityContext.appArmorProfile.type: AppArmor profile Unconfined is not allowed (allowed: RuntimeDefault, Localhost)"},
		{"an AppArmor annotation in a template", "AppArmor", withTaskManagerTemplate(corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
			Annotations: map[string]string{"other": "x", apparmor: "unconfined"}}}), nil,
			"spec.taskManagerConfig.podTemplate.metadata.annotations[" + apparmor + "]: AppArmor profile unconfined is not allowed (allowed: runtime/default, localhost/<profile>)"},
		{"AppArmor in templates allowed", "AppArmor", both(
			withClusterTemplate(withSidecar(&corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}})),
			withTaskManagerTemplate(corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{apparmor: "unconfined"}}})),
			map[string]string{AllowUnconfinedAppArmorAnnotation: "true"}, ""},

		{"an unsafe sysctl in a template", "sysctls", withTaskManagerTemplate(podOf(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
			Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}}}})), nil,
			"spec.taskManagerConfig.podTemplate.spec.securityContext.sysctls[0]: sysctl net.core.somaxconn is not in the safe set"},
		{"an unsafe sysctl in a template allowed", "sysctls", withTaskManagerTemplate(podOf(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
			Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}}}})), map[string]string{AllowRootAnnotation: "true"}, ""},

		{"a sidecar as root", "running as root", withClusterTemplate(withSidecar(&corev1.SecurityContext{RunAsUser: &root})), nil,
			"spec.podTemplate.spec.containers[1].securityContext.runAsUser: pods may not run as root"},
		{"an initContainer runAsNonRoot false", "running as root", withTaskManagerTemplate(withInit(&corev1.SecurityContext{RunAsUser: &user, RunAsNonRoot: &no})), nil,
			"spec.taskManagerConfig.podTemplate.spec.initContainers[0].securityContext.runAsNonRoot: pods may not run as root"},
		{"a template's runAsGroup 0", "running as root", withJobManagerTemplate(podOf(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsGroup: &root}})), nil,
			"spec.jobManagerConfig.podTemplate.spec.securityContext.runAsGroup: pods may not run as root"},
		{"a sidecar as root allowed", "running as root", withClusterTemplate(withSidecar(&corev1.SecurityContext{RunAsUser: &root})),
			map[string]string{AllowRootAnnotation: "true"}, ""},

		{"a template's service account", "service accounts", withClusterTemplate(podOf(corev1.PodSpec{ServiceAccountName: "admin"})), nil,
			"spec.podTemplate.spec.serviceAccountName: service account admin is not allowed in this namespace (allowed: default)"},
		{"a template's deprecated serviceAccount", "service accounts", withJobManagerTemplate(podOf(corev1.PodSpec{DeprecatedServiceAccount: "admin"})), nil,
			"spec.jobManagerConfig.podTemplate.spec.serviceAccount: service account admin is not allowed in this namespace"},
		{"a template's service account allowed", "service accounts", withJobManagerTemplate(podOf(corev1.PodSpec{ServiceAccountName: "flink", DeprecatedServiceAccount: "flink"})),
			map[string]string{AllowedServiceAccountsAnnotation: "default,flink"}, ""},

		// Probes and lifecycle hooks run by the kubelet, from the node: a host there reaches what the
		// node reaches.
		{"a sidecar's liveness probe to a host", "probe and lifecycle hosts", withClusterTemplate(podOf(corev1.PodSpec{Containers: []corev1.Container{
			{Name: MainContainerName, LivenessProbe: httpProbe("")},
			{Name: "sidecar", Image: "busybox:1", LivenessProbe: httpProbe("169.254.169.254")}}})), nil,
			"spec.podTemplate.spec.containers[1].livenessProbe.httpGet.host: " + probeHostWant},
		{"the main container's readiness probe to a host by TCP", "probe and lifecycle hosts", withJobManagerTemplate(podOf(corev1.PodSpec{Containers: []corev1.Container{
			{Name: MainContainerName, ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: "10.0.0.1", Port: intstr.FromInt32(6443)}}}}}})), nil,
			"spec.jobManagerConfig.podTemplate.spec.containers[0].readinessProbe.tcpSocket.host: " + probeHostWant},
		{"an init container's startup probe", "probe and lifecycle hosts", withTaskManagerTemplate(podOf(corev1.PodSpec{InitContainers: []corev1.Container{
			{Name: "init", Image: "busybox:1", StartupProbe: httpProbe("kubernetes.default")}}})), nil,
			"spec.taskManagerConfig.podTemplate.spec.initContainers[0].startupProbe.httpGet.host: " + probeHostWant},
		{"a preStop hook's host", "probe and lifecycle hosts", withTaskManagerTemplate(podOf(corev1.PodSpec{Containers: []corev1.Container{
			{Name: MainContainerName, Lifecycle: &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}},
				PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1", Path: "/drain", Port: intstr.FromInt32(10250)}}}}}})), nil,
			"spec.taskManagerConfig.podTemplate.spec.containers[0].lifecycle.preStop.httpGet.host: " + probeHostWant},
		{"a postStart hook's host by TCP", "probe and lifecycle hosts", withClusterTemplate(podOf(corev1.PodSpec{Containers: []corev1.Container{
			{Name: MainContainerName, Lifecycle: &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Host: "10.0.0.1", Port: intstr.FromInt32(22)}}}}}})), nil,
			"spec.podTemplate.spec.containers[0].lifecycle.postStart.tcpSocket.host: " + probeHostWant},
		{"probes and hooks without a host pass", "probe and lifecycle hosts", withClusterTemplate(podOf(corev1.PodSpec{Containers: []corev1.Container{
			{Name: MainContainerName, LivenessProbe: httpProbe(""), StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(6123)}}},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/stop", Port: intstr.FromInt32(8081)}}}}}})), nil, ""},

		{"a template's toleration with the JobManager's node selector", "control-plane nodes", both(
			withClusterTemplate(podOf(corev1.PodSpec{Tolerations: []corev1.Toleration{cpTaint}})),
			func(app *v1beta1.FlinkApplication) { app.Spec.JobManagerConfig.NodeSelector = cp }), nil,
			"spec.podTemplate.spec.tolerations[0]: " + cpRefusal},
		{"the TaskManagers' toleration with their template's affinity", "control-plane nodes", both(
			func(app *v1beta1.FlinkApplication) {
				app.Spec.TaskManagerConfig.Tolerations = []corev1.Toleration{masterTaint}
			},
			withTaskManagerTemplate(podOf(corev1.PodSpec{Affinity: nodeAffinity("node-role.kubernetes.io/master", corev1.NodeSelectorOpIn, true)}))), nil,
			"spec.taskManagerConfig.tolerations[0]: " + cpRefusal},
		{"both in the cluster's template", "control-plane nodes", withClusterTemplate(podOf(corev1.PodSpec{Tolerations: []corev1.Toleration{anyTaint}, NodeSelector: cp})), nil,
			"spec.podTemplate.spec.tolerations[0]: " + cpRefusal},
		{"every taint tolerated by the cluster's template, a node by the JobManager template's hostname", "control-plane nodes", both(
			withClusterTemplate(podOf(corev1.PodSpec{Tolerations: []corev1.Toleration{anyTaint}})),
			withJobManagerTemplate(podOf(corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/hostname": "cp-1"}}))), nil,
			"spec.podTemplate.spec.tolerations[0]: " + cpRefusal},
		{"the TaskManager template tolerates every taint with an empty effect", "control-plane nodes",
			withTaskManagerTemplate(podOf(corev1.PodSpec{Tolerations: []corev1.Toleration{dedicated, {Key: "", Operator: corev1.TolerationOpExists, Effect: ""}}})), nil,
			"spec.taskManagerConfig.podTemplate.spec.tolerations[1]: " + cpRefusal},
		{"a node name", "control-plane nodes", withTaskManagerTemplate(podOf(corev1.PodSpec{NodeName: "node-1"})), nil,
			"spec.taskManagerConfig.podTemplate.spec.nodeName: pods may not name their node"},
		// This case passed under the earlier rule, which trusted the selectors: the JobManager's
		// template tolerates the taint, and nothing keeps its pods off control-plane nodes.
		{"a toleration for one component, a selector for the other", "control-plane nodes", both(
			withJobManagerTemplate(podOf(corev1.PodSpec{Tolerations: []corev1.Toleration{cpTaint}})),
			withTaskManagerTemplate(podOf(corev1.PodSpec{NodeSelector: cp}))), nil,
			"spec.jobManagerConfig.podTemplate.spec.tolerations[0]: " + cpRefusal},
		{"a template's other tolerations and node selectors pass", "control-plane nodes", both(
			withClusterTemplate(podOf(corev1.PodSpec{Tolerations: []corev1.Toleration{dedicated}, NodeSelector: map[string]string{"kubernetes.io/hostname": "cp-1"}})),
			withTaskManagerTemplate(podOf(corev1.PodSpec{NodeSelector: cp}))), nil, ""},
		{"control-plane nodes and node names allowed", "control-plane nodes", both(
			withClusterTemplate(podOf(corev1.PodSpec{Tolerations: []corev1.Toleration{anyTaint}, NodeSelector: cp})),
			withTaskManagerTemplate(podOf(corev1.PodSpec{NodeName: "node-1"}))), map[string]string{AllowControlPlaneNodesAnnotation: "true"}, ""},
	}
}

func templateSecretCases() []secretCase {
	const rule = "Secret references"
	sidecarEnv := "spec.podTemplate.spec.containers[1].env[1].valueFrom.secretKeyRef.name: the pods would read Secret kafka, which only a user who may get it may reference"
	withSidecarEnv := withClusterTemplate(podOf(corev1.PodSpec{Containers: []corev1.Container{{Name: MainContainerName},
		{Name: "sidecar", Image: "s:1", Env: []corev1.EnvVar{{Name: "MODE", Value: "x"}, secretEnv("KAFKA_PASSWORD", "kafka")}}}}))
	projected := volume("token", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
		{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "api-token"}}},
	}}})
	c := func(name string, edit func(*v1beta1.FlinkApplication), ns map[string]string, mayGet []string, want, unverified string) secretCase {
		return secretCase{policyCase{name, rule, edit, ns, want}, mayGet, unverified}
	}
	return []secretCase{
		c("a sidecar's secretKeyRef", withSidecarEnv, nil, nil, sidecarEnv, sidecarEnv),
		c("a sidecar's secretKeyRef the user may get", withSidecarEnv, nil, []string{"kafka"}, "", sidecarEnv),
		c("an initContainer's envFrom", withTaskManagerTemplate(podOf(corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init", Image: "i:1",
			EnvFrom: []corev1.EnvFromSource{secretEnvFrom("s3")}}}})), nil, []string{"kafka"},
			"spec.taskManagerConfig.podTemplate.spec.initContainers[0].envFrom[0].secretRef.name: the pods would read Secret s3",
			"spec.taskManagerConfig.podTemplate.spec.initContainers[0].envFrom[0].secretRef.name: the pods would read Secret s3"),
		c("a template's secret and projected volumes", withJobManagerTemplate(podOf(corev1.PodSpec{Volumes: []corev1.Volume{projected, secretVolume("tls", "flink-tls")}})),
			nil, []string{"api-token"}, "spec.jobManagerConfig.podTemplate.spec.volumes[1].secret.secretName: the pods would read Secret flink-tls",
			"spec.jobManagerConfig.podTemplate.spec.volumes[0].projected.sources[1].secret.name: the pods would read Secret api-token"),
		c("the spec's own references come before the templates'", func(app *v1beta1.FlinkApplication) {
			withSidecarEnv(app)
			withEnv(v1beta1.EnvironmentConfig{EnvFrom: []corev1.EnvFromSource{secretEnvFrom("db")}}, v1beta1.EnvironmentConfig{})(app)
		}, nil, []string{"db"}, sidecarEnv, "spec.jobManagerConfig.envConfig.envFrom[0].secretRef.name: the pods would read Secret db"),
		c("Secret references in templates allowed by the namespace", withSidecarEnv, map[string]string{AllowSecretReferencesAnnotation: "true"}, nil, "", ""),
	}
}

// A FlinkSessionCluster's templates meet the same policy, under the same paths.
func TestASessionClustersTemplatesMeetThePolicy(t *testing.T) {
	admission := loadAdmissionPolicy(t)
	yes := true
	cluster := &v1beta1.FlinkSessionCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "flink.k8s.io/v1beta1", Kind: "FlinkSessionCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "session", Namespace: "flink"},
		Spec: v1beta1.FlinkSessionClusterSpec{ClusterSpec: v1beta1.ClusterSpec{Image: "flink:1.20"},
			TaskManagerConfig: v1beta1.SessionTaskManagerConfig{TaskManagerConfig: v1beta1.TaskManagerConfig{PodTemplate: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "sidecar", Image: "s:1", SecurityContext: &corev1.SecurityContext{Privileged: &yes}}}}}}}},
	}
	const want = "spec.taskManagerConfig.podTemplate.spec.containers[0].securityContext.privileged: privileged containers are not allowed"
	got := admission.refusals(t, cluster, "flinksessionclusters", nil)
	assert.Equal(t, []string{want}, got)
	err := PodPolicyFrom(nil).CheckCluster(OwnerFromSessionCluster(cluster))
	require.Error(t, err)
	assert.Equal(t, want, err.Error())
}

// A template that does not read as a pod template (the API server stores it, having no schema for
// it) fails the admission policy's expressions, and so is refused by the policy's failurePolicy.
func TestATemplateThatIsNoPodIsRefused(t *testing.T) {
	admission := loadAdmissionPolicy(t)
	assert.Equal(t, admissionregistrationv1.Fail, *admission.policy.Spec.FailurePolicy)
	app := testApp()
	app.APIVersion, app.Kind = "flink.k8s.io/v1beta1", "FlinkApplication"
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
	require.NoError(t, err)
	u := &unstructured.Unstructured{Object: content}
	require.NoError(t, unstructured.SetNestedField(u.Object, "sidecar", "spec", "podTemplate", "spec", "containers"))
	result := admission.evaluate(t, admissionRequest{obj: u, resource: "flinkapplications"})
	assert.NotEmpty(t, result.errors)
}
