package flink

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podRule is one rule of the pod policy in both layers that enforce it: the operator's check and the
// ValidatingAdmissionPolicy's CEL, which `go run ./hack/podpolicy` renders into deploy/policy.yaml.
// Both are written here, side by side, over the same data; pod_policy_layers_test.go holds every
// rule's two forms to the same verdict and the same message, case by case.
//
// Most rules are about one pod (pod, podOK, podRefusal). Both layers judge with them each pod of the
// spec (pod_policy_pods.go): its own fields that are a pod's (spec.volumes, spec.securityContext,
// spec.serviceAccountName, metadata.annotations) and each pod template, the refusal naming the field
// by its path in the object. The operator also judges each pod it renders, templates merged, with
// every rule's pod. What is not one pod's (a component's placement across its layers, the Secrets
// all of them name) is judged by check and its CEL (variables, expression, ...).
type podRule struct {
	// name is the rule as docs/security.md lists it.
	name string
	// control is the Pod Security Standards control the rule enforces at least; "" for rules
	// beyond PSS baseline.
	control string
	// annotation is the Namespace annotation that relaxes the rule; "" for baseline controls no
	// namespace may relax.
	annotation string

	// pod returns the refusal of the first field of pod t the rule refuses, named within the pod
	// ("spec.volumes[0]: ..."), or "".
	pod func(t *corev1.PodTemplateSpec, p PodPolicy) string
	// podOK and podRefusal are pod in CEL over a pod t of the variable pods: true when it passes,
	// and the refusal when it does not. Where they are nil, check covers the spec's pods and pod
	// judges only the pods the operator renders. podMessage is the fixed message should podRefusal
	// fail (message when empty), podNote the policy's comment on the validation.
	podOK, podRefusal   func(t string) string
	podMessage, podNote string

	// check returns the refusal of the first field of the owner the rule refuses, naming it, or "".
	check func(o *ClusterOwner, p PodPolicy) string
	// The CEL of check: variables (evaluated lazily, after the policy's own), the expression that is
	// true when the object passes, the message naming the field, and a fixed message should that fail.
	variables                              []celVariable
	expression, messageExpression, message string
	// more are further validations of check, for a refusal that one validation cannot name: a
	// messageExpression has no authorizer, so a rule that asks it names the field through one
	// validation per question (the Secret references rule).
	more []celValidation
	// requester is set on the rule whose admission verdict depends on who writes the object. The
	// operator cannot know that: it refuses what the admission policy would refuse a user with no
	// rights, with the same field but its own reason, unless PodPolicy.AdmissionPolicyEnforced.
	requester bool

	// crdFields are the fields the rule refuses that only a pod template can set: the CRDs have no
	// such field elsewhere, and the API server prunes one from a manifest.
	crdFields []string
}

type celVariable struct{ name, expression string }

// celValidation is one validation of deploy/policy.yaml; note tells a rule's further validations
// apart in the policy's comments.
type celValidation struct{ note, expression, messageExpression, message string }

// validations are the rule's validations in deploy/policy.yaml: check's expression and more, then
// the one of its pod form.
func (r podRule) validations() []celValidation {
	var out []celValidation
	if r.expression != "" {
		out = append(append(out, celValidation{"", r.expression, r.messageExpression, r.message}), r.more...)
	}
	if r.podOK != nil {
		v := r.podValidation()
		v.note = r.podNote
		out = append(out, v)
	}
	return out
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
)

const appArmorAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/"

// policyVariables are read by the rules: the object's annotations, and the pods (podVariables).
var policyVariables = append([]celVariable{
	{"objectAnnotations", "has(object.metadata.annotations) ? object.metadata.annotations : {}"},
}, podVariables()...)

