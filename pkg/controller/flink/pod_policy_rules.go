package flink

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podRule is one rule of the pod policy in both layers that enforce it: the operator's check
// (check, and pod for what only a rendered pod can show) and the ValidatingAdmissionPolicy's CEL,
// which `go run ./hack/podpolicy` renders into deploy/policy.yaml. Both are written here, side by
// side, over the same data; pod_policy_layers_test.go holds every rule's two forms to the same
// verdict and the same message, case by case.
type podRule struct {
	// name is the rule as docs/security.md lists it.
	name string
	// control is the Pod Security Standards control the rule enforces at least; "" for rules
	// beyond PSS baseline.
	control string
	// annotation is the Namespace annotation that relaxes the rule; "" where the CRD has no field
	// for it, so that no manifest can ask for it.
	annotation string
	// check returns the refusal of the first field of the owner the rule refuses, naming it, or "".
	check func(o *ClusterOwner, p PodPolicy) string
	// The CEL: variables (evaluated lazily, after the policy's own), the expression that is true
	// when the object passes, the message naming the field, and a fixed message should that fail.
	variables                              []celVariable
	expression, messageExpression, message string
	// more are further validations of the rule, for a refusal that one validation cannot name: a
	// messageExpression has no authorizer, so a rule that asks it names the field through one
	// validation per question (the Secret references rule).
	more []celValidation
	// requester is set on the rule whose admission verdict depends on who writes the object. The
	// operator cannot know that: it refuses what the admission policy would refuse a user with no
	// rights, with the same field but its own reason, unless PodPolicy.AdmissionPolicyEnforced.
	requester bool
	// pod returns what a pod the operator rendered has that the rule refuses, for fields the CRD
	// does not have (crdFields, which the API server prunes before any policy sees a manifest).
	pod       func(s *corev1.PodSpec) string
	crdFields []string
}

type celVariable struct{ name, expression string }

// celValidation is one validation of deploy/policy.yaml; note tells a rule's further validations
// apart in the policy's comments.
type celValidation struct{ note, expression, messageExpression, message string }

// validations are the rule's validations in deploy/policy.yaml: its expression, then more.
func (r podRule) validations() []celValidation {
	if r.expression == "" {
		return nil
	}
	return append([]celValidation{{"", r.expression, r.messageExpression, r.message}}, r.more...)
}

