package lifecycle

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// Observation is how this pass reads its jobs and clusters from Flink (jobstate.Observe).
func (p *Pass) Observation() jobstate.Observe {
	return jobstate.Observe{Job: p.JobState(), Records: p.CheckpointRecords(), Flink: p.Flink(), Look: p.Look(), Now: p.Now,
		Owned: p.Owned, Clusters: p.Clusters, TaskManagers: p.ClusterOwner.TaskManagers,
		RecordInterval: p.Config.CheckpointRecordInterval.Duration, PollInterval: p.Config.StatusPollInterval.Duration,
		RescalingInPlace: p.Kind.RescalingInPlace(), RecordCandidate: p.Kind.RecordsCandidateCheckpoints(), DiscardsAt: p.DiscardsAt,
		Announce: p.Event, Log: klog.FromContext(p)}
}

// ObserveLiveJob refreshes status.clusterStatus and status.jobStatus from Flink for the live
// cluster (jobstate.Observe.LiveJob).
func (p *Pass) ObserveLiveJob() { p.HealthReason = p.Observation().LiveJob() }

// Observe takes the pass's view of Flink before any decision: the jobs of both deployment records
// (the stable one and the candidate). A job's checkpoints and the other jobs on a cluster (strays)
// are read, in the same view, when a decision needs them: checkpoints before a stop or a restore
// and when their record is due, strays before a submission. Calls to a JobManager that did not
// answer once fail fast for the rest of the pass.
func (p *Pass) Observe() {
	o := p.Observation()
	o.Views()
	p.recordCheckpointsWhileReplaced(o)
	o.CandidateCheckpoint()
}

// observingTheLiveJob are the phases whose handlers read the live job (ObserveLiveJob) at every
// pass they stay in, and with it record its checkpoints. A pass that leaves Running for another
// phase does not get that far, and records them before it leaves (RecordDueCheckpoint). Rescaling
// is not one: its handler reads the job only once it rescaled, while the job runs on for passes.
var observingTheLiveJob = map[fsm.Phase]bool{fsm.PhaseRunning: true, fsm.PhaseDualRunning: true}

// recordCheckpointsWhileReplaced records the newest checkpoint of the live job when due in every
// other phase in which it still runs: an update that starts a cluster beside it, takes its
// savepoint or waits on Flink may last minutes, and a job lost meanwhile without HA restarts from
// the checkpoint recorded last, which Flink keeps only for num-retained checkpoint intervals.
func (p *Pass) recordCheckpointsWhileReplaced(o jobstate.Observe) {
	if observingTheLiveJob[p.Subject.Phase().Normalized()] {
		return
	}
	o.DueCheckpoint()
}

// RecordDueCheckpoint records the newest checkpoint of the live job when its record is due
// (jobstate.Observe.DueCheckpoint).
func (p *Pass) RecordDueCheckpoint() { p.Observation().DueCheckpoint() }

// StartedJob records a job that just ran stable: its parameters (for a later rollback) and the
// state it came from, and resets the counters of the job it replaced.
func (p *Pass) StartedJob(params jobstate.JobParams, restorePath string) {
	st := p.Job
	params.RecordIn(st)
	// The state the job was to start from is used; jobStatus.restorePath keeps it. The Lyft
	// operator's users read an empty savepointPath as "the new job runs", and a later one as the
	// state a stop or a delete left.
	st.Deployments.NextRestorePath = ""
	js := &st.JobStatus
	js.RestorePath, js.RestoreTime = restorePath, nil
	js.JobRestartCount, js.CompletedCheckpointCount, js.FailedCheckpointCount = 0, 0, 0
	// The previous job's last checkpoint is older than what this one started from; a recovery must
	// never restore it.
	js.LastCheckpointPath, js.LastCheckpointTime, js.LastFailingTime = "", nil, nil
	p.ObserveLiveJob()
	if restorePath != "" {
		// The state a job started from is no newer than its start, which comes before it ran
		// stable: a checkpoint the job took while stabilizing is newer, and a restore must take it.
		t := metav1.NewTime(p.Now)
		if js.StartTime != nil && js.StartTime.Before(&t) {
			t = *js.StartTime
		}
		js.RestoreTime = &t
	}
	p.TrimLedger()
}
