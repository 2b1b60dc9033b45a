package flink

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// policyCase is a FlinkApplication in a namespace with some annotations, and the refusal both
// layers of the pod policy must give it: the same message, which starts with want ("" for none).
type policyCase struct {
	name string
	// rule is the rule of the pod policy (podRules' name) the case holds to both layers.
	rule string
	edit func(app *v1beta1.FlinkApplication)
	ns   map[string]string
	want string
}

func volume(name string, src corev1.VolumeSource) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: src}
}

func withVolumes(vols ...corev1.Volume) func(*v1beta1.FlinkApplication) {
	return func(app *v1beta1.FlinkApplication) { app.Spec.Volumes = vols }
}

func withSecurityContext(sc corev1.PodSecurityContext) func(*v1beta1.FlinkApplication) {
	return func(app *v1beta1.FlinkApplication) { app.Spec.SecurityContext = &sc }
}

func withAnnotation(k, v string) func(*v1beta1.FlinkApplication) {
	return func(app *v1beta1.FlinkApplication) { app.Annotations[k] = v }
}

var (
	hostPathRoot = volume("root", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}})
	nfsVolume    = volume("data", corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports"}})
	iscsiVolume  = volume("lun", corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.2001-04.com.example:a", Lun: 0}})
	configVolume = volume("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}})
	cpTaint      = corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	masterTaint  = corev1.Toleration{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpExists}
	anyTaint     = corev1.Toleration{Operator: corev1.TolerationOpExists}
	dedicated    = corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "flink", Effect: corev1.TaintEffectNoSchedule}
)

// cpRefusal is the control-plane rule's refusal of a toleration, after the field it names.
const cpRefusal = "pods may not tolerate the control-plane nodes' NoSchedule taint"

func nodeAffinity(key string, op corev1.NodeSelectorOperator, required bool) *corev1.Affinity {
	term := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists}, {Key: key, Operator: op}}}
	if required {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}}}
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: term}}}}
}