// The data of the rules, Pod Security Standards baseline as of Kubernetes 1.34.
var (
	// baselineVolumeTypes are restricted's volume types (baseline forbids only hostPath, which has a
	// rule of its own): the ones that cannot reach the node or a network filesystem by themselves.
	baselineVolumeTypes = []string{"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
	seLinuxTypes        = []string{"container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
	// safeSysctls are namespaced and isolated between pods on a node; the kubelet allows them.
	safeSysctls = []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
		"net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
		"net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}
	baselineCapabilities = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
		"SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
	appArmorTypes = []string{"RuntimeDefault", "Localhost"}
	// controlPlaneLabels are the labels, and taints, of control-plane nodes (master before 1.24).
	controlPlaneLabels = []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"}
)

const appArmorAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/"

// policyVariables are read by the rules; each is the field or nothing, so rules need not test has().
var policyVariables = []celVariable{
	{"objectAnnotations", "has(object.metadata.annotations) ? object.metadata.annotations : {}"},
	{"securityContext", "has(object.spec.securityContext) ? object.spec.securityContext : {}"},
	{"volumes", "has(object.spec.volumes) ? object.spec.volumes : []"},
}

var podRules = []podRule{{
	name: "hostPath volumes", control: "HostPath Volumes", annotation: AllowHostPathAnnotation,
	check: func(o *ClusterOwner, p PodPolicy) string {
		for i, v := range o.Spec.Volumes {
			if v.HostPath != nil && !p.AllowHostPath {
				return fmt.Sprintf("spec.volumes[%d]: hostPath volume %s is not allowed", i, v.Name) + relax(AllowHostPathAnnotation)
			}
		}
		return ""
	},
	variables:  []celVariable{{"hostPathVolumes", "variables.volumes.filter(v, has(v.hostPath))"}},
	expression: "variables.allowHostPath || size(variables.hostPathVolumes) == 0",
	messageExpression: `'spec.volumes[' + string(variables.volumes.indexOf(variables.hostPathVolumes[0])) + ']: hostPath volume ' +
variables.hostPathVolumes[0].name + ' is not allowed' + ` + cel(relax(AllowHostPathAnnotation)),
	message: "spec.volumes: hostPath volumes are not allowed" + relax(AllowHostPathAnnotation),
}, {
	name: "volume types", control: "Volume Types (restricted)", annotation: AllowedVolumeTypesAnnotation,
	check: func(o *ClusterOwner, p PodPolicy) string {
		allowed := slices.Concat(baselineVolumeTypes, p.VolumeTypes)
		for i, v := range o.Spec.Volumes {
			for _, t := range volumeTypes(v.VolumeSource) {
				if t != "hostPath" && !slices.Contains(allowed, t) && !slices.Contains(allowed, "*") {
					return fmt.Sprintf("spec.volumes[%d].%s: volume %s has type %s, which is not allowed (allowed: %s)",
						i, t, v.Name, t, strings.Join(allowed, ", ")) + relax(AllowedVolumeTypesAnnotation)
				}
			}
		}
		return ""
	},
	variables: []celVariable{
		{"volumeTypes", celList(baselineVolumeTypes) + " + variables.extraVolumeTypes"},
		{"disallowedVolumes", `'*' in variables.volumeTypes ? [] :
variables.volumes.filter(v, v.exists(k, k != 'name' && k != 'hostPath' && !(k in variables.volumeTypes)))`},
		{"disallowedVolumeType", `size(variables.disallowedVolumes) == 0 ? '' :
variables.disallowedVolumes[0].filter(k, k != 'name' && k != 'hostPath' && !(k in variables.volumeTypes)).min()`},
	},
	expression: "size(variables.disallowedVolumes) == 0",
	messageExpression: `'spec.volumes[' + string(variables.volumes.indexOf(variables.disallowedVolumes[0])) + '].' + variables.disallowedVolumeType +
': volume ' + variables.disallowedVolumes[0].name + ' has type ' + variables.disallowedVolumeType +
', which is not allowed (allowed: ' + variables.volumeTypes.join(', ') + ')' + ` + cel(relax(AllowedVolumeTypesAnnotation)),
	message: "spec.volumes: a volume type is not allowed (allowed: " + strings.Join(baselineVolumeTypes, ", ") + ")" + relax(AllowedVolumeTypesAnnotation),
}, {
	name: "Windows HostProcess", control: "HostProcess", annotation: AllowHostProcessAnnotation,
	check: func(o *ClusterOwner, p PodPolicy) string {
		if sc := o.Spec.SecurityContext; sc != nil && hostProcess(sc.WindowsOptions) && !p.AllowHostProcess {
			return "spec.securityContext.windowsOptions.hostProcess: Windows HostProcess pods are not allowed" + relax(AllowHostProcessAnnotation)
		}
		return ""
	},
	expression: `variables.allowHostProcess || !has(variables.securityContext.windowsOptions) ||
!has(variables.securityContext.windowsOptions.hostProcess) || !variables.securityContext.windowsOptions.hostProcess`,
	message: "spec.securityContext.windowsOptions.hostProcess: Windows HostProcess pods are not allowed" + relax(AllowHostProcessAnnotation),
	pod: eachContainer(func(c *corev1.Container) string {
		if c.SecurityContext != nil && hostProcess(c.SecurityContext.WindowsOptions) {
			return "securityContext.windowsOptions.hostProcess"
		}
		return ""
	}),
}, {
	name: "host namespaces", control: "Host Namespaces",
	pod: func(s *corev1.PodSpec) string {
		switch {
		case s.HostNetwork:
			return "spec.hostNetwork"
		case s.HostPID:
			return "spec.hostPID"
		case s.HostIPC:
			return "spec.hostIPC"
		}
		return ""
	},
	crdFields: []string{"hostNetwork", "hostPID", "hostIPC"},
}, {
	name: "privileged containers", control: "Privileged Containers",
	pod: eachContainer(func(c *corev1.Container) string {
		if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
			return "securityContext.privileged"
		}
		return ""
	}),
	crdFields: []string{"privileged"},
}, {
	name: "capabilities", control: "Capabilities",
	pod: eachContainer(func(c *corev1.Container) string {
		if sc := c.SecurityContext; sc != nil && sc.Capabilities != nil {
			for i, add := range sc.Capabilities.Add {
				if !slices.Contains(baselineCapabilities, string(add)) {
					return fmt.Sprintf("securityContext.capabilities.add[%d] %s", i, add)
				}
			}
		}
		return ""
	}),
	crdFields: []string{"capabilities"},
}, {
	name: "host ports", control: "HostPorts",
	pod: eachContainer(func(c *corev1.Container) string {
		for i, port := range c.Ports {
			if port.HostPort != 0 {
				return fmt.Sprintf("ports[%d].hostPort", i)
			}
		}
		return ""
	}),
	crdFields: []string{"hostPort"},
}, {
	name: "SELinux", control: "SELinux", annotation: AllowSELinuxOptionsAnnotation,
	check: func(o *ClusterOwner, p PodPolicy) string {
		if sc := o.Spec.SecurityContext; sc != nil && !p.AllowSELinuxOptions {
			if field, what := seLinuxProblem(sc.SELinuxOptions); field != "" {
				return "spec.securityContext.seLinuxOptions." + field + ": " + what + relax(AllowSELinuxOptionsAnnotation)
			}
		}
		return ""
	},
	variables: []celVariable{
		{"seLinux", "has(variables.securityContext.seLinuxOptions) ? variables.securityContext.seLinuxOptions : {}"},
		{"seLinuxField", `has(variables.seLinux.type) && variables.seLinux.type != '' && !(variables.seLinux.type in ` + celList(seLinuxTypes) + `) ? 'type' :
has(variables.seLinux.user) && variables.seLinux.user != '' ? 'user' :
has(variables.seLinux.role) && variables.seLinux.role != '' ? 'role' : ''`},
	},
	expression: "variables.allowSELinuxOptions || variables.seLinuxField == ''",
	messageExpression: `'spec.securityContext.seLinuxOptions.' + variables.seLinuxField + ': ' + (variables.seLinuxField == 'type' ?
'SELinux type ' + variables.seLinux.type + ' is not allowed (allowed: ` + strings.Join(seLinuxTypes, ", ") + `)' :
'setting the SELinux ' + variables.seLinuxField + ' is not allowed') + ` + cel(relax(AllowSELinuxOptionsAnnotation)),
	message: "spec.securityContext.seLinuxOptions: the SELinux options are not allowed" + relax(AllowSELinuxOptionsAnnotation),
	pod: eachContainer(func(c *corev1.Container) string {
		if c.SecurityContext != nil {
			if field, _ := seLinuxProblem(c.SecurityContext.SELinuxOptions); field != "" {
				return "securityContext.seLinuxOptions." + field
			}
		}
		return ""
	}),
}, {
	name: "/proc mount type", control: "/proc Mount Type",
	pod: eachContainer(func(c *corev1.Container) string {
		if sc := c.SecurityContext; sc != nil && sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
			return "securityContext.procMount"
		}
		return ""
	}),
	crdFields: []string{"procMount"},
}, {
	name: "seccomp", control: "Seccomp", annotation: AllowUnconfinedSeccompAnnotation,
	check: func(o *ClusterOwner, p PodPolicy) string {
		if sc := o.Spec.SecurityContext; sc != nil && unconfinedSeccomp(sc.SeccompProfile) && !p.AllowUnconfinedSeccomp {
			return "spec.securityContext.seccompProfile.type: seccomp profile Unconfined is not allowed" + relax(AllowUnconfinedSeccompAnnotation)
		}
		return ""
	},
	expression: `variables.allowUnconfinedSeccomp || !has(variables.securityContext.seccompProfile) ||
!has(variables.securityContext.seccompProfile.type) || variables.securityContext.seccompProfile.type != 'Unconfined'`,
	message: "spec.securityContext.seccompProfile.type: seccomp profile Unconfined is not allowed" + relax(AllowUnconfinedSeccompAnnotation),
	pod: eachContainer(func(c *corev1.Container) string {
		if c.SecurityContext != nil && unconfinedSeccomp(c.SecurityContext.SeccompProfile) {
			return "securityContext.seccompProfile.type"
		}
		return ""
	}),
}, {
	// The operator copies the application's annotations to its pods, so the deprecated AppArmor
	// annotations, which the kubelet still honours, are the application's.
	name: "AppArmor", control: "AppArmor", annotation: AllowUnconfinedAppArmorAnnotation,
	check: func(o *ClusterOwner, p PodPolicy) string {
		if p.AllowUnconfinedAppArmor {
			return ""
		}
		if sc := o.Spec.SecurityContext; sc != nil && !appArmorAllowed(sc.AppArmorProfile) {
			return fmt.Sprintf("spec.securityContext.appArmorProfile.type: AppArmor profile %s is not allowed (allowed: %s)",
				sc.AppArmorProfile.Type, strings.Join(appArmorTypes, ", ")) + relax(AllowUnconfinedAppArmorAnnotation)
		}
		keys := make([]string, 0, len(o.Annotations))
		for k := range o.Annotations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v := o.Annotations[k]; strings.HasPrefix(k, appArmorAnnotationPrefix) && v != "runtime/default" && !strings.HasPrefix(v, "localhost/") {
				return fmt.Sprintf("metadata.annotations[%s]: AppArmor profile %s is not allowed (allowed: runtime/default, localhost/<profile>)", k, v) +
					relax(AllowUnconfinedAppArmorAnnotation)
			}
		}
		return ""
	},
	variables: []celVariable{
		{"appArmorType", `has(variables.securityContext.appArmorProfile) && has(variables.securityContext.appArmorProfile.type) ?
variables.securityContext.appArmorProfile.type : ''`},
		{"unconfinedAppArmorAnnotations", `variables.objectAnnotations.filter(k, k.startsWith('` + appArmorAnnotationPrefix + `') &&
variables.objectAnnotations[k] != 'runtime/default' && !variables.objectAnnotations[k].startsWith('localhost/'))`},
	},
	expression: `variables.allowUnconfinedAppArmor ||
variables.appArmorType in ` + celList(append([]string{""}, appArmorTypes...)) + ` && size(variables.unconfinedAppArmorAnnotations) == 0`,
	messageExpression: `(!(variables.appArmorType in ` + celList(append([]string{""}, appArmorTypes...)) + `) ?
'spec.securityContext.appArmorProfile.type: AppArmor profile ' + variables.appArmorType + ' is not allowed (allowed: ` + strings.Join(appArmorTypes, ", ") + `)' :
'metadata.annotations[' + variables.unconfinedAppArmorAnnotations.min() + ']: AppArmor profile ' +
variables.objectAnnotations[variables.unconfinedAppArmorAnnotations.min()] + ' is not allowed (allowed: runtime/default, localhost/<profile>)') + ` +
		cel(relax(AllowUnconfinedAppArmorAnnotation)),
	message: "spec.securityContext.appArmorProfile: AppArmor profile Unconfined is not allowed" + relax(AllowUnconfinedAppArmorAnnotation),
	pod: eachContainer(func(c *corev1.Container) string {
		if c.SecurityContext != nil && !appArmorAllowed(c.SecurityContext.AppArmorProfile) {
			return "securityContext.appArmorProfile.type"
		}
		return ""
	}),
}, {
	name: "sysctls", control: "Sysctls", annotation: AllowRootAnnotation,
	check: func(o *ClusterOwner, p PodPolicy) string {
		if sc := o.Spec.SecurityContext; sc != nil && !p.AllowRoot {
			for i, s := range sc.Sysctls {
				if !slices.Contains(safeSysctls, s.Name) {
					return fmt.Sprintf("spec.securityContext.sysctls[%d]: sysctl %s is not in the safe set (%s)", i, s.Name, strings.Join(safeSysctls, ", ")) +
						relax(AllowRootAnnotation)
				}
			}
		}
		return ""
	},
	variables: []celVariable{{"unsafeSysctls", `has(variables.securityContext.sysctls) ?
variables.securityContext.sysctls.filter(s, !(s.name in ` + celList(safeSysctls) + `)) : []`}},
	expression: "variables.allowRoot || size(variables.unsafeSysctls) == 0",
	messageExpression: `'spec.securityContext.sysctls[' + string(variables.securityContext.sysctls.indexOf(variables.unsafeSysctls[0])) +
']: sysctl ' + variables.unsafeSysctls[0].name + ' is not in the safe set (` + strings.Join(safeSysctls, ", ") + `)' + ` + cel(relax(AllowRootAnnotation)),
	message: "spec.securityContext.sysctls: a sysctl is not in the safe set (" + strings.Join(safeSysctls, ", ") + ")" + relax(AllowRootAnnotation),
}, {
	name: "running as root", control: "Running as Non-root (restricted)", annotation: AllowRootAnnotation,
	check: func(o *ClusterOwner, p PodPolicy) string {
		sc := o.Spec.SecurityContext
		if sc == nil || p.AllowRoot {
			return ""
		}
		field := ""
		switch {
		case sc.RunAsUser != nil && *sc.RunAsUser == 0:
			field = "runAsUser"
		case sc.RunAsGroup != nil && *sc.RunAsGroup == 0:
			field = "runAsGroup"
		case sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot:
			field = "runAsNonRoot"
		default:
			return ""
		}
		return "spec.securityContext." + field + ": " + rootRefusal + relax(AllowRootAnnotation)
	},
	variables: []celVariable{{"rootField", `has(variables.securityContext.runAsUser) && variables.securityContext.runAsUser == 0 ? 'runAsUser' :
has(variables.securityContext.runAsGroup) && variables.securityContext.runAsGroup == 0 ? 'runAsGroup' :
has(variables.securityContext.runAsNonRoot) && !variables.securityContext.runAsNonRoot ? 'runAsNonRoot' : ''`}},
	expression:        "variables.allowRoot || variables.rootField == ''",
	messageExpression: "'spec.securityContext.' + variables.rootField + " + cel(": "+rootRefusal+relax(AllowRootAnnotation)),
	message:           "spec.securityContext: " + rootRefusal + relax(AllowRootAnnotation),
}, {
	name: "service accounts", annotation: AllowedServiceAccountsAnnotation,
	check: func(o *ClusterOwner, p PodPolicy) string {
		if sa := o.Spec.ServiceAccountName; sa != "" && !slices.Contains(p.ServiceAccounts, sa) && !slices.Contains(p.ServiceAccounts, "*") {
			return fmt.Sprintf("spec.serviceAccountName: service account %s is not allowed in this namespace (allowed: %s); add it to the namespace's %s annotation",
				sa, strings.Join(p.ServiceAccounts, ", "), AllowedServiceAccountsAnnotation)
		}
		return ""
	},
	expression: `!has(object.spec.serviceAccountName) || object.spec.serviceAccountName == '' ||
object.spec.serviceAccountName in variables.serviceAccounts || '*' in variables.serviceAccounts`,
	messageExpression: `'spec.serviceAccountName: service account ' + object.spec.serviceAccountName +
' is not allowed in this namespace (allowed: ' + variables.serviceAccounts.join(', ') + ` +
		cel("); add it to the namespace's "+AllowedServiceAccountsAnnotation+" annotation"),
	message: "spec.serviceAccountName: the service account is not allowed in this namespace; add it to the namespace's " +
		AllowedServiceAccountsAnnotation + " annotation",
}, {
	// A pod that both tolerates the control-plane taint and selects control-plane nodes runs beside
	// the API server and etcd, where a container escape is a cluster compromise.
	name: "control-plane nodes", annotation: AllowControlPlaneNodesAnnotation,
	check: func(o *ClusterOwner, p PodPolicy) string {
		if p.AllowControlPlaneNodes {
			return ""
		}
		jm, tm := o.Spec.JobManagerConfig, o.TaskManagerConfig
		for _, c := range []struct {
			path        string
			tolerations []corev1.Toleration
			selector    map[string]string
			affinity    *corev1.Affinity
		}{
			{"spec.jobManagerConfig", jm.Tolerations, jm.NodeSelector, jm.Affinity},
			{"spec.taskManagerConfig", tm.Tolerations, tm.NodeSelector, tm.Affinity},
		} {
			if !slices.ContainsFunc(c.tolerations, toleratesControlPlane) {
				continue
			}
			field := ""
			switch {
			case slices.ContainsFunc(controlPlaneLabels, func(l string) bool { _, ok := c.selector[l]; return ok }):
				field = c.path + ".nodeSelector"
			case affinityForControlPlane(c.affinity):
				field = c.path + ".affinity.nodeAffinity"
			default:
				continue
			}
			return field + ": " + controlPlaneRefusal + relax(AllowControlPlaneNodesAnnotation)
		}
		return ""
	},
	variables: []celVariable{
		{"jobManagerPlacement", "has(object.spec.jobManagerConfig) ? object.spec.jobManagerConfig : {}"},
		{"taskManagerPlacement", "has(object.spec.taskManagerConfig) ? object.spec.taskManagerConfig : {}"},
		{"controlPlaneField", controlPlaneCEL("variables.jobManagerPlacement", "spec.jobManagerConfig") + " :\n" +
			controlPlaneCEL("variables.taskManagerPlacement", "spec.taskManagerConfig") + " : ''"},
	},
	expression:        "variables.allowControlPlaneNodes || variables.controlPlaneField == ''",
	messageExpression: "variables.controlPlaneField + " + cel(": "+controlPlaneRefusal+relax(AllowControlPlaneNodesAnnotation)),
	message:           "spec: " + controlPlaneRefusal + relax(AllowControlPlaneNodesAnnotation),
}, secretReferencesRule}

