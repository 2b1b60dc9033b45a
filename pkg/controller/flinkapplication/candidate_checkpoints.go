package flinkapplication

import (
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
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
//
// A session job's job in Submitting is recorded too: no job of it runs beside, the one before was
// stopped first, and lost with its JobManager before it ran stable, it starts again from its own
// newest checkpoint, not from the older state it started from (attack review s5).
func recordCandidateCheckpoint(rc *Context) {
	c, s := candidate(rc.Job), stable(rc.Job)
	if c == nil || c.JobID == "" || rc.Settings.CheckpointInterval() <= 0 {
		return
	}
	besideDeployed := rc.App != nil && blueGreen(rc.App) && s != nil && s.ClusterHash != c.ClusterHash
	if !besideDeployed && !isSessionJob(rc) {
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
		rc.ledger().Record(v1beta1.StateCheckpoint, c.JobID, c.ClusterHash, l.ExternalPath, jobstate.TakenByFlink(rc.Now, l.TriggerTimestamp))
	}
}

// isSessionJob tells whether the pass is a FlinkSessionJob's.
func isSessionJob(rc *Context) bool { return rc.session != nil && rc.session.Job != nil }