func policyCases() []policyCase {
	root, user, no, yes := int64(0), int64(1000), false, true
	sysctls := func(names ...string) func(*v1beta1.FlinkApplication) {
		sc := corev1.PodSecurityContext{}
		for _, n := range names {
			sc.Sysctls = append(sc.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
		}
		return withSecurityContext(sc)
	}
	seLinux := func(o corev1.SELinuxOptions) func(*v1beta1.FlinkApplication) {
		return withSecurityContext(corev1.PodSecurityContext{SELinuxOptions: &o})
	}
	seccomp := func(t corev1.SeccompProfileType) func(*v1beta1.FlinkApplication) {
		return withSecurityContext(corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: t}})
	}
	appArmor := func(t corev1.AppArmorProfileType) func(*v1beta1.FlinkApplication) {
		p := &corev1.AppArmorProfile{Type: t}
		if t == corev1.AppArmorProfileTypeLocalhost {
			p.LocalhostProfile = ptr("flink")
		}
		return withSecurityContext(corev1.PodSecurityContext{AppArmorProfile: p})
	}
	jm := func(tol []corev1.Toleration, sel map[string]string, aff *corev1.Affinity) func(*v1beta1.FlinkApplication) {
		return func(app *v1beta1.FlinkApplication) {
			c := &app.Spec.JobManagerConfig
			c.Tolerations, c.NodeSelector, c.Affinity = tol, sel, aff
		}
	}
	tm := func(tol []corev1.Toleration, sel map[string]string, aff *corev1.Affinity) func(*v1beta1.FlinkApplication) {
		return func(app *v1beta1.FlinkApplication) {
			c := &app.Spec.TaskManagerConfig
			c.Tolerations, c.NodeSelector, c.Affinity = tol, sel, aff
		}
	}
	cp := map[string]string{"node-role.kubernetes.io/control-plane": ""}
	const apparmor = "container.apparmor.security.beta.kubernetes.io/jobmanager"
	return []policyCase{
		{name: "a plain application passes", want: ""},

		{"hostPath", "hostPath volumes", withVolumes(hostPathRoot), nil, "spec.volumes[0]: hostPath volume root is not allowed"},
		{"hostPath after another volume", "hostPath volumes", withVolumes(configVolume, hostPathRoot), nil, "spec.volumes[1]: hostPath volume root is not allowed"},
		{"hostPath allowed", "hostPath volumes", withVolumes(hostPathRoot), map[string]string{"flinkfsm.io/allow-host-path": "true"}, ""},

		{"nfs", "volume types", withVolumes(configVolume, configVolume, nfsVolume), nil, "spec.volumes[2].nfs: volume data has type nfs, which is not allowed"},
		{"iscsi", "volume types", withVolumes(iscsiVolume), nil, "spec.volumes[0].iscsi: volume lun has type iscsi"},
		{"gcePersistentDisk", "volume types", withVolumes(volume("disk", corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "pd"}})), nil,
			"spec.volumes[0].gcePersistentDisk: volume disk has type gcePersistentDisk"},
		{"awsElasticBlockStore", "volume types", withVolumes(volume("ebs", corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}})), nil,
			"spec.volumes[0].awsElasticBlockStore:"},
		{"rbd", "volume types", withVolumes(volume("rbd", corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: []string{"10.0.0.1"}, RBDImage: "i"}})), nil,
			"spec.volumes[0].rbd:"},
		{"flexVolume", "volume types", withVolumes(volume("flex", corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "example/driver"}})), nil,
			"spec.volumes[0].flexVolume:"},
		{"every baseline volume type passes", "volume types", withVolumes(configVolume,
			volume("s", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}),
			volume("e", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
			volume("p", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}),
			volume("pr", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}),
			volume("d", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}),
			volume("c", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}),
			volume("eph", corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}})), map[string]string{"flinkfsm.io/allow-secret-references": "true"}, ""},
		{"nfs allowed", "volume types", withVolumes(nfsVolume), map[string]string{"flinkfsm.io/allowed-volume-types": "nfs"}, ""},
		{"nfs allowed, not iscsi", "volume types", withVolumes(nfsVolume, iscsiVolume), map[string]string{"flinkfsm.io/allowed-volume-types": "cephfs, nfs"},
			"spec.volumes[1].iscsi: volume lun has type iscsi, which is not allowed (allowed: configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected, secret, cephfs, nfs)"},
		{"any volume type allowed", "volume types", withVolumes(nfsVolume, iscsiVolume), map[string]string{"flinkfsm.io/allowed-volume-types": "*"}, ""},
		{"any volume type allowed, not hostPath", "hostPath volumes", withVolumes(nfsVolume, hostPathRoot), map[string]string{"flinkfsm.io/allowed-volume-types": "*"},
			"spec.volumes[1]: hostPath volume root is not allowed"},

		{"hostProcess", "Windows HostProcess", withSecurityContext(corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: &yes}}), nil,
			"spec.securityContext.windowsOptions.hostProcess: Windows HostProcess pods are not allowed"},
		{"hostProcess false", "Windows HostProcess", withSecurityContext(corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: &no}}), nil, ""},
		{"hostProcess allowed", "Windows HostProcess", withSecurityContext(corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: &yes}}),
			map[string]string{"flinkfsm.io/allow-host-process": "true"}, ""},

		{"SELinux spc_t", "SELinux", seLinux(corev1.SELinuxOptions{Type: "spc_t"}), nil, "spec.securityContext.seLinuxOptions.type: SELinux type spc_t is not allowed"},
		{"SELinux user", "SELinux", seLinux(corev1.SELinuxOptions{User: "system_u"}), nil, "spec.securityContext.seLinuxOptions.user: setting the SELinux user is not allowed"},
		{"SELinux role", "SELinux", seLinux(corev1.SELinuxOptions{Type: "container_t", Role: "system_r"}), nil, "spec.securityContext.seLinuxOptions.role: setting the SELinux role"},
		{"SELinux baseline types and levels pass", "SELinux", seLinux(corev1.SELinuxOptions{Type: "container_kvm_t", Level: "s0:c123,c456"}), nil, ""},
		{"SELinux container_engine_t passes", "SELinux", seLinux(corev1.SELinuxOptions{Type: "container_engine_t"}), nil, ""},
		{"SELinux allowed", "SELinux", seLinux(corev1.SELinuxOptions{Type: "spc_t", User: "system_u"}), map[string]string{"flinkfsm.io/allow-selinux-options": "true"}, ""},

		{"seccomp Unconfined", "seccomp", seccomp(corev1.SeccompProfileTypeUnconfined), nil, "spec.securityContext.seccompProfile.type: seccomp profile Unconfined is not allowed"},
		{"seccomp RuntimeDefault passes", "seccomp", seccomp(corev1.SeccompProfileTypeRuntimeDefault), nil, ""},
		{"seccomp Unconfined allowed", "seccomp", seccomp(corev1.SeccompProfileTypeUnconfined), map[string]string{"flinkfsm.io/allow-unconfined-seccomp": "true"}, ""},

		{"AppArmor Unconfined", "AppArmor", appArmor(corev1.AppArmorProfileTypeUnconfined), nil,
			"spec.securityContext.appArmorProfile.type: AppArmor profile Unconfined is not allowed"},
		{"AppArmor Localhost passes", "AppArmor", appArmor(corev1.AppArmorProfileTypeLocalhost), nil, ""},
		{"AppArmor annotation unconfined", "AppArmor", withAnnotation(apparmor, "unconfined"), nil,
			"metadata.annotations[" + apparmor + "]: AppArmor profile unconfined is not allowed"},
		{"AppArmor annotations runtime/default and localhost pass", "AppArmor", func(app *v1beta1.FlinkApplication) {
			withAnnotation(apparmor, "runtime/default")(app)
			withAnnotation("container.apparmor.security.beta.kubernetes.io/taskmanager", "localhost/flink")(app)
		}, nil, ""},
		{"AppArmor unconfined allowed", "AppArmor", func(app *v1beta1.FlinkApplication) {
			appArmor(corev1.AppArmorProfileTypeUnconfined)(app)
			withAnnotation(apparmor, "unconfined")(app)
		}, map[string]string{"flinkfsm.io/allow-unconfined-apparmor": "true"}, ""},

		{"unsafe sysctl", "sysctls", sysctls("net.core.somaxconn"), nil, "spec.securityContext.sysctls[0]: sysctl net.core.somaxconn is not in the safe set"},
		{"unsafe sysctl after safe ones", "sysctls", sysctls("kernel.shm_rmid_forced", "net.ipv4.tcp_keepalive_time", "kernel.msgmax"), nil,
			"spec.securityContext.sysctls[2]: sysctl kernel.msgmax is not in the safe set"},
		{"safe sysctls pass", "sysctls", sysctls("net.ipv4.ip_local_port_range", "net.ipv4.tcp_rmem"), nil, ""},
		{"unsafe sysctl allowed", "sysctls", sysctls("net.core.somaxconn"), map[string]string{"flinkfsm.io/allow-root": "true"}, ""},

		{"runAsUser 0", "running as root", withSecurityContext(corev1.PodSecurityContext{RunAsUser: &root}), nil, "spec.securityContext.runAsUser: pods may not run as root"},
		{"runAsGroup 0", "running as root", withSecurityContext(corev1.PodSecurityContext{RunAsUser: &user, RunAsGroup: &root}), nil, "spec.securityContext.runAsGroup: pods may not run as root"},
		{"runAsNonRoot false", "running as root", withSecurityContext(corev1.PodSecurityContext{RunAsNonRoot: &no}), nil, "spec.securityContext.runAsNonRoot: pods may not run as root"},
		{"non-root passes", "running as root", withSecurityContext(corev1.PodSecurityContext{RunAsUser: &user, RunAsNonRoot: &yes}), nil, ""},
		{"root allowed", "running as root", withSecurityContext(corev1.PodSecurityContext{RunAsUser: &root}), map[string]string{"flinkfsm.io/allow-root": "true"}, ""},

		{"foreign service account", "service accounts", func(app *v1beta1.FlinkApplication) { app.Spec.ServiceAccountName = "admin" }, nil,
			"spec.serviceAccountName: service account admin is not allowed in this namespace (allowed: default)"},
		{"service account allowed", "service accounts", func(app *v1beta1.FlinkApplication) { app.Spec.ServiceAccountName = "flink" },
			map[string]string{"flinkfsm.io/allowed-service-accounts": "default, flink"}, ""},
		{"any service account", "service accounts", func(app *v1beta1.FlinkApplication) { app.Spec.ServiceAccountName = "admin" },
			map[string]string{"flinkfsm.io/allowed-service-accounts": "*"}, ""},

		// Where a pod can land, not how it asked: a pod that tolerates the control-plane nodes'
		// NoSchedule taint may land on one whatever its selectors say, so the toleration is refused.
		{"control plane by node selector", "control-plane nodes", jm([]corev1.Toleration{cpTaint}, cp, nil), nil,
			"spec.jobManagerConfig.tolerations[0]: " + cpRefusal},
		{"master by required affinity", "control-plane nodes", tm([]corev1.Toleration{masterTaint}, nil, nodeAffinity("node-role.kubernetes.io/master", corev1.NodeSelectorOpIn, true)), nil,
			"spec.taskManagerConfig.tolerations[0]: " + cpRefusal},
		{"every taint tolerated, control plane preferred", "control-plane nodes", jm([]corev1.Toleration{anyTaint}, nil, nodeAffinity("node-role.kubernetes.io/control-plane", corev1.NodeSelectorOpExists, false)), nil,
			"spec.jobManagerConfig.tolerations[0]: " + cpRefusal},
		{"every taint tolerated, a control-plane node by its hostname", "control-plane nodes", jm([]corev1.Toleration{dedicated, anyTaint}, map[string]string{"kubernetes.io/hostname": "cp-1"}, nil), nil,
			"spec.jobManagerConfig.tolerations[1]: " + cpRefusal},
		{"the control-plane taint of every effect, a node by matchFields", "control-plane nodes", tm([]corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists}}, nil,
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"cp-1"}}}}}}}}), nil,
			"spec.taskManagerConfig.tolerations[0]: " + cpRefusal},
		{"every NoSchedule taint tolerated, a node by hostname affinity", "control-plane nodes", tm([]corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, nil,
			nodeAffinity("kubernetes.io/hostname", corev1.NodeSelectorOpIn, true)), nil,
			"spec.taskManagerConfig.tolerations[0]: " + cpRefusal},
		{"the master taint by Equal", "control-plane nodes", jm([]corev1.Toleration{{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpEqual, Effect: corev1.TaintEffectNoSchedule}}, nil, nil), nil,
			"spec.jobManagerConfig.tolerations[0]: " + cpRefusal},
		// This case passed under the earlier rule, which trusted the selectors: a pod that tolerates
		// the taint is refused whatever it selects.
		{"a toleration alone", "control-plane nodes", jm([]corev1.Toleration{cpTaint}, map[string]string{"disk": "ssd"}, nil), nil,
			"spec.jobManagerConfig.tolerations[0]: " + cpRefusal},
		{"a toleration with an affinity away from the control plane", "control-plane nodes",
			tm([]corev1.Toleration{cpTaint}, nil, nodeAffinity("node-role.kubernetes.io/control-plane", corev1.NodeSelectorOpDoesNotExist, true)), nil,
			"spec.taskManagerConfig.tolerations[0]: " + cpRefusal},
		{"selector alone passes", "control-plane nodes", tm(nil, cp, nil), nil, ""},
		{"other taints tolerated pass", "control-plane nodes", jm([]corev1.Toleration{dedicated, {Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectPreferNoSchedule}}, map[string]string{"kubernetes.io/hostname": "cp-1"}, nil), nil, ""},
		{"control plane allowed", "control-plane nodes", jm([]corev1.Toleration{cpTaint}, cp, nil), map[string]string{"flinkfsm.io/allow-control-plane-nodes": "true"}, ""},
	}
}