const (
	rootRefusal         = "pods may not run as root (runAsUser 0, runAsGroup 0 or runAsNonRoot false)"
	controlPlaneRefusal = "pods may not be placed on control-plane nodes (a toleration of their taint together with a node selector or node affinity for their label " +
		"node-role.kubernetes.io/control-plane or node-role.kubernetes.io/master)"
)

// volumeTypes are the JSON names of the sources a volume sets (one, in a valid volume), sorted.
func volumeTypes(src corev1.VolumeSource) []string {
	var out []string
	v, t := reflect.ValueOf(src), reflect.TypeOf(src)
	for i := range t.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			out = append(out, strings.Split(t.Field(i).Tag.Get("json"), ",")[0])
		}
	}
	sort.Strings(out)
	return out
}

func hostProcess(w *corev1.WindowsSecurityContextOptions) bool {
	return w != nil && w.HostProcess != nil && *w.HostProcess
}

// seLinuxProblem is the first SELinux option PSS baseline refuses, and why.
func seLinuxProblem(o *corev1.SELinuxOptions) (field, what string) {
	switch {
	case o == nil:
	case o.Type != "" && !slices.Contains(seLinuxTypes, o.Type):
		return "type", fmt.Sprintf("SELinux type %s is not allowed (allowed: %s)", o.Type, strings.Join(seLinuxTypes, ", "))
	case o.User != "":
		return "user", "setting the SELinux user is not allowed"
	case o.Role != "":
		return "role", "setting the SELinux role is not allowed"
	}
	return "", ""
}

