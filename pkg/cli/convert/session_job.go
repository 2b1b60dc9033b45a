package convert

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// sessionJob converts a FlinkSessionJob: its FlinkDeployment in session mode is the
// FlinkSessionCluster of the same name (deploymentName is clusterName).
func sessionJob(meta metav1.ObjectMeta, spec *fields) ([]any, error) {
	out := &v1beta1.FlinkSessionJob{TypeMeta: typeMeta(v1beta1.FlinkSessionJobKind), ObjectMeta: meta}
	out.Spec.ClusterName, _ = spec.text("deploymentName")
	config, settings := splitConfig(spec, spec.at("flinkConfiguration"), flatConfig(spec, "flinkConfiguration"))
	out.Spec.FlinkConfig = config
	restart := spec.nonce("restartNonce")
	if job := spec.object("job"); job != nil {
		out.Spec.Job = jobSpec(job)
	}
	if restart != "" {
		out.Spec.Job.RestartNonce = restart
	}
	out.Spec.Job.PeriodicSavepoint, out.Spec.Job.SavepointRetention = settings.periodicSavepoint, settings.retention
	return []any{out}, nil
}

// jarSchemes are the jar locations a FlinkSessionJob takes (the API's validation).
var jarSchemes = []string{"https://", "http://", "local://"}

// jobSpec converts an Apache job spec to a session job's.
func jobSpec(job *fields) v1beta1.JobSpec {
	var j v1beta1.JobSpec
	j.JarURI, _ = job.text("jarURI")
	if j.JarURI != "" && !slices.ContainsFunc(jarSchemes, func(scheme string) bool { return strings.HasPrefix(j.JarURI, scheme) }) {
		job.out.warn(job.at("jarURI"), fmt.Sprintf("%q: flinkfsm fetches a jar over https:// or http://, or takes it from the image (local://); "+
			"kubectl apply refuses it until it names one of those", j.JarURI))
	}
	if p, ok := job.integer("parallelism"); ok && p > 0 {
		n := int32(p)
		j.Parallelism = &n
	}
	a := jobOf(job)
	j.EntryClass, j.Args, j.UpgradeMode, j.State = a.entryClass, a.args, a.upgradeMode, a.state
	j.SavepointTriggerNonce, j.CheckpointTriggerNonce, j.SavepointRedeployNonce = a.savepointTrigger, a.checkpointTrigger, a.redeploy
	j.InitialSavepointPath, j.AllowNonRestoredState = a.initialSavepoint, a.allowNonRestoredState
	job.drop("autoscalerResetNonce", "flinkfsm's autoscaler runs for FlinkApplications, not session jobs")
	job.rest()
	return j
}

// textList takes a field that holds a list of text.
func (f *fields) textList(key string) []string {
	v, ok := f.take(key)
	if !ok {
		return nil
	}
	items, isList := v.([]any)
	if !isList {
		f.out.warn(f.at(key), "not a list; left out")
		return nil
	}
	out := make([]string, 0, len(items))
	for i, x := range items {
		s, ok := scalarText(x)
		if !ok {
			f.out.warn(fmt.Sprintf("%s[%d]", f.at(key), i), "not text; left out")
			continue
		}
		out = append(out, s)
	}
	return out
}

// typeMeta is the apiVersion and kind of a flinkfsm kind.
func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1beta1.SchemeGroupVersion.String(), Kind: kind}
}
