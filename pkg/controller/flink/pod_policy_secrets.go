package flink

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	corev1 "k8s.io/api/core/v1"
)

// The Secret references rule. The pods of a FlinkApplication or a FlinkSessionCluster read every
// Secret its spec names in envFrom, env valueFrom, secret volumes and projected volumes' secret
// sources, and so does whoever writes the job they run: without this rule the right to create the
// object would be the right to read every Secret of the namespace. imagePullSecrets are not in it:
// the kubelet reads them, the job does not.
//
// The admission policy admits a reference only when the user who writes the object may get that
// Secret in its namespace (authorizer.check, which only a ValidatingAdmissionPolicy can ask), or
// when the Namespace allows Secret references. The operator cannot know who wrote a stored object:
// it admits a reference only where the namespace allows it or PodPolicy.AdmissionPolicyEnforced
// says the admission policy checked it. The operator walks the spec in Go (secretReferences), the
// policy in CEL (secretSites), in the same order; pod_policy_layers_test.go holds both to the same
// first refused field.

// maxCheckedSecrets is how many different Secrets the admission policy asks the authorizer about
// one by one, for a user who may not get every Secret of the namespace. An authorization check costs
// 350000 of the 1000000 one CEL expression may spend and of the 10000000 one policy may spend at
// admission (celconfig.PerCallLimit, RuntimeCELCostBudget): each name is its own variable, and nine
// checks leave most of the budget to the other rules.
const maxCheckedSecrets = 8

// secretFieldsExemptFromCheck are the spec fields an update may change without the user being asked
// about the Secrets again: what the kubectl flink verbs set, which run the same job with the same
// Secrets (a restart, a savepoint, suspend and resume, a rollback, a BlueGreen teardown). The
// operator's own writes of metadata (finalizers) change no spec field.
var secretFieldsExemptFromCheck = []string{"restartNonce", "savepointTriggerNonce", "state", "forceRollback", "tearDownVersionHash"}

// secretReference is one Secret the pods would read, and the field of the spec that names it.
type secretReference struct{ field, name string }

// secretReferences are the Secrets the pods of the owner's cluster would read, in the order of
// secretSites: each environment's envFrom, then its env, the JobManager's before the TaskManagers',
// then the volumes; then those of each pod template (podSecretReferences).
func secretReferences(o *ClusterOwner) []secretReference {
	var out []secretReference
	add := func(field, name string) {
		if name != "" {
			out = append(out, secretReference{field, name})
		}
	}
	for _, c := range []struct {
		path string
		env  v1beta1.EnvironmentConfig
	}{
		{"spec.jobManagerConfig.envConfig", o.Spec.JobManagerConfig.EnvConfig},
		{"spec.taskManagerConfig.envConfig", o.TaskManagerConfig.EnvConfig},
	} {
		for i, e := range c.env.EnvFrom {
			if e.SecretRef != nil {
				add(fmt.Sprintf("%s.envFrom[%d].secretRef.name", c.path, i), e.SecretRef.Name)
			}
		}
		for i, e := range c.env.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				add(fmt.Sprintf("%s.env[%d].valueFrom.secretKeyRef.name", c.path, i), e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	out = append(out, volumeSecretReferences("spec.volumes", o.Spec.Volumes)...)
	for _, t := range podTemplates(o) {
		out = append(out, podSecretReferences(t.path+".", &t.template.Spec)...)
	}
	return out
}

// podSecretReferences are the Secrets a pod reads, its fields prefixed with prefix: each
// container's (of containers, then initContainers) envFrom, then its env; then the volumes.
func podSecretReferences(prefix string, s *corev1.PodSpec) []secretReference {
	var out []secretReference
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"containers", s.Containers}, {"initContainers", s.InitContainers}} {
		for i, c := range list.containers {
			field := fmt.Sprintf("%sspec.%s[%d]", prefix, list.name, i)
			for j, e := range c.EnvFrom {
				if e.SecretRef != nil && e.SecretRef.Name != "" {
					out = append(out, secretReference{fmt.Sprintf("%s.envFrom[%d].secretRef.name", field, j), e.SecretRef.Name})
				}
			}
			for j, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != "" {
					out = append(out, secretReference{fmt.Sprintf("%s.env[%d].valueFrom.secretKeyRef.name", field, j), e.ValueFrom.SecretKeyRef.Name})
				}
			}
		}
	}
	return append(out, volumeSecretReferences(prefix+"spec.volumes", s.Volumes)...)
}

