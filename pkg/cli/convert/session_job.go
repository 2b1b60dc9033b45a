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
	j.EntryClass, _ = job.text("entryClass")
	if p, ok := job.integer("parallelism"); ok && p > 0 {
		n := int32(p)
		j.Parallelism = &n
	}
	j.Args = job.textList("args")
	j.UpgradeMode = upgradeMode(job)
	j.State = desiredState(job)
	j.SavepointTriggerNonce = job.nonce("savepointTriggerNonce")
	j.CheckpointTriggerNonce = job.nonce("checkpointTriggerNonce")
	j.SavepointRedeployNonce = job.nonce("savepointRedeployNonce")
	j.InitialSavepointPath, _ = job.text("initialSavepointPath")
	j.SavepointRedeployNonce = redeployNonce(job, j.SavepointRedeployNonce, j.InitialSavepointPath)
	j.AllowNonRestoredState, _ = job.boolean("allowNonRestoredState")
	job.drop("autoscalerResetNonce", "flinkfsm's autoscaler runs for FlinkApplications, not session jobs")
	job.rest()
	return j
}

// upgradeMode is the job's upgradeMode. The Apache operator's default is stateless, flinkfsm's
// Savepoint: an Apache job without one is written Stateless, as it ran.
func upgradeMode(job *fields) v1beta1.UpgradeMode {
	s, _ := job.text("upgradeMode")
	switch strings.ToLower(s) {
	case "savepoint":
		return v1beta1.UpgradeModeSavepoint
	case "last-state":
		return v1beta1.UpgradeModeLastState
	case "", "stateless":
		return v1beta1.UpgradeModeStateless
	}
	job.out.warn(job.at("upgradeMode"), fmt.Sprintf("%q is not an upgrade mode; written Stateless, the Apache operator's default", s))
	return v1beta1.UpgradeModeStateless
}

// desiredState is the job's state: running or suspended.
func desiredState(job *fields) v1beta1.JobDesiredState {
	s, _ := job.text("state")
	switch strings.ToLower(s) {
	case "suspended":
		return v1beta1.JobStateSuspended
	case "", "running":
		return ""
	}
	job.out.warn(job.at("state"), fmt.Sprintf("%q is not running or suspended; left out", s))
	return ""
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

// redeployNonce is a savepointRedeployNonce flinkfsm takes: one with the savepoint it redeploys from.
// The Apache operator reads the pair only when the nonce changes (its blue/green abort sets a nonce
// on its own), flinkfsm's API at every apply: a nonce without its path is left out, named.
func redeployNonce(job *fields, nonce v1beta1.Nonce, path string) v1beta1.Nonce {
	if nonce != "" && path == "" {
		job.out.warn(job.at("savepointRedeployNonce"), "without an initialSavepointPath to redeploy from, which flinkfsm's API asks for with it; left out")
		return ""
	}
	return nonce
}
