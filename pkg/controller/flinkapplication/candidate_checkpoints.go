package flinkapplication

import (
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// candidateCheckpoints names the look at the candidate job's checkpoints (Environment.lookDue).
const candidateCheckpoints = "candidate checkpoints"

// recordCandidateCheckpoint records in the ledger the newest checkpoint of the job being started
// (an update's, a rollback's, a restart's, a session job's) while it runs and is not yet the
// stable one: lost with its JobManager before it ran stable, the job starts again from its own
// newest checkpoint, not from the older state it started from (attack review s5: a session job's
// job lost in Submitting went back past its checkpoints). A new BlueGreen version's job may also
// have started from a checkpoint of the deployed version's job, which that job subsumes as it
// checkpoints on, or discards when it is cancelled (Flink restores it without claiming it). It is
// looked at once a record window, as the live job is, and at every pass until a first checkpoint
// of it is recorded: what a pass costs stays one call while the job starts.
func recordCandidateCheckpoint(rc *Context) {
	c := candidate(rc.Job)
	if c == nil || c.JobID == "" || checkpointInterval(rc) <= 0 {
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
		rc.ledger().Record(v1beta1.StateCheckpoint, c.JobID, c.ClusterHash, l.ExternalPath, takenByFlink(rc, l.TriggerTimestamp))
	}
}