// volumeSecretReferences are the Secrets volumes at path read: a secret volume's, its projected
// sources', then a csi volume's nodePublishSecretRef.
func volumeSecretReferences(path string, volumes []corev1.Volume) []secretReference {
	var out []secretReference
	for i, v := range volumes {
		if v.Secret != nil && v.Secret.SecretName != "" {
			out = append(out, secretReference{fmt.Sprintf("%s[%d].secret.secretName", path, i), v.Secret.SecretName})
		}
		if v.Projected != nil {
			for j, s := range v.Projected.Sources {
				if s.Secret != nil && s.Secret.Name != "" {
					out = append(out, secretReference{fmt.Sprintf("%s[%d].projected.sources[%d].secret.name", path, i, j), s.Secret.Name})
				}
			}
		}
		if v.CSI != nil && v.CSI.NodePublishSecretRef != nil && v.CSI.NodePublishSecretRef.Name != "" {
			// The driver opens with its credentials what it mounts (a secrets store, a bucket): the
			// pods read what the Secret opens.
			out = append(out, secretReference{fmt.Sprintf("%s[%d].csi.nodePublishSecretRef.name", path, i), v.CSI.NodePublishSecretRef.Name})
		}
	}
	return out
}

// secretSite is where secretReferences looks, in CEL: a list of the spec (list, [] when absent)
// and, for an element e of it that names a Secret (when), its references as CEL maps {name, field}.
// The variable secretReferences concatenates one group of references per such element, so that
// "the first reference that ..." needs no flattening (the CEL of Kubernetes 1.30 has none).
type secretSite struct{ list, when, refs string }

// string(): the values of a CEL map literal must have one type, and a field of object is dyn.
func secretRef(name, field string) string {
	return "{'name': string(" + name + "), 'field': " + field + "}"
}

func secretSites() []secretSite {
	var out []secretSite
	for _, c := range []struct{ env, path string }{
		{"variables.jobManagerEnv", "spec.jobManagerConfig.envConfig"},
		{"variables.taskManagerEnv", "spec.taskManagerConfig.envConfig"},
	} {
		field := func(list, suffix string) string {
			return cel(c.path+"."+list+"[") + " + string(" + c.env + "." + list + ".indexOf(e)) + " + cel("]"+suffix)
		}
		out = append(out,
			secretSite{fmt.Sprintf("has(%[1]s.envFrom) ? %[1]s.envFrom : []", c.env), secretEnvFromCEL("e"),
				"[" + secretRef("e.secretRef.name", field("envFrom", ".secretRef.name")) + "]"},
			secretSite{fmt.Sprintf("has(%[1]s.env) ? %[1]s.env : []", c.env), secretKeyRefCEL("e"),
				"[" + secretRef("e.valueFrom.secretKeyRef.name", field("env", ".valueFrom.secretKeyRef.name")) + "]"})
	}
	out = append(out, volumeSecretSite("object.spec.volumes", "spec.volumes"))
	for _, t := range templateSites {
		spec := "variables." + t.variable
		for _, list := range []string{"containers", "initContainers"} {
			out = append(out, containerSecretSite(spec+"."+list, t.path+".spec."+list))
		}
		out = append(out, volumeSecretSite(spec+".volumes", t.path+".spec.volumes"))
	}
	return out
}

func secretEnvFromCEL(f string) string {
	return present(f+".secretRef") + " && " + present(f+".secretRef.name") + " && " + f + ".secretRef.name != ''"
}

func secretKeyRefCEL(v string) string {
	return present(v+".valueFrom") + " && " + present(v+".valueFrom.secretKeyRef") + " && " + present(v+".valueFrom.secretKeyRef.name") +
		" && " + v + ".valueFrom.secretKeyRef.name != ''"
}

