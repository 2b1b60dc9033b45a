package flink

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The pods the rules judge. A rule on pods (podRule.pod, podRule.podOK) judges, in both layers, the
// spec's own fields that are a pod's read as one pod at the same paths (specPod), then each of the
// spec's pod templates at its path; the operator then judges the pods it renders from all of them.
// In CEL the list is the variable pods: maps of the pod's 'path' (the prefix of its fields in the
// object, "" for the spec's own), 'spec', 'annotations' and 'containers' (podVariables).

// specPod is the owner's fields that are a pod's, at the same paths as in a pod: spec.volumes,
// spec.securityContext, spec.serviceAccountName and metadata.annotations (which the pods carry).
func specPod(o *ClusterOwner) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Annotations: o.Annotations},
		Spec:       corev1.PodSpec{Volumes: o.Spec.Volumes, SecurityContext: o.Spec.SecurityContext, ServiceAccountName: o.Spec.ServiceAccountName},
	}
}

// judgedPods are the pods of the spec the rules judge, in the order both layers judge them.
func judgedPods(o *ClusterOwner) []podTemplateAt {
	return append([]podTemplateAt{{template: specPod(o)}}, podTemplates(o)...)
}

// templateSites are the spec's pod templates in CEL: their path and the variable of their spec.
var templateSites = []struct{ path, variable string }{
	{"spec.podTemplate", "clusterPodSpec"},
	{"spec.jobManagerConfig.podTemplate", "jobManagerPodSpec"},
	{"spec.taskManagerConfig.podTemplate", "taskManagerPodSpec"},
}

// podVariables are the CEL variables of the pods: each template's spec ({} when absent), then pods.
// A pod's 'containers' are those of its containers, initContainers and ephemeralContainers, in
// eachContainer's order, each as {'field': its path in the pod, 'c': the container}, so that a rule
// walks one list.
func podVariables() []celVariable {
	var out []celVariable
	// dyn(): the values of a CEL map (or list) literal must have one type, and a field of object is dyn.
	pods := []string{"[{'path': dyn(''), 'spec': object.spec, 'annotations': variables.objectAnnotations, 'containers': dyn([])}]"}
	for _, s := range templateSites {
		t, spec := "object."+s.path, "variables."+s.variable
		out = append(out, celVariable{s.variable, fmt.Sprintf("%s ? %s.spec : {}", hasAll(t+".spec"), t)})
		var containers []string
		for _, l := range containerLists {
			list := spec + "." + l
			containers = append(containers, fmt.Sprintf("(%s ? %s.map(c, {'field': dyn('spec.%s[' + string(%s.indexOf(c)) + '].'), 'c': c}) : [])",
				present(list), list, l, list))
		}
		pods = append(pods, fmt.Sprintf("(%s ? [{'path': dyn('%s.'), 'spec': %s,\n'annotations': %s ? %s.metadata.annotations : {},\n'containers': dyn(\n%s)}] : [])",
			hasAll(t), s.path, spec, hasAll(t+".metadata.annotations"), t, strings.Join(containers, " +\n")))
	}
	return append(out, celVariable{"pods", strings.Join(pods, " +\n")})
}

// hasAll tests in CEL that each field of a selection below object.spec is present: present(object.spec.a) &&
// present(object.spec.a.b) for object.spec.a.b.
func hasAll(selection string) string {
	parts := strings.Split(strings.TrimPrefix(selection, "object.spec."), ".")
	var tests []string
	for i := range parts {
		tests = append(tests, present("object.spec."+strings.Join(parts[:i+1], ".")))
	}
	return strings.Join(tests, " && ")
}

// present is CEL that is true when the field selection sel is there and not null. A pod template has
// no schema, so the API server keeps the nulls a client writes in it (a Go client writes
// "containers": null for a template without containers); the rules read them as absent, as the
// operator's decoding does.
func present(sel string) string { return "has(" + sel + ") && " + sel + " != null" }