func unconfinedSeccomp(p *corev1.SeccompProfile) bool {
	return p != nil && p.Type == corev1.SeccompProfileTypeUnconfined
}

func appArmorAllowed(p *corev1.AppArmorProfile) bool {
	return p == nil || p.Type == "" || slices.Contains(appArmorTypes, string(p.Type))
}

// toleratesControlPlane: a toleration of the control-plane taints, or of every taint.
func toleratesControlPlane(t corev1.Toleration) bool {
	return slices.Contains(controlPlaneLabels, t.Key) || t.Key == "" && t.Operator == corev1.TolerationOpExists
}

// affinityForControlPlane: a node affinity term, required or preferred, for a control-plane label.
func affinityForControlPlane(a *corev1.Affinity) bool {
	if a == nil || a.NodeAffinity == nil {
		return false
	}
	matches := func(exprs []corev1.NodeSelectorRequirement) bool {
		return slices.ContainsFunc(exprs, func(e corev1.NodeSelectorRequirement) bool {
			return slices.Contains(controlPlaneLabels, e.Key) && (e.Operator == corev1.NodeSelectorOpIn || e.Operator == corev1.NodeSelectorOpExists)
		})
	}
	if r := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
		for _, term := range r.NodeSelectorTerms {
			if matches(term.MatchExpressions) {
				return true
			}
		}
	}
	for _, p := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if matches(p.Preference.MatchExpressions) {
			return true
		}
	}
	return false
}

