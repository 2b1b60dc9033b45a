package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// keepJobGivenUpOn keeps the job of a deployment given up on as the object's job, the stable
// deployment's, while it may still run and no other job is recorded as running: the next change
// then stops it first, and nothing is ever started beside it. A job is forgotten only on Flink's
// word that it stopped (or its JobManager gone): one whose JobManager stopped answering for it may
// run on for as long as the JobManager does.
func keepJobGivenUpOn(rc *Context) {
	st := rc.Job
	c, s := candidate(st), stable(st)
	if c == nil || c.JobID == "" || s != nil && s.JobID != "" {
		return
	}
	if s != nil && c.SpecHash == s.SpecHash && c.ClusterHash == s.ClusterHash {
		// The stable spec's job started again on its kept cluster (a restart, a recovery, a
		// rollback) stays the stable deployment's.
		s.JobID, s.SubmittedAt = c.JobID, c.SubmittedAt
		return
	}
	if rc.App != nil || rc.pass().View(c.ClusterHash, c.JobID).Liveness == jobs.Stopped {
		// An application's deploy has a cluster of its own, which goes with it: no job is submitted
		// while such a cluster's JobManager is left (leftover_clusters.go). The stable deployment
		// stays what a later failed update returns to.
		return
	}
	// A session job's stable deployment is only the job that runs: the one given up on is that job
	// now, on its cluster, as it started.
	kept := *c
	kept.Kind, kept.RestorePath, kept.StableTime = "", st.Deployments.NextRestorePath, nil
	st.Deployments.Stable = &kept
}