// podValidation is the validation of a rule's pod form: every pod passes, or the first that does not
// is refused, its path before the field the rule names.
func (r podRule) podValidation() celValidation {
	message := r.podMessage
	if message == "" {
		message = r.message
	}
	ok := r.podOK("t")
	return celValidation{
		expression:        "variables.pods.all(t,\n" + ok + ")",
		messageExpression: "variables.pods.filter(t, !(\n" + ok + ")).map(t, t.path + (\n" + r.podRefusal("t") + "))[0]",
		message:           message,
	}
}

// containerLists are the lists of a pod spec that hold containers, in eachContainer's order.
var containerLists = []string{"containers", "initContainers", "ephemeralContainers"}

// eachContainer applies a container check to every container of a pod: the first refusal, as
// "spec.<list>[i]." and what the check returns, or "".
func eachContainer(s *corev1.PodSpec, check func(c *corev1.Container) string) string {
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"containers", s.Containers}, {"initContainers", s.InitContainers}} {
		for i := range list.containers {
			if what := check(&list.containers[i]); what != "" {
				return fmt.Sprintf("spec.%s[%d].%s", list.name, i, what)
			}
		}
	}
	for i := range s.EphemeralContainers {
		c := corev1.Container(s.EphemeralContainers[i].EphemeralContainerCommon)
		if what := check(&c); what != "" {
			return fmt.Sprintf("spec.ephemeralContainers[%d].%s", i, what)
		}
	}
	return ""
}

// containersOK is eachContainer's pass in CEL: no container of pod t is bad (CEL over c).
func containersOK(t, bad string) string {
	return "!" + t + ".containers.exists(x, [x.c].exists(c, " + bad + "))"
}

// containersRefusal is eachContainer's refusal in CEL: for the first bad container of pod t, its
// path in the pod and what (CEL over c); otherwise (CEL) when none is bad.
func containersRefusal(t, bad, what, otherwise string) string {
	test := "[x.c].exists(c, " + bad + ")"
	return fmt.Sprintf("(%[1]s.containers.exists(x, %[2]s) ?\n%[1]s.containers.filter(x, %[2]s).map(x, x.field + [x.c].map(c, %[3]s)[0])[0] :\n%[4]s)",
		t, test, what, otherwise)
}

// anyOf is CEL that is true when list (a field selection) is there and test (CEL over v) holds of
// one of its items; firstOf is the first such item, and indexOf its index as a string.
func anyOf(list, v, test string) string {
	return fmt.Sprintf("(%s && %s.exists(%s, %s))", present(list), list, v, test)
}

func firstOf(list, v, test string) string { return fmt.Sprintf("%s.filter(%s, %s)[0]", list, v, test) }
func indexOf(list, v, test string) string {
	return fmt.Sprintf("string(%s.indexOf(%s))", list, firstOf(list, v, test))
}

// presentPath is CEL that is true when every field of the dotted selection below x is there and
// not null: present(x.a) && present(x.a.b) for "a.b".
func presentPath(x, field string) string {
	parts := strings.Split(field, ".")
	tests := make([]string, len(parts))
	for i := range parts {
		tests[i] = present(x + "." + strings.Join(parts[:i+1], "."))
	}
	return strings.Join(tests, " && ")
}

// securityField is CEL that is true when the securityContext of x (a pod's spec, or a container)
// has field (names below securityContext, dotted) and test (CEL over the field's value) holds.
func securityField(x, field string, test func(f string) string) string {
	parts := strings.Split(field, ".")
	tests := []string{present(x + ".securityContext")}
	for i := range parts {
		tests = append(tests, present(x+".securityContext."+strings.Join(parts[:i+1], ".")))
	}
	return "(" + strings.Join(tests, " && ") + " && " + test(x+".securityContext."+field) + ")"
}

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

// The CEL of the rules' predicates, each over a pod's spec or a container x.
var (
	privilegedCEL   = securityField("c", "privileged", func(f string) string { return f + " == true" })
	capabilityCEL   = securityField("c", "capabilities.add", func(f string) string { return f + ".exists(a, !(a in " + celList(baselineCapabilities) + "))" })
	hostPortCEL     = present("p.hostPort") + " && p.hostPort != 0"
	procMountCEL    = securityField("c", "procMount", func(f string) string { return f + " != 'Default'" })
	unsafeSysctlCEL = "!(s.name in " + celList(safeSysctls) + ")"
)