// containerSecretSite is the site of a list of containers (a field selection) at path: a container
// is a group of its own, its envFrom's references, then its env's.
func containerSecretSite(list, path string) secretSite {
	container := cel(path+"[") + " + string(" + list + ".indexOf(e)) + "
	envFrom := secretEnvFromCEL("f")
	env := secretKeyRefCEL("v")
	return secretSite{present(list) + " ? " + list + " : []",
		present("e.envFrom") + " && e.envFrom.exists(f, " + envFrom + ") ||\n" + present("e.env") + " && e.env.exists(v, " + env + ")",
		"(" + present("e.envFrom") + " ? e.envFrom.filter(f, " + envFrom + ").map(f,\n" +
			secretRef("f.secretRef.name", container+"'].envFrom[' + string(e.envFrom.indexOf(f)) + '].secretRef.name'") + ") : []) +\n" +
			"(" + present("e.env") + " ? e.env.filter(v, " + env + ").map(v,\n" +
			secretRef("v.valueFrom.secretKeyRef.name", container+"'].env[' + string(e.env.indexOf(v)) + '].valueFrom.secretKeyRef.name'") + ") : [])"}
}

// volumeSecretSite is the site of a list of volumes (a field selection) at path: a volume is a
// group of its own, a secret volume's reference, its projected sources', then a csi volume's
// nodePublishSecretRef.
func volumeSecretSite(list, path string) secretSite {
	volume := cel(path+"[") + " + string(" + list + ".indexOf(e)) + ']"
	secret := present("e.secret") + " && " + present("e.secret.secretName") + " && e.secret.secretName != ''"
	projected := present("e.projected") + " && " + present("e.projected.sources")
	source := present("s.secret") + " && " + present("s.secret.name") + " && s.secret.name != ''"
	csi := present("e.csi") + " && " + present("e.csi.nodePublishSecretRef") + " && " + present("e.csi.nodePublishSecretRef.name") +
		" && e.csi.nodePublishSecretRef.name != ''"
	return secretSite{present(list) + " ? " + list + " : []",
		secret + " ||\n" + projected + " && e.projected.sources.exists(s, " + source + ") ||\n" + csi,
		"(" + secret + " ? [" + secretRef("e.secret.secretName", volume+".secret.secretName'") + "] : []) +\n(" + projected +
			" ? e.projected.sources.filter(s, " + source + ").map(s,\n" +
			secretRef("s.secret.name", volume+".projected.sources[' + string(e.projected.sources.indexOf(s)) + '].secret.name'") + ") : []) +\n(" +
			csi + " ? [" + secretRef("e.csi.nodePublishSecretRef.name", volume+".csi.nodePublishSecretRef.name'") + "] : [])"}
}

// secretsCEL is the CEL of the variables the rule reads.
func secretsCEL() []celVariable {
	var groups []string
	for _, s := range secretSites() {
		groups = append(groups, fmt.Sprintf("(%s).filter(e, %s).map(e,\n%s)", s.list, s.when, s.refs))
	}
	env := func(c string) string {
		return fmt.Sprintf("has(object.spec.%[1]s) && has(object.spec.%[1]s.envConfig) ? object.spec.%[1]s.envConfig : {}", c)
	}
	authorizer := "authorizer.group('').resource('secrets').namespace(object.metadata.namespace)"
	vars := []celVariable{
		{"jobManagerEnv", env("jobManagerConfig")},
		{"taskManagerEnv", env("taskManagerConfig")},
		// One group of references per element of the spec that names a Secret, in the order of
		// secretReferences; no group is empty.
		{"secretReferences", strings.Join(groups, " +\n")},
		// On an update that changes only what secretFieldsExemptFromCheck lists, the Secrets are
		// not asked about again.
		{"specChanged", fmt.Sprintf(`request.operation != 'UPDATE' || !has(oldObject.spec) ||
object.spec.exists(k, !(k in %[1]s) && (!(k in oldObject.spec) || object.spec[k] != oldObject.spec[k])) ||
oldObject.spec.exists(k, !(k in %[1]s) && !(k in object.spec))`, celList(secretFieldsExemptFromCheck))},
		// A user who may get every Secret of the namespace costs one authorization check.
		{"checkSecrets", `!variables.allowSecretReferences && size(variables.secretReferences) > 0 && variables.specChanged &&
!` + authorizer + `.check('get').allowed()`},
	}
	// secretName<i>: the i-th Secret named, in the order of the references, each once; '' past the last.
	var before []string
	for i := 0; i <= maxCheckedSecrets; i++ {
		names := "variables.secretReferences.map(g, g[0].name)"
		if i > 0 {
			names = fmt.Sprintf("variables.secretReferences.map(g, g.map(r, r.name).filter(n, !(n in [%s]))).filter(l, size(l) > 0).map(l, l[0])",
				strings.Join(before, ", "))
		}
		vars = append(vars, celVariable{"secretName" + strconv.Itoa(i), "(" + names + " + [''])[0]"})
		before = append(before, "variables.secretName"+strconv.Itoa(i))
	}
	// secretAllowed<i>: one authorization check each (a variable is its own CEL program, with its
	// own cost limit), asked only until one is refused.
	denied := "!variables.checkSecrets ? -1 :\n"
	for i := range maxCheckedSecrets {
		n := strconv.Itoa(i)
		vars = append(vars, celVariable{"secretAllowed" + n,
			"variables.secretName" + n + " == '' ||\n" + authorizer + ".name(variables.secretName" + n + ").check('get').allowed()"})
		denied += "!variables.secretAllowed" + n + " ? " + n + " :\n"
	}
	return append(vars, celVariable{"deniedSecret", denied + "-1"})
}

