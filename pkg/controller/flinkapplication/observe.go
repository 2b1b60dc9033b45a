package flinkapplication

import (
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// observation is how this pass reads its jobs and clusters from Flink (jobstate.Observe).
func (rc *Context) observation() jobstate.Observe {
	return jobstate.Observe{Job: rc.jobState(), Records: rc.checkpointRecords(), Flink: rc.pass(), Look: rc.look(), Now: rc.Now,
		Owned: rc.Owned, Clusters: rc.Clusters, TaskManagers: rc.ClusterOwner.TaskManagers,
		RecordInterval: rc.Config.CheckpointRecordInterval.Duration, PollInterval: rc.Config.StatusPollInterval.Duration,
		RescalingInPlace: rescalingInPlace(rc), RecordCandidate: recordsCandidateCheckpoints(rc), DiscardsAt: rc.DiscardsAt, Announce: rc.event,
		Log: klog.FromContext(rc)}
}

// observeLiveJob refreshes status.clusterStatus and status.jobStatus from Flink for the live
// cluster (jobstate.Observe.LiveJob).
func observeLiveJob(rc *Context) { rc.HealthReason = rc.observation().LiveJob() }

// observe takes the pass's view of Flink before any decision: the jobs of both deployment records
// (the stable one and the candidate). A job's checkpoints and the other jobs on a cluster (strays)
// are read, in the same view, when a decision needs them: checkpoints before a stop or a restore
// and when their record is due, strays before a submission. Calls to a JobManager that did not
// answer once fail fast for the rest of the pass.
func observe(rc *Context) {
	o := rc.observation()
	o.Views()
	recordCheckpointsWhileReplaced(rc, o)
	o.CandidateCheckpoint()
}

// observingTheLiveJob are the phases whose handlers read the live job (observeLiveJob) at every
// pass they stay in, and with it record its checkpoints. A pass that leaves Running for another
// phase does not get that far, and records them before it leaves (recordDueCheckpoint). Rescaling
// is not one: its handler reads the job only once it rescaled, while the job runs on for passes.
var observingTheLiveJob = map[Phase]bool{PhaseRunning: true, PhaseDualRunning: true}

// recordCheckpointsWhileReplaced records the newest checkpoint of the live job when due in every
// other phase in which it still runs: an update that starts a cluster beside it, takes its
// savepoint or waits on Flink may last minutes, and a job lost meanwhile without HA restarts from
// the checkpoint recorded last, which Flink keeps only for num-retained checkpoint intervals.
func recordCheckpointsWhileReplaced(rc *Context, o jobstate.Observe) {
	if observingTheLiveJob[rc.Subject.Phase().Normalized()] {
		return
	}
	o.DueCheckpoint()
}

// recordDueCheckpoint records the newest checkpoint of the live job when its record is due
// (jobstate.Observe.DueCheckpoint).
func recordDueCheckpoint(rc *Context) { rc.observation().DueCheckpoint() }

// recordsCandidateCheckpoints tells whether the candidate's job has its checkpoints recorded while
// it starts (jobstate.Observe.CandidateCheckpoint): a new BlueGreen version's job while it runs
// beside the deployed version, which may subsume the checkpoint it started from, and a session
// job's in Submitting (attack review s5). A new job of the other modes starts once the job before
// it stopped, from state nothing subsumes.
func recordsCandidateCheckpoints(rc *Context) bool {
	if rc.Job == nil {
		return false
	}
	c, s := jobstate.Candidate(rc.Job), jobstate.Stable(rc.Job)
	if c == nil {
		return false
	}
	return rc.App != nil && blueGreen(rc.App) && s != nil && s.ClusterHash != c.ClusterHash || isSessionJob(rc)
}

// isSessionJob tells whether the pass is a FlinkSessionJob's.
func isSessionJob(rc *Context) bool { return rc.session != nil && rc.session.Job != nil }
