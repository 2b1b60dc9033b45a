package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// runConfigOfJob is the Flink configuration the application's job with this id was started with, as
// far as the operator recorded it: the spec of its deployment record; the current spec's when no
// record names the job or the record keeps no spec. What a job keeps of its checkpoints when it ends is what it runs with, not
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
		if rc.App != nil {
			if app := withSpec(rc.App, r.Spec); app != nil {
				return app.Spec.FlinkConfig
			}
		}
	}
	return rc.Settings.FlinkConfig
}
