package flinkapplication

import (
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// candidateCheckpoints names the look at the candidate job's checkpoints (Environment.lookDue).
const candidateCheckpoints = "candidate checkpoints"

// recordCandidateCheckpoint records in the ledger the newest checkpoint of a new BlueGreen
// version's job while it runs beside the deployed version, until its promotion and the deployed
// version's teardown end. It may have started from a checkpoint of the deployed version's job,
// which that job subsumes as it checkpoints on, or discards when it is cancelled (Flink restores
// it without claiming it): lost without HA, the new version's job starts again from its own newest
// checkpoint, never from the one it started from. It is looked at once a record window, as the
// live job is, and at every pass until a first checkpoint of it is recorded. A new job of the
// other modes starts once the job before it stopped, from state nothing subsumes.
func recordCandidateCheckpoint(rc *Context) {
	c, s := candidate(rc.Job), stable(rc.Job)
	if rc.App == nil || !blueGreen(rc.App) || c == nil || c.JobID == "" || s == nil || s.ClusterHash == c.ClusterHash ||
		checkpointInterval(rc) <= 0 {
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
