package convert

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// jarInImage is a jarURI a FlinkApplication takes: an absolute path of plain characters in the
// image (the CRD's rule on spec.jarURI).
var jarInImage = regexp.MustCompile(`^local:///[A-Za-z0-9._+-]+(/[A-Za-z0-9._+-]+)*[.]jar$`)

// application converts a FlinkDeployment in application mode (spec.job) to a FlinkApplication of
// the same name. It is deployed as the Apache operator deploys: one cluster at a time
// (deploymentMode Single), the job stopped before its cluster is replaced.
func application(meta metav1.ObjectMeta, spec *fields) ([]any, error) {
	job := spec.object("job")
	jarURI, _ := job.text("jarURI")
	if !jarInImage.MatchString(jarURI) || strings.Contains(jarURI, "/../") || strings.Contains(jarURI, "/./") {
		return nil, fmt.Errorf("FlinkDeployment %s: spec.job.jarURI %q: a FlinkApplication runs a jar from its image, "+
			"named local:///absolute/path.jar in letters, digits and . _ + -; build the jar into the image and name it so", meta.Name, jarURI)
	}
	p := clusterOf(spec)
	out := &v1beta1.FlinkApplication{TypeMeta: typeMeta(v1beta1.FlinkApplicationKind), ObjectMeta: meta}
	s := &out.Spec
	s.ClusterSpec = p.cluster
	s.JobManagerConfig = p.jobManager
	s.TaskManagerConfig = p.taskManager
	s.RestartNonce = p.restartNonce
	s.PeriodicSavepoint, s.SavepointRetention = p.settings.periodicSavepoint, p.settings.retention
	s.DeploymentMode = v1beta1.DeploymentModeSingle

	s.JarURI = jarURI
	s.Parallelism = parallelism(spec, job, &p)
	j := jobOf(job)
	s.EntryClass, s.ProgramArgsList, s.UpgradeMode, s.State = j.entryClass, j.args, j.upgradeMode, j.state
	s.SavepointTriggerNonce, s.CheckpointTriggerNonce, s.SavepointRedeployNonce = j.savepointTrigger, j.checkpointTrigger, j.redeploy
	s.SavepointPath, s.AllowNonRestoredState = j.initialSavepoint, j.allowNonRestoredState
	job.drop("autoscalerResetNonce", "flinkfsm's autoscaler starts over when spec.autoscaler changes (docs/autoscaler.md); there is no reset nonce")
	job.rest()

	s.Ingress = ingress(spec)
	return []any{out}, nil
}

// parallelism is the job's parallelism: spec.job.parallelism; without one, what the Apache operator
// would size the job to: taskManager.replicas × slots, or parallelism.default, or Flink's 1.
func parallelism(spec, job *fields, p *clusterParts) int32 {
	slots := int64(1)
	if p.taskManager.TaskSlots != nil {
		slots = int64(*p.taskManager.TaskSlots)
	}
	n, ok := job.integer("parallelism")
	switch {
	case ok && n > 0:
	case p.taskManagers != nil:
		n = int64(*p.taskManagers) * slots
		spec.out.warn(job.at("parallelism"), fmt.Sprintf("unset: written %d, taskManager.replicas × slots, which a FlinkApplication sizes its TaskManagers from", n))
	default:
		n = 1
		if v, set := p.cluster.FlinkConfig["parallelism.default"]; set {
			if d, err := strconv.ParseInt(fmt.Sprint(v), 10, 32); err == nil && d > 0 {
				n = d
			}
		}
		spec.out.warn(job.at("parallelism"), fmt.Sprintf("unset: written %d, the parallelism Flink would have given the job", n))
	}
	n = min(n, 32768)
	if p.taskManagers != nil && int64(*p.taskManagers) != (n+slots-1)/slots {
		spec.out.warn(spec.at("taskManager.replicas"), fmt.Sprintf("%d: a FlinkApplication runs the fewest TaskManagers whose slots fit its parallelism, %d here",
			*p.taskManagers, (n+slots-1)/slots))
	}
	return int32(n)
}

// hostTemplate is an Ingress template a FlinkApplication takes: a host with an optional plain path
// (the CRD's rule on spec.ingress.template).
var hostTemplate = regexp.MustCompile(`^([a-z0-9.-]|[{][{](name|namespace)[}][}])+(/(([A-Za-z0-9_~-]|[{][{](name|namespace)[}][}])+/?)*)?$`)

// ingress converts spec.ingress. The Apache operator's templates may be a path alone with a regular
// expression that an annotation rewrites (nginx's rewrite-target); flinkfsm's are a host with a plain
// path, so such an Ingress is left out, named.
func ingress(spec *fields) *v1beta1.IngressSpec {
	in := spec.object("ingress")
	if in == nil {
		return nil
	}
	template, _ := in.text("template")
	if !hostTemplate.MatchString(template) {
		in.drop("className", "the Ingress is left out")
		in.drop("annotations", "the Ingress is left out")
		in.drop("labels", "the Ingress is left out")
		in.drop("tls", "the Ingress is left out")
		in.out.warn(in.at("template"), fmt.Sprintf("%q: flinkfsm's UI Ingress is a host with a plain path ({{name}}.{{namespace}}.example.com/flink), "+
			"without regular expressions or rewrites; the Ingress is left out: set spec.ingress.template to such a host", template))
		in.rest()
		return nil
	}
	out := &v1beta1.IngressSpec{Template: template}
	if c, ok := in.text("className"); ok {
		out.ClassName = &c
	}
	out.Annotations = in.stringMap("annotations")
	out.Labels = in.stringMap("labels")
	if tls, ok := in.take("tls"); ok {
		items, _ := tls.([]any)
		for _, item := range items {
			m, _ := item.(map[string]any)
			t := v1beta1.IngressTLS{Hosts: asList(m["hosts"])}
			t.SecretName, _ = m["secretName"].(string)
			out.TLS = append(out.TLS, t)
		}
	}
	in.rest()
	return out
}

func asList(v any) []string {
	items, _ := v.([]any)
	var out []string
	for _, x := range items {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