func hostProcessCEL(x string) string {
	return securityField(x, "windowsOptions.hostProcess", func(f string) string { return f + " == true" })
}

func seccompCEL(x string) string {
	return securityField(x, "seccompProfile.type", func(f string) string { return f + " == 'Unconfined'" })
}

func appArmorCEL(x string) string {
	return securityField(x, "appArmorProfile.type", func(f string) string {
		return "!(" + f + " in " + celList(append([]string{""}, appArmorTypes...)) + ")"
	})
}

func appArmorWhatCEL(x string) string {
	return "'securityContext.appArmorProfile.type: AppArmor profile ' + " + x + ".securityContext.appArmorProfile.type + " +
		cel(" is not allowed (allowed: "+strings.Join(appArmorTypes, ", ")+")")
}

func unconfinedAnnotationsCEL(t string) string {
	return fmt.Sprintf("%[1]s.annotations.filter(k, k.startsWith('%[2]s') &&\n%[1]s.annotations[k] != 'runtime/default' && !%[1]s.annotations[k].startsWith('localhost/'))",
		t, appArmorAnnotationPrefix)
}

func hostNamespaceCEL(t string) string {
	var out []string
	for _, f := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		out = append(out, fmt.Sprintf("has(%[1]s.spec.%[2]s) && %[1]s.spec.%[2]s == true ? '%[2]s'", t, f))
	}
	return "(" + strings.Join(out, " : ") + " : '')"
}

// seLinuxFieldCEL is seLinuxProblem's field in CEL, for x's securityContext.
func seLinuxFieldCEL(x string) string {
	o := x + ".securityContext.seLinuxOptions"
	return fmt.Sprintf(`(%[4]s && %[5]s ? (
%[6]s && %[2]s.type != '' && !(%[2]s.type in %[3]s) ? 'type' :
%[7]s && %[2]s.user != '' ? 'user' :
%[8]s && %[2]s.role != '' ? 'role' : '') : '')`, x, o, celList(seLinuxTypes), present(x+".securityContext"), present(o),
		present(o+".type"), present(o+".user"), present(o+".role"))
}

// seLinuxWhatCEL is seLinuxProblem's refusal in CEL, for x's securityContext and its field f
// (seLinuxFieldCEL, bound to a variable).
func seLinuxWhatCEL(x, f string) string {
	return "'securityContext.seLinuxOptions.' + " + f + " + ': ' + (" + f + " == 'type' ?\n'SELinux type ' + " + x +
		".securityContext.seLinuxOptions.type + " + cel(" is not allowed (allowed: "+strings.Join(seLinuxTypes, ", ")+")") + " :\n'setting the SELinux ' + " +
		f + " + ' is not allowed')"
}

// rootFieldCEL is rootField in CEL, for x's securityContext.
func rootFieldCEL(x string) string {
	s := x + ".securityContext"
	return fmt.Sprintf(`(%[2]s ? (has(%[1]s.runAsUser) && %[1]s.runAsUser == 0 ? 'runAsUser' :
has(%[1]s.runAsGroup) && %[1]s.runAsGroup == 0 ? 'runAsGroup' :
has(%[1]s.runAsNonRoot) && %[1]s.runAsNonRoot == false ? 'runAsNonRoot' : '') : '')`, s, present(s))
}

// serviceAccountFieldCEL names the first of pod t's service account fields the namespace does not allow, or ”.
func serviceAccountFieldCEL(t string) string {
	var out []string
	for _, f := range []string{"serviceAccountName", "serviceAccount"} {
		out = append(out, fmt.Sprintf("%[3]s && %[1]s.spec.%[2]s != '' && !(%[1]s.spec.%[2]s in variables.serviceAccounts) ? '%[2]s'", t, f, present(t+".spec."+f)))
	}
	return "(" + strings.Join(out, " :\n") + " : '')"
}

// disallowedVolume is CEL true of a volume v of a type the namespace does not allow (hostPath has a
// rule of its own).
func disallowedVolume(v string) string {
	return v + ".exists(k, k != 'name' && k != 'hostPath' && !(k in variables.volumeTypes))"
}