// secretCase is a policy case whose admission verdict depends on who writes the object: a user who
// may get the Secrets in mayGet ("*": every one). want is the admission policy's verdict for that
// user; unverified is the verdict for a user who may get none, which the operator gives to every
// object as long as it does not know the admission policy enforces.
type secretCase struct {
	policyCase
	mayGet     []string
	unverified string
}

func withEnv(jm, tm v1beta1.EnvironmentConfig) func(*v1beta1.FlinkApplication) {
	return func(app *v1beta1.FlinkApplication) {
		app.Spec.JobManagerConfig.EnvConfig, app.Spec.TaskManagerConfig.EnvConfig = jm, tm
	}
}

func secretEnvFrom(name string) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

func secretEnv(variable, name string) corev1.EnvVar {
	return corev1.EnvVar{Name: variable, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "password"}}}
}

func secretVolume(volumeName, name string) corev1.Volume {
	return volume(volumeName, corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}})
}

func secretCases() []secretCase {
	const rule = "Secret references"
	configFrom := corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}}
	plain := corev1.EnvVar{Name: "MODE", Value: "batch"}
	configMapEnv := corev1.EnvVar{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, Key: "level"}}}
	projected := volume("token", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}},
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
		{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "api-token"}}},
	}}})
	const (
		jmEnvFrom = "spec.jobManagerConfig.envConfig.envFrom[1].secretRef.name: the pods would read Secret db, which only a user who may get it may reference"
		tmEnv     = "spec.taskManagerConfig.envConfig.env[2].valueFrom.secretKeyRef.name: the pods would read Secret kafka, which only a user who may get it may reference"
	)
	c := func(name string, edit func(*v1beta1.FlinkApplication), ns map[string]string, mayGet []string, want, unverified string) secretCase {
		return secretCase{policyCase{name, rule, edit, ns, want}, mayGet, unverified}
	}
	return []secretCase{
		c("envFrom a Secret the user may not get", withEnv(v1beta1.EnvironmentConfig{EnvFrom: []corev1.EnvFromSource{configFrom, secretEnvFrom("db")}}, v1beta1.EnvironmentConfig{}),
			nil, nil, jmEnvFrom, jmEnvFrom),
		c("envFrom a Secret the user may get", withEnv(v1beta1.EnvironmentConfig{EnvFrom: []corev1.EnvFromSource{configFrom, secretEnvFrom("db")}}, v1beta1.EnvironmentConfig{}),
			nil, []string{"db"}, "", jmEnvFrom),
		c("a secretKeyRef to another Secret than the user may get", withEnv(v1beta1.EnvironmentConfig{},
			v1beta1.EnvironmentConfig{Env: []corev1.EnvVar{plain, configMapEnv, secretEnv("KAFKA_PASSWORD", "kafka")}}),
			nil, []string{"db"}, tmEnv, tmEnv),
		c("a secret volume", withVolumes(configVolume, secretVolume("tls", "flink-tls")), nil, []string{"db"},
			"spec.volumes[1].secret.secretName: the pods would read Secret flink-tls", "spec.volumes[1].secret.secretName: the pods would read Secret flink-tls"),
		c("a projected volume's Secret", withVolumes(projected), nil, nil,
			"spec.volumes[0].projected.sources[2].secret.name: the pods would read Secret api-token",
			"spec.volumes[0].projected.sources[2].secret.name: the pods would read Secret api-token"),
		c("the first Secret the user may not get is named", func(app *v1beta1.FlinkApplication) {
			withEnv(v1beta1.EnvironmentConfig{EnvFrom: []corev1.EnvFromSource{configFrom, secretEnvFrom("db")}},
				v1beta1.EnvironmentConfig{EnvFrom: []corev1.EnvFromSource{secretEnvFrom("db")}, Env: []corev1.EnvVar{plain, secretEnv("DB", "db"), secretEnv("KAFKA_PASSWORD", "kafka")}})(app)
			withVolumes(secretVolume("tls", "flink-tls"), projected)(app)
		}, nil, []string{"db", "api-token"}, tmEnv, jmEnvFrom),
		c("Secrets named many times, each of which the user may get", func(app *v1beta1.FlinkApplication) {
			withEnv(v1beta1.EnvironmentConfig{EnvFrom: []corev1.EnvFromSource{secretEnvFrom("db"), secretEnvFrom("db")}},
				v1beta1.EnvironmentConfig{EnvFrom: []corev1.EnvFromSource{secretEnvFrom("db")}, Env: []corev1.EnvVar{secretEnv("DB", "db"), secretEnv("KAFKA_PASSWORD", "kafka")}})(app)
			withVolumes(secretVolume("db", "db"), secretVolume("kafka", "kafka"))(app)
		}, nil, []string{"kafka", "db"}, "", "spec.jobManagerConfig.envConfig.envFrom[0].secretRef.name: the pods would read Secret db"),
		c("a user who may get every Secret of the namespace", func(app *v1beta1.FlinkApplication) {
			withEnv(v1beta1.EnvironmentConfig{EnvFrom: []corev1.EnvFromSource{configFrom, secretEnvFrom("db")}}, v1beta1.EnvironmentConfig{})(app)
			withVolumes(secretVolume("tls", "flink-tls"), projected)(app)
		}, nil, []string{"*"}, "", jmEnvFrom),
		c("imagePullSecrets are the kubelet's, not the job's", func(app *v1beta1.FlinkApplication) {
			app.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
		}, nil, nil, "", ""),
		c("Secret references allowed by the namespace", func(app *v1beta1.FlinkApplication) {
			withEnv(v1beta1.EnvironmentConfig{EnvFrom: []corev1.EnvFromSource{configFrom, secretEnvFrom("db")}},
				v1beta1.EnvironmentConfig{Env: []corev1.EnvVar{plain, configMapEnv, secretEnv("KAFKA_PASSWORD", "kafka")}})(app)
			withVolumes(secretVolume("tls", "flink-tls"), projected)(app)
		}, map[string]string{"flinkfsm.io/allow-secret-references": "true"}, nil, "", ""),
	}
}

