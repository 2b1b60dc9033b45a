package sessionjob

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// BeforeRun sends a session job that its JobManager lost back to the newest state it completed.
func (p *Pass) BeforeRun(rec *v1beta1.DeploymentRecord, restorePath string) (fsm.Outcome, bool) {
	if rec.JobID != "" && jobUnknownToFlink(p.Flink().View(rec.ClusterHash, rec.JobID)) {
		// The job ran (its checkpoints recorded) and its JobManager no longer knows it (lost with a
		// JobManager process without HA): submitted again under its id, it goes on from what it
		// completed, newer than what it started from. The restore is persisted before the submission.
		// A job Flink still reports (FAILED, say) ended through Flink, which may have discarded its
		// checkpoints: the phase that saw it end chose what to restore (attack review s6).
		if newest := p.JobState().NewestStatePath(rec.JobID); newest != "" && newest != restorePath {
			p.Job.Deployments.NextRestorePath = newest
			return fsm.PersistThenContinue(), true
		}
	}
	return fsm.Outcome{}, false
}

// jobUnknownToFlink tells whether the job is gone without Flink having ended it: its JobManager no
// longer knows it, or is gone with it.
func jobUnknownToFlink(v *jobs.View) bool { return v.Liveness == jobs.Stopped && v.Details == nil }

// renderedRetention is the externalized-checkpoint retention the cluster of that hash was rendered
// with, as its JobManager Deployment says; ok is false for a cluster rendered before it said so, or
// whose Deployment is not known.
func renderedRetention(p *Pass, hash string) (string, bool) {
	c := p.Clusters[hash]
	if c == nil || c.JobManager == nil {
		return "", false
	}
	v, ok := c.JobManager.Annotations[flink.CheckpointRetentionAnnotation]
	return v, ok
}

// runConfigOfJob is the Flink configuration the session job's job with this id was started with, as
// far as the operator recorded it: the spec of its deployment record over the session cluster's
// configuration, with the retention its Flink cluster was rendered with
// (flink.CheckpointRetentionAnnotation); the current spec's when no record names the job or the
// record keeps no spec. What a job keeps of its checkpoints when it ends is what it runs with, not
// what a later edit of the spec says (explorer seed 10000102).
func runConfigOfJob(p *Pass, jobID string) v1beta1.FlinkConfig {
	if p.Job == nil || jobID == "" {
		return p.Settings.FlinkConfig
	}
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(p.Job), jobstate.Candidate(p.Job)} {
		if r == nil || r.JobID != jobID || r.Spec == "" {
			continue
		}
		conf := v1beta1.FlinkConfig{}
		if c := p.Cluster; c != nil {
			for k, v := range c.Spec.FlinkConfig {
				conf[k] = v
			}
		}
		if retention, ok := renderedRetention(p, r.ClusterHash); ok {
			// The Flink cluster's own, over a later edit of the session cluster's spec, which
			// only a new Flink cluster runs with (attack review s6b).
			conf[flink.CheckpointRetentionKey] = retention
		}
		for k, v := range recordedSessionSpec(r).FlinkConfig {
			conf[k] = v
		}
		return conf
	}
	return p.Settings.FlinkConfig
}
