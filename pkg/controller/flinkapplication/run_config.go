package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// renderedRetention is the externalized-checkpoint retention the cluster of that hash was rendered
// with, as its JobManager Deployment says; ok is false for a cluster rendered before it said so, or
// whose Deployment is not known.
func renderedRetention(rc *Context, hash string) (string, bool) {
	c := rc.Clusters[hash]
	if c == nil || c.JobManager == nil {
		return "", false
	}
	v, ok := c.JobManager.Annotations[flink.CheckpointRetentionAnnotation]
	return v, ok
}

// runConfigOfJob is the Flink configuration the object's job with this id was started with, as far
// as the operator recorded it: the spec of its deployment record (over the session cluster's
// configuration, for a session job); the current spec's when no record names the job or the
// record keeps no spec. A session job's cluster retention is what its Flink cluster was rendered with
// (flink.CheckpointRetentionAnnotation). What a job keeps of its checkpoints when it ends is what it runs with, not
// what a later edit of the spec says (explorer seed 10000102: an update that also set the
// retention policy to RETAIN_ON_CANCELLATION cancelled a job running with
// NO_EXTERNALIZED_CHECKPOINTS as if its checkpoints survived, and restored one Flink had discarded).
func runConfigOfJob(rc *Context, jobID string) v1beta1.FlinkConfig {
	if rc.Job == nil || jobID == "" {
		return rc.Settings.FlinkConfig
	}
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(rc.Job), jobstate.Candidate(rc.Job)} {
		if r == nil || r.JobID != jobID || r.Spec == "" {
			continue
		}
		if isSessionJob(rc) {
			conf := v1beta1.FlinkConfig{}
			if c := rc.session.Cluster; c != nil {
				for k, v := range c.Spec.FlinkConfig {
					conf[k] = v
				}
			}
			if retention, ok := renderedRetention(rc, r.ClusterHash); ok {
				// The Flink cluster's own, over a later edit of the session cluster's spec, which
				// only a new Flink cluster runs with (attack review s6b).
				conf[flink.CheckpointRetentionKey] = retention
			}
			for k, v := range recordedSessionSpec(r).FlinkConfig {
				conf[k] = v
			}
			return conf
		}
		if rc.App != nil {
			if app := withSpec(rc.App, r.Spec); app != nil {
				return app.Spec.FlinkConfig
			}
		}
	}
	return rc.Settings.FlinkConfig
}