// Each rule of the pod policy, held against both of its layers: the operator's own check and the
// admission policy of deploy/policy.yaml, evaluated as the API server evaluates it. Each refuses
// the same manifests with the same message naming the field, and a namespace's annotation relaxes
// both. Where the admission verdict depends on who writes the object (Secret references), the
// operator, which cannot know, refuses what the admission policy refuses a user who may get no
// Secret, naming the same field, unless it is told the admission policy enforces; then it admits
// what the admission policy admitted.
func TestBothLayersOfThePodPolicyAgree(t *testing.T) {
	admission := loadAdmissionPolicy(t)
	cases := slices.Concat(secretCases(), templateSecretCases())
	for _, c := range slices.Concat(policyCases(), templatePolicyCases()) {
		cases = append(cases, secretCase{c, nil, c.want})
	}
	for _, c := range cases {
		app := testApp()
		app.APIVersion, app.Kind = "flink.k8s.io/v1beta1", "FlinkApplication"
		if c.edit != nil {
			c.edit(app)
		}
		refusal := func(err error) []string {
			if err != nil {
				return []string{err.Error()}
			}
			return nil
		}
		unverified := refusal(operatorPolicy(c.ns, false).Check(app))
		enforced := refusal(operatorPolicy(c.ns, true).Check(app))
		user := requester{name: "alice", secrets: c.mayGet}
		apply := admission.review(t, admissionRequest{obj: app, resource: "flinkapplications", ns: c.ns, who: user})
		applyByNobody := admission.review(t, admissionRequest{obj: app, resource: "flinkapplications", ns: c.ns, who: nobody})
		wantEnforced := c.want
		if c.rule == "Secret references" {
			// The object is stored only if the admission policy admitted it.
			wantEnforced = ""
		}
		for _, l := range []struct {
			layer string
			got   []string
			want  string
		}{
			{"the admission policy, for " + user.name, apply, c.want},
			{"the admission policy, for a user who may get no Secret", applyByNobody, c.unverified},
			{"the operator", unverified, c.unverified},
			{"the operator where the admission policy enforces", enforced, wantEnforced},
		} {
			switch {
			case l.want == "" && len(l.got) > 0:
				t.Errorf("%s: %s refuses: %q", c.name, l.layer, l.got)
			case l.want != "" && len(l.got) != 1:
				t.Errorf("%s: %s gives %d refusals, want one starting %q: %q", c.name, l.layer, len(l.got), l.want, l.got)
			case l.want != "" && !strings.HasPrefix(l.got[0], l.want):
				t.Errorf("%s: %s refuses with\n  %q,\nwant one starting\n  %q", c.name, l.layer, l.got[0], l.want)
			}
		}
		if len(unverified) == 1 && len(applyByNobody) == 1 {
			// Who may not get a Secret is the admission policy's to say, not the operator's: the
			// messages agree up to the reason.
			operator, apply := unverified[0], applyByNobody[0]
			if c.rule == "Secret references" {
				operator, _, _ = strings.Cut(operator, ";")
				apply, _, _ = strings.Cut(apply, ";")
			}
			if operator != apply {
				t.Errorf("%s: the layers refuse with different messages:\n  operator:  %s\n  admission: %s", c.name, unverified[0], applyByNobody[0])
			}
		}
	}
}