// unverifiedSecretRefusal is the operator's refusal of the first of refs, unless the namespace
// allows Secret references or the admission policy has asked about them.
func unverifiedSecretRefusal(refs []secretReference, p PodPolicy) string {
	if p.AllowSecretReferences || p.AdmissionPolicyEnforced || len(refs) == 0 {
		return ""
	}
	return secretRefusal(refs[0].field, refs[0].name) + unverifiedSecret + relax(AllowSecretReferencesAnnotation)
}

// secretRefusal is the start of a refusal of the reference, the same in both layers; each adds why.
func secretRefusal(field, name string) string {
	return field + ": the pods would read Secret " + name + ", which only a user who may get it may reference"
}

// unverifiedSecret is why the operator refuses a reference the namespace does not allow.
const unverifiedSecret = "; the operator cannot tell who wrote this object, and its configuration does not say that the admission policy " +
	"flinkfsm-pod-security, which asks, enforces (admissionPolicyEnforced)"

// secretValidations are the admission policy's validations of the rule: one per Secret it asks
// about, so that each messageExpression, which cannot ask the authorizer, knows which Secret was
// refused; only the first refused one refuses. Then the bound on how many it asks about.
func secretValidations() []celValidation {
	var out []celValidation
	for i := range maxCheckedSecrets {
		name := "variables.secretName" + strconv.Itoa(i)
		field := fmt.Sprintf("variables.secretReferences.filter(g, g.exists(r, r.name == %[1]s)).map(g, g.filter(r, r.name == %[1]s)[0].field)[0]", name)
		out = append(out, celValidation{
			note:       fmt.Sprintf("Secret %d of %d the authorizer is asked about", i+1, maxCheckedSecrets),
			expression: "variables.deniedSecret != " + strconv.Itoa(i),
			messageExpression: field + " +\n" + cel(": the pods would read Secret ") + " + " + name + " + " +
				cel(", which only a user who may get it may reference; ") + " +\n" +
				"(request.userInfo.username == '' ? 'the requesting user' : request.userInfo.username) + " + cel(" may not"+relax(AllowSecretReferencesAnnotation)),
			message: "spec: the pods would read a Secret that only a user who may get it may reference" + relax(AllowSecretReferencesAnnotation),
		})
	}
	return append(out, celValidation{
		note:       fmt.Sprintf("at most %d Secrets asked about one by one", maxCheckedSecrets),
		expression: fmt.Sprintf("!variables.checkSecrets || variables.secretName%d == ''", maxCheckedSecrets),
		message:    secretLimitRefusal,
	})
}

var secretLimitRefusal = fmt.Sprintf("spec: the pods would read more than %d different Secrets, and a user who may not get every Secret of the namespace "+
	"may reference at most %d", maxCheckedSecrets, maxCheckedSecrets) + relax(AllowSecretReferencesAnnotation)

var secretReferencesRule = func() podRule {
	v := secretValidations()
	return podRule{
		name: "Secret references", annotation: AllowSecretReferencesAnnotation, requester: true,
		check: func(o *ClusterOwner, p PodPolicy) string {
			return unverifiedSecretRefusal(secretReferences(o), p)
		},
		// On the pods the operator renders: check has judged the spec's.
		pod: func(t *corev1.PodTemplateSpec, p PodPolicy) string {
			return unverifiedSecretRefusal(podSecretReferences("", &t.Spec), p)
		},
		variables:  secretsCEL(),
		expression: v[0].expression, messageExpression: v[0].messageExpression, message: v[0].message,
		more: v[1:],
	}
}()
