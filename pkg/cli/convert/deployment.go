package convert

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// canaryLabel marks the Apache operator's canary objects, which test that it reconciles.
const canaryLabel = "flink.apache.org/canary"

// canary tells whether the object is the Apache operator's canary, which has no spec.
func canary(meta metav1.ObjectMeta) bool { return meta.Labels[canaryLabel] == "true" }

// flinkDeployment converts a FlinkDeployment: in application mode (spec.job) to a FlinkApplication,
// in session mode to a FlinkSessionCluster of the same name, which its FlinkSessionJobs name as
// clusterName.
func flinkDeployment(meta metav1.ObjectMeta, spec *fields) ([]any, error) {
	if canary(meta) {
		// The Apache operator's health check reconciles it; flinkfsm's health is its /healthz.
		spec.out.warn("metadata.labels."+canaryLabel, "the Apache operator's canary, for its own health check; flinkfsm answers /healthz instead: not converted")
		return nil, nil
	}
	if _, ok := spec.m["job"]; ok {
		return application(meta, spec)
	}
	p := clusterOf(spec)
	out := &v1beta1.FlinkSessionCluster{TypeMeta: typeMeta(v1beta1.FlinkSessionClusterKind), ObjectMeta: meta}
	out.Spec.ClusterSpec = p.cluster
	out.Spec.JobManagerConfig = p.jobManager
	out.Spec.TaskManagerConfig = v1beta1.SessionTaskManagerConfig{TaskManagerConfig: p.taskManager, Replicas: p.taskManagers}
	out.Spec.RestartNonce = p.restartNonce
	if p.taskManagers == nil {
		spec.out.warn("spec.taskManager.replicas", "unset: the Apache operator's native session cluster starts TaskManagers as its jobs ask for slots; "+
			"a FlinkSessionCluster runs taskManagerConfig.replicas TaskManagers, 1 when unset: set it so that their slots fit the parallelism of its jobs")
	}
	if p.settings.periodicSavepoint != nil || p.settings.retention != nil {
		spec.out.warn(spec.at("flinkConfiguration"), "periodic savepoints and savepoint history of a session cluster are its jobs' in flinkfsm: set them on each FlinkSessionJob")
	}
	spec.drop("ingress", "a FlinkSessionCluster has no UI Ingress in flinkfsm; a FlinkApplication does (spec.ingress)")
	return []any{out}, nil
}
