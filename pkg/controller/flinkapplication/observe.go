package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// recordsCandidateCheckpoints tells whether the candidate's job has its checkpoints recorded while
// it starts (jobstate.Observe.CandidateCheckpoint): a new BlueGreen version's job while it runs
// beside the deployed version, which may subsume the checkpoint it started from. A new job of the
// other modes starts once the job before it stopped, from state nothing subsumes.
func recordsCandidateCheckpoints(rc *Context) bool {
	if rc.Job == nil {
		return false
	}
	c, s := jobstate.Candidate(rc.Job), jobstate.Stable(rc.Job)
	if c == nil {
		return false
	}
	return rc.App != nil && blueGreen(rc.App) && s != nil && s.ClusterHash != c.ClusterHash
}