// controlPlaneCEL is the CEL of affinityForControlPlane and toleratesControlPlane for one
// component c, as the first branches of a conditional that names the refused field.
func controlPlaneCEL(c, path string) string {
	labels := celList(controlPlaneLabels)
	tolerates := fmt.Sprintf(`has(%[1]s.tolerations) && %[1]s.tolerations.exists(t, has(t.key) && t.key in %[2]s ||
(!has(t.key) || t.key == '') && has(t.operator) && t.operator == 'Exists')`, c, labels)
	selects := fmt.Sprintf("has(%[1]s.nodeSelector) && %[1]s.nodeSelector.exists(k, k in %[2]s)", c, labels)
	match := fmt.Sprintf("has(x.matchExpressions) && x.matchExpressions.exists(e, e.key in %s && e.operator in ['In', 'Exists'])", labels)
	na := c + ".affinity.nodeAffinity"
	affinity := fmt.Sprintf(`has(%[1]s.affinity) && has(%[2]s) && (
has(%[2]s.requiredDuringSchedulingIgnoredDuringExecution) && has(%[2]s.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms) &&
%[2]s.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.exists(x, %[3]s) ||
has(%[2]s.preferredDuringSchedulingIgnoredDuringExecution) &&
%[2]s.preferredDuringSchedulingIgnoredDuringExecution.exists(p, has(p.preference) && [p.preference].exists(x, %[3]s)))`, c, na, match)
	return fmt.Sprintf("(%s) && (%s) ? '%s.nodeSelector' :\n(%s) && (%s) ? '%s.affinity.nodeAffinity'",
		tolerates, selects, path, tolerates, affinity, path)
}

// eachContainer applies a container check to every container of a pod, naming the container.
func eachContainer(check func(c *corev1.Container) string) func(s *corev1.PodSpec) string {
	return func(s *corev1.PodSpec) string {
		for _, list := range []struct {
			name       string
			containers []corev1.Container
		}{{"containers", s.Containers}, {"initContainers", s.InitContainers}} {
			for i := range list.containers {
				if field := check(&list.containers[i]); field != "" {
					return fmt.Sprintf("spec.%s[%d].%s", list.name, i, field)
				}
			}
		}
		for i := range s.EphemeralContainers {
			c := corev1.Container(s.EphemeralContainers[i].EphemeralContainerCommon)
			if field := check(&c); field != "" {
				return fmt.Sprintf("spec.ephemeralContainers[%d].%s", i, field)
			}
		}
		return ""
	}
}

// cel is s as a CEL string literal.
func cel(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// celList is a CEL list literal of strings.
func celList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = cel(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}