var podRules = []podRule{{
	name: "hostPath volumes", control: "HostPath Volumes", annotation: AllowHostPathAnnotation,
	pod: func(t *corev1.PodTemplateSpec, p PodPolicy) string {
		for i, v := range t.Spec.Volumes {
			if v.HostPath != nil && !p.AllowHostPath {
				return fmt.Sprintf("spec.volumes[%d]: hostPath volume %s is not allowed", i, v.Name) + relax(AllowHostPathAnnotation)
			}
		}
		return ""
	},
	podOK: func(t string) string {
		return "variables.allowHostPath || !" + anyOf(t+".spec.volumes", "v", "has(v.hostPath)")
	},
	podRefusal: func(t string) string {
		vols := t + ".spec.volumes"
		return "'spec.volumes[' + " + indexOf(vols, "v", "has(v.hostPath)") + " + ']: hostPath volume ' + " + firstOf(vols, "v", "has(v.hostPath)") +
			".name + ' is not allowed' + " + cel(relax(AllowHostPathAnnotation))
	},
	message: "spec.volumes: hostPath volumes are not allowed" + relax(AllowHostPathAnnotation),
}, {
	name: "volume types", control: "Volume Types (restricted)", annotation: AllowedVolumeTypesAnnotation,
	pod: func(t *corev1.PodTemplateSpec, p PodPolicy) string {
		allowed := slices.Concat(baselineVolumeTypes, p.VolumeTypes)
		for i, v := range t.Spec.Volumes {
			for _, ty := range volumeTypes(v.VolumeSource) {
				if ty != "hostPath" && !slices.Contains(allowed, ty) && !slices.Contains(allowed, "*") {
					return fmt.Sprintf("spec.volumes[%d].%s: volume %s has type %s, which is not allowed (allowed: %s)",
						i, ty, v.Name, ty, strings.Join(allowed, ", ")) + relax(AllowedVolumeTypesAnnotation)
				}
			}
		}
		return ""
	},
	variables: []celVariable{{"volumeTypes", celList(baselineVolumeTypes) + " + variables.extraVolumeTypes"}},
	podOK: func(t string) string {
		return "'*' in variables.volumeTypes || !" + anyOf(t+".spec.volumes", "v", disallowedVolume("v"))
	},
	podRefusal: func(t string) string {
		vols := t + ".spec.volumes"
		first := firstOf(vols, "v", disallowedVolume("v"))
		ty := first + ".filter(k, k != 'name' && k != 'hostPath' && !(k in variables.volumeTypes)).min()"
		return "'spec.volumes[' + " + indexOf(vols, "v", disallowedVolume("v")) + " + '].' + " + ty + " +\n': volume ' + " + first + ".name + ' has type ' + " + ty +
			" +\n', which is not allowed (allowed: ' + variables.volumeTypes.join(', ') + ')' + " + cel(relax(AllowedVolumeTypesAnnotation))
	},
	message: "spec.volumes: a volume type is not allowed (allowed: " + strings.Join(baselineVolumeTypes, ", ") + ")" + relax(AllowedVolumeTypesAnnotation),
}, {
	name: "Windows HostProcess", control: "HostProcess", annotation: AllowHostProcessAnnotation,
	pod: func(t *corev1.PodTemplateSpec, p PodPolicy) string {
		if p.AllowHostProcess {
			return ""
		}
		const what = "securityContext.windowsOptions.hostProcess: Windows HostProcess pods are not allowed"
		if sc := t.Spec.SecurityContext; sc != nil && hostProcess(sc.WindowsOptions) {
			return "spec." + what + relax(AllowHostProcessAnnotation)
		}
		return orRelax(eachContainer(&t.Spec, func(c *corev1.Container) string {
			if c.SecurityContext != nil && hostProcess(c.SecurityContext.WindowsOptions) {
				return what
			}
			return ""
		}), AllowHostProcessAnnotation)
	},
	podOK: func(t string) string {
		return "variables.allowHostProcess || !" + hostProcessCEL(t+".spec") + " &&\n" + containersOK(t, hostProcessCEL("c"))
	},
	podRefusal: func(t string) string {
		return "(" + hostProcessCEL(t+".spec") + " ? 'spec.' : " + containersRefusal(t, hostProcessCEL("c"), "''", "''") +
			") + 'securityContext.windowsOptions.hostProcess: Windows HostProcess pods are not allowed' + " + cel(relax(AllowHostProcessAnnotation))
	},
	message: "spec.securityContext.windowsOptions.hostProcess: Windows HostProcess pods are not allowed" + relax(AllowHostProcessAnnotation),
}, {
	name: "host namespaces", control: "Host Namespaces",
	pod: func(t *corev1.PodTemplateSpec, _ PodPolicy) string {
		for _, f := range []struct {
			name string
			on   bool
		}{{"hostNetwork", t.Spec.HostNetwork}, {"hostPID", t.Spec.HostPID}, {"hostIPC", t.Spec.HostIPC}} {
			if f.on {
				return "spec." + f.name + ": " + hostNamespacesRefusal
			}
		}
		return ""
	},
	podOK: func(t string) string { return hostNamespaceCEL(t) + " == ''" },
	podRefusal: func(t string) string {
		return "'spec.' + " + hostNamespaceCEL(t) + " + " + cel(": "+hostNamespacesRefusal)
	},
	message:   "spec: " + hostNamespacesRefusal,
	crdFields: []string{"hostNetwork", "hostPID", "hostIPC"},
}, {
	name: "privileged containers", control: "Privileged Containers",
	pod: func(t *corev1.PodTemplateSpec, _ PodPolicy) string {
		return eachContainer(&t.Spec, func(c *corev1.Container) string {
			if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
				return "securityContext.privileged: " + privilegedRefusal
			}
			return ""
		})
	},
	podOK: func(t string) string { return containersOK(t, privilegedCEL) },
	podRefusal: func(t string) string {
		return containersRefusal(t, privilegedCEL, cel("securityContext.privileged: "+privilegedRefusal), "''")
	},
	message:   "spec: " + privilegedRefusal,
	crdFields: []string{"privileged"},
}, {
	name: "capabilities", control: "Capabilities",
	pod: func(t *corev1.PodTemplateSpec, _ PodPolicy) string {
		return eachContainer(&t.Spec, func(c *corev1.Container) string {
			if sc := c.SecurityContext; sc != nil && sc.Capabilities != nil {
				for i, add := range sc.Capabilities.Add {
					if !slices.Contains(baselineCapabilities, string(add)) {
						return fmt.Sprintf("securityContext.capabilities.add[%d]: capability %s %s", i, add, capabilityRefusal)
					}
				}
			}
			return ""
		})
	},
	podOK: func(t string) string { return containersOK(t, capabilityCEL) },
	podRefusal: func(t string) string {
		add, bad := "c.securityContext.capabilities.add", "!(a in "+celList(baselineCapabilities)+")"
		return containersRefusal(t, capabilityCEL, "'securityContext.capabilities.add[' + "+indexOf(add, "a", bad)+" + ']: capability ' + "+
			firstOf(add, "a", bad)+" + "+cel(" "+capabilityRefusal), "''")
	},
	message:   "spec: a capability " + capabilityRefusal,
	crdFields: []string{"capabilities"},
}, {
	name: "host ports", control: "HostPorts",
	pod: func(t *corev1.PodTemplateSpec, _ PodPolicy) string {
		return eachContainer(&t.Spec, func(c *corev1.Container) string {
			for i, port := range c.Ports {
				if port.HostPort != 0 {
					return fmt.Sprintf("ports[%d].hostPort: %s", i, hostPortRefusal)
				}
			}
			return ""
		})
	},
	podOK: func(t string) string { return containersOK(t, anyOf("c.ports", "p", hostPortCEL)) },
	podRefusal: func(t string) string {
		return containersRefusal(t, anyOf("c.ports", "p", hostPortCEL), "'ports[' + "+indexOf("c.ports", "p", hostPortCEL)+" + "+cel("].hostPort: "+hostPortRefusal), "''")
	},
	message:   "spec: " + hostPortRefusal,
	crdFields: []string{"hostPort"},
}, {
	// The kubelet runs probes and lifecycle hooks from the node: a host there is reached with the
	// node's network and identity, not the pod's (Pod Security Standards baseline as of 1.34).
	name: "probe and lifecycle hosts", control: "Host Probes / Lifecycle Hooks",
	pod: func(t *corev1.PodTemplateSpec, _ PodPolicy) string {
		return eachContainer(&t.Spec, func(c *corev1.Container) string {
			if field := handlerHostField(c); field != "" {
				return field + ": " + handlerHostRefusal
			}
			return ""
		})
	},
	podOK: func(t string) string { return containersOK(t, handlerHostFieldCEL("c")+" != ''") },
	podRefusal: func(t string) string {
		return containersRefusal(t, handlerHostFieldCEL("c")+" != ''", handlerHostFieldCEL("c")+" + "+cel(": "+handlerHostRefusal), "''")
	},
	message:   "spec: " + handlerHostRefusal,
	crdFields: []string{"livenessProbe", "readinessProbe", "startupProbe", "lifecycle"},
}, {
	name: "SELinux", control: "SELinux", annotation: AllowSELinuxOptionsAnnotation,
	pod: func(t *corev1.PodTemplateSpec, p PodPolicy) string {
		if p.AllowSELinuxOptions {
			return ""
		}
		if sc := t.Spec.SecurityContext; sc != nil {
			if field, what := seLinuxProblem(sc.SELinuxOptions); field != "" {
				return "spec.securityContext.seLinuxOptions." + field + ": " + what + relax(AllowSELinuxOptionsAnnotation)
			}
		}
		return orRelax(eachContainer(&t.Spec, func(c *corev1.Container) string {
			if c.SecurityContext != nil {
				if field, what := seLinuxProblem(c.SecurityContext.SELinuxOptions); field != "" {
					return "securityContext.seLinuxOptions." + field + ": " + what
				}
			}
			return ""
		}), AllowSELinuxOptionsAnnotation)
	},
	podOK: func(t string) string {
		return "variables.allowSELinuxOptions || " + seLinuxFieldCEL(t+".spec") + " == '' &&\n" + containersOK(t, seLinuxFieldCEL("c")+" != ''")
	},
	podRefusal: func(t string) string {
		return "[" + seLinuxFieldCEL(t+".spec") + "].map(f, f != '' ? 'spec.' + " + seLinuxWhatCEL(t+".spec", "f") + " :\n" +
			containersRefusal(t, seLinuxFieldCEL("c")+" != ''", "["+seLinuxFieldCEL("c")+"].map(g, "+seLinuxWhatCEL("c", "g")+")[0]", "''") +
			")[0] + " + cel(relax(AllowSELinuxOptionsAnnotation))
	},
	message: "spec.securityContext.seLinuxOptions: the SELinux options are not allowed" + relax(AllowSELinuxOptionsAnnotation),
}, {
	name: "/proc mount type", control: "/proc Mount Type",
	pod: func(t *corev1.PodTemplateSpec, _ PodPolicy) string {
		return eachContainer(&t.Spec, func(c *corev1.Container) string {
			if sc := c.SecurityContext; sc != nil && sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
				return fmt.Sprintf("securityContext.procMount: /proc mount type %s %s", *sc.ProcMount, procMountRefusal)
			}
			return ""
		})
	},
	podOK: func(t string) string { return containersOK(t, procMountCEL) },
	podRefusal: func(t string) string {
		return containersRefusal(t, procMountCEL, "'securityContext.procMount: /proc mount type ' + c.securityContext.procMount + "+cel(" "+procMountRefusal), "''")
	},
	message:   "spec: a /proc mount type " + procMountRefusal,
	crdFields: []string{"procMount"},
}, {
	name: "seccomp", control: "Seccomp", annotation: AllowUnconfinedSeccompAnnotation,
	pod: func(t *corev1.PodTemplateSpec, p PodPolicy) string {
		if p.AllowUnconfinedSeccomp {
			return ""
		}
		const what = "securityContext.seccompProfile.type: seccomp profile Unconfined is not allowed"
		if sc := t.Spec.SecurityContext; sc != nil && unconfinedSeccomp(sc.SeccompProfile) {
			return "spec." + what + relax(AllowUnconfinedSeccompAnnotation)
		}
		return orRelax(eachContainer(&t.Spec, func(c *corev1.Container) string {
			if c.SecurityContext != nil && unconfinedSeccomp(c.SecurityContext.SeccompProfile) {
				return what
			}
			return ""
		}), AllowUnconfinedSeccompAnnotation)
	},
	podOK: func(t string) string {
		return "variables.allowUnconfinedSeccomp || !" + seccompCEL(t+".spec") + " &&\n" + containersOK(t, seccompCEL("c"))
	},
	podRefusal: func(t string) string {
		return "(" + seccompCEL(t+".spec") + " ? 'spec.' : " + containersRefusal(t, seccompCEL("c"), "''", "''") +
			") + 'securityContext.seccompProfile.type: seccomp profile Unconfined is not allowed' + " + cel(relax(AllowUnconfinedSeccompAnnotation))
	},
	message: "spec.securityContext.seccompProfile.type: seccomp profile Unconfined is not allowed" + relax(AllowUnconfinedSeccompAnnotation),
}, {
	// The operator copies the application's annotations, and a template's, to its pods, so the
	// deprecated AppArmor annotations, which the kubelet still honours, are judged with the pod.
	name: "AppArmor", control: "AppArmor", annotation: AllowUnconfinedAppArmorAnnotation,
	pod: func(t *corev1.PodTemplateSpec, p PodPolicy) string {
		if p.AllowUnconfinedAppArmor {
			return ""
		}
		what := func(ap *corev1.AppArmorProfile) string {
			return fmt.Sprintf("securityContext.appArmorProfile.type: AppArmor profile %s is not allowed (allowed: %s)", ap.Type, strings.Join(appArmorTypes, ", "))
		}
		if sc := t.Spec.SecurityContext; sc != nil && !appArmorAllowed(sc.AppArmorProfile) {
			return "spec." + what(sc.AppArmorProfile) + relax(AllowUnconfinedAppArmorAnnotation)
		}
		if refusal := eachContainer(&t.Spec, func(c *corev1.Container) string {
			if c.SecurityContext != nil && !appArmorAllowed(c.SecurityContext.AppArmorProfile) {
				return what(c.SecurityContext.AppArmorProfile)
			}
			return ""
		}); refusal != "" {
			return refusal + relax(AllowUnconfinedAppArmorAnnotation)
		}
		keys := make([]string, 0, len(t.Annotations))
		for k := range t.Annotations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v := t.Annotations[k]; strings.HasPrefix(k, appArmorAnnotationPrefix) && v != "runtime/default" && !strings.HasPrefix(v, "localhost/") {
				return fmt.Sprintf("metadata.annotations[%s]: AppArmor profile %s is not allowed (allowed: runtime/default, localhost/<profile>)", k, v) +
					relax(AllowUnconfinedAppArmorAnnotation)
			}
		}
		return ""
	},
	podOK: func(t string) string {
		return "variables.allowUnconfinedAppArmor || !" + appArmorCEL(t+".spec") + " &&\n" + containersOK(t, appArmorCEL("c")) +
			" &&\nsize(" + unconfinedAnnotationsCEL(t) + ") == 0"
	},
	podRefusal: func(t string) string {
		key := unconfinedAnnotationsCEL(t) + ".min()"
		return "(" + appArmorCEL(t+".spec") + " ? 'spec.' + " + appArmorWhatCEL(t+".spec") + " :\n" +
			containersRefusal(t, appArmorCEL("c"), appArmorWhatCEL("c"),
				"'metadata.annotations[' + "+key+" + ']: AppArmor profile ' + "+t+".annotations["+key+"] +\n"+
					"' is not allowed (allowed: runtime/default, localhost/<profile>)'") + ") + " + cel(relax(AllowUnconfinedAppArmorAnnotation))
	},
	message: "spec.securityContext.appArmorProfile: AppArmor profile Unconfined is not allowed" + relax(AllowUnconfinedAppArmorAnnotation),
}, {
	name: "sysctls", control: "Sysctls", annotation: AllowRootAnnotation,
	pod: func(t *corev1.PodTemplateSpec, p PodPolicy) string {
		if sc := t.Spec.SecurityContext; sc != nil && !p.AllowRoot {
			for i, s := range sc.Sysctls {
				if !slices.Contains(safeSysctls, s.Name) {
					return fmt.Sprintf("spec.securityContext.sysctls[%d]: sysctl %s is not in the safe set (%s)", i, s.Name, strings.Join(safeSysctls, ", ")) +
						relax(AllowRootAnnotation)
				}
			}
		}
		return ""
	},
	podOK: func(t string) string {
		return "variables.allowRoot || !" + securityField(t+".spec", "sysctls", func(f string) string { return f + ".exists(s, " + unsafeSysctlCEL + ")" })
	},
	podRefusal: func(t string) string {
		list := t + ".spec.securityContext.sysctls"
		return "'spec.securityContext.sysctls[' + " + indexOf(list, "s", unsafeSysctlCEL) + " + ']: sysctl ' + " + firstOf(list, "s", unsafeSysctlCEL) +
			".name +\n" + cel(" is not in the safe set ("+strings.Join(safeSysctls, ", ")+")"+relax(AllowRootAnnotation))
	},
	message: "spec.securityContext.sysctls: a sysctl is not in the safe set (" + strings.Join(safeSysctls, ", ") + ")" + relax(AllowRootAnnotation),
}, {
	name: "running as root", control: "Running as Non-root (restricted)", annotation: AllowRootAnnotation,
	pod: func(t *corev1.PodTemplateSpec, p PodPolicy) string {
		if p.AllowRoot {
			return ""
		}
		if sc := t.Spec.SecurityContext; sc != nil {
			if field := rootField(sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot); field != "" {
				return "spec.securityContext." + field + ": " + rootRefusal + relax(AllowRootAnnotation)
			}
		}
		return orRelax(eachContainer(&t.Spec, func(c *corev1.Container) string {
			if sc := c.SecurityContext; sc != nil {
				if field := rootField(sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot); field != "" {
					return "securityContext." + field + ": " + rootRefusal
				}
			}
			return ""
		}), AllowRootAnnotation)
	},
	podOK: func(t string) string {
		return "variables.allowRoot || " + rootFieldCEL(t+".spec") + " == '' &&\n" + containersOK(t, rootFieldCEL("c")+" != ''")
	},
	podRefusal: func(t string) string {
		return "[" + rootFieldCEL(t+".spec") + "].map(f, f != '' ? 'spec.securityContext.' + f :\n" +
			containersRefusal(t, rootFieldCEL("c")+" != ''", "'securityContext.' + "+rootFieldCEL("c"), "''") + ")[0] + " + cel(": "+rootRefusal+relax(AllowRootAnnotation))
	},
	message: "spec.securityContext: " + rootRefusal + relax(AllowRootAnnotation),
}, {
	// serviceAccount is the deprecated name of serviceAccountName, which the API server still reads.
	name: "service accounts", annotation: AllowedServiceAccountsAnnotation,
	pod: func(t *corev1.PodTemplateSpec, p PodPolicy) string {
		for _, f := range []struct{ field, name string }{{"serviceAccountName", t.Spec.ServiceAccountName}, {"serviceAccount", t.Spec.DeprecatedServiceAccount}} {
			if f.name != "" && !slices.Contains(p.ServiceAccounts, f.name) && !slices.Contains(p.ServiceAccounts, "*") {
				return fmt.Sprintf("spec.%s: service account %s is not allowed in this namespace (allowed: %s); add it to the namespace's %s annotation",
					f.field, f.name, strings.Join(p.ServiceAccounts, ", "), AllowedServiceAccountsAnnotation)
			}
		}
		return ""
	},
	podOK: func(t string) string {
		return "'*' in variables.serviceAccounts || " + serviceAccountFieldCEL(t) + " == ''"
	},
	podRefusal: func(t string) string {
		field := serviceAccountFieldCEL(t)
		return "'spec.' + " + field + " + ': service account ' + " + t + ".spec[" + field + "] +\n' is not allowed in this namespace (allowed: ' + variables.serviceAccounts.join(', ') + " +
			cel("); add it to the namespace's "+AllowedServiceAccountsAnnotation+" annotation")
	},
	message: "spec.serviceAccountName: the service account is not allowed in this namespace; add it to the namespace's " +
		AllowedServiceAccountsAnnotation + " annotation",
}, controlPlaneRule, secretReferencesRule}

const (
	hostNamespacesRefusal = "pods may not share the node's network, process or IPC namespace"
	privilegedRefusal     = "privileged containers are not allowed"
	hostPortRefusal       = "host ports are not allowed"
	procMountRefusal      = "is not allowed (allowed: Default)"
	rootRefusal           = "pods may not run as root (runAsUser 0, runAsGroup 0 or runAsNonRoot false)"
)

var capabilityRefusal = "is not allowed (allowed: " + strings.Join(baselineCapabilities, ", ") + ")"

// orRelax is a refusal with how a namespace relaxes it, or "".
func orRelax(refusal, annotation string) string {
	if refusal == "" {
		return ""
	}
	return refusal + relax(annotation)
}

// rootField is the first of a security context's fields that runs as root, or "".
func rootField(user, group *int64, nonRoot *bool) string {
	switch {
	case user != nil && *user == 0:
		return "runAsUser"
	case group != nil && *group == 0:
		return "runAsGroup"
	case nonRoot != nil && !*nonRoot:
		return "runAsNonRoot"
	}
	return ""
}
