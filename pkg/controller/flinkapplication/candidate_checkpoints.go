package flinkapplication

import (
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// candidateCheckpoints names the look at the candidate job's checkpoints (Environment.lookDue).
const candidateCheckpoints = "candidate checkpoints"

// recordCandidateCheckpoint records in the ledger the newest checkpoint of a job started for the
// deployment in progress, while it runs and is not the live job: a BlueGreen version beside the
// deployed one until its promotion and the deployed version's teardown, or a new job until it runs
// stable. Such a job may have started from a checkpoint of the live job, which that job subsumes
// as it checkpoints on (Flink restores it without claiming it): lost without HA, the new job
// starts again from its own newest checkpoint, never from its start. It is looked at once a record
// window, as the live job is, and at every pass until a first checkpoint of it is recorded.
func recordCandidateCheckpoint(rc *Context) {
	c := candidate(rc.Job)
	if c == nil || c.JobID == "" || checkpointInterval(rc) <= 0 {
		return
	}
	if _, live := liveJob(rc.Job); live == c.JobID {
		return
	}
	v := rc.pass().View(c.ClusterHash, c.JobID)
	if v.Liveness == jobs.Stopped {
		return
	}
	recorded := rc.ledger().Checkpoint(c.JobID)
	since := time.Time{}
	if recorded != nil && recorded.Time != nil {
		since = recorded.Time.Time
	}
	due := rc.env.lookDue(rc, candidateCheckpoints, checkpointRecordWindowOn(rc, c.ClusterHash), since)
	if !due && recorded != nil {
		return
	}
	cp, err := rc.pass().Checkpoints(v.Ref)
	if err != nil {
		rc.env.lookFailed(rc, candidateCheckpoints)
		return
	}
	if l := cp.Latest.Completed; l != nil && jobs.Restorable(l.ExternalPath) {
		rc.ledger().Record(v1beta1.StateCheckpoint, c.JobID, c.ClusterHash, l.ExternalPath, time.UnixMilli(l.TriggerTimestamp))
	}
}
