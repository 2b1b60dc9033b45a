package lifecycle

import (
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// KeepGivenUpJob keeps the job of a deployment given up on as the object's job, the stable
// deployment's, while it may still run and no other job is recorded as running: the next change
// then stops it first, and nothing is ever started beside it. A job is forgotten only on Flink's
// word that it stopped (or its JobManager gone): one whose JobManager stopped answering for it may
// run on for as long as the JobManager does. sessionJob says that the object is a FlinkSessionJob,
// whose stable deployment is only the job that runs.
func (p *Pass) KeepGivenUpJob(sessionJob bool) {
	st := p.Job
	c, s := jobstate.Candidate(st), jobstate.Stable(st)
	if c == nil || c.JobID == "" || s != nil && s.JobID != "" {
		return
	}
	if s != nil && c.SpecHash == s.SpecHash && c.ClusterHash == s.ClusterHash {
		// The stable spec's job started again on its kept cluster (a restart, a recovery, a
		// rollback) stays the stable deployment's.
		jobstate.KeepCandidateJob(st)
		return
	}
	if p.Flink().View(c.ClusterHash, c.JobID).Liveness == jobs.Stopped {
		return
	}
	switch {
	case sessionJob:
		// A session job's stable deployment is only the job that runs: the one given up on is that
		// job now, on its cluster, as it started.
		KeepAsSessionJobsJob(st)
	case s != nil && c.ClusterHash == s.ClusterHash:
		// A change made in place (a rescale on the stable cluster) runs its job where the stable
		// deployment lives, which is never deleted as a leftover: the job stays the application's,
		// and the stable spec stays what a later failed update returns to.
		jobstate.KeepCandidateJob(st)
	}
	// An application's deploy on a cluster of its own leaves it behind, and no job is started while
	// a leftover cluster's JobManager is left.
}
