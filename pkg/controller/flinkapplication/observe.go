package flinkapplication

import (
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// observeLiveJob refreshes status.clusterStatus and status.jobStatus from Flink for the live
// cluster. It reports, it never acts: a failing job is shown Red and announced once with its cause.
func observeLiveJob(rc *Context) {
	st := rc.Job
	hash := liveCluster(st)
	if hash == "" {
		return
	}
	_, jobID := liveJob(st)
	js := &st.JobStatus
	// A job that is not simply running is watched closely: its restarts count from its checkpoints.
	// So is one whose first checkpoint is not recorded yet: until then a job lost with its
	// JobManager has only the state it started from.
	firstDue := js.LastCheckpointPath == "" && rc.Settings.CheckpointInterval() > 0
	window := checkpointRecordWindow(rc)
	askTogether(rc, hash, jobID, firstDue, window)
	observeCluster(rc, hash)
	if jobID == "" {
		return
	}
	v := rc.pass().View(hash, jobID)
	job := v.Details
	if job == nil {
		// Lost (Stopped without an answer) or unknown: summarize says which in the Ready condition.
		st.JobStatus.Health = v1beta1.Red
		if v.Liveness == jobs.Unknown && (firstDue || rc.env.lookDue(rc, "checkpoints", window, checkpointsLooked(rc, window))) {
			// The record of the newest checkpoint rests on the checkpoints' own endpoint alone: a
			// JobManager that fails to answer for the job while it checkpoints on would otherwise
			// leave the record as old as its errors, and Flink subsumes what it names.
			observeCheckpoints(rc, v.Ref, window)
		}
		return
	}
	before := st.JobStatus.State
	js.State = v1beta1.JobState(job.State)
	if job.StartTime > 0 {
		js.StartTime = jobstate.MsTime(job.StartTime)
	}
	js.RunningTasks, js.TotalTasks = 0, 0
	for _, v := range job.Vertices {
		js.RunningTasks += int32(v.Tasks.Running)
		js.TotalTasks += v.Parallelism
	}
	if job.State == client.JobFailing || job.State == client.JobRestarting && !rescalingInPlace(rc) {
		t := metav1.NewTime(rc.Now)
		js.LastFailingTime = &t
	}
	if rc.env.lookDue(rc, "checkpoints", window, checkpointsLooked(rc, window)) || job.State != client.JobRunning || firstDue {
		observeCheckpoints(rc, v.Ref, window)
		if firstDue && js.LastCheckpointPath != "" {
			// Jobs started together record their first checkpoints in the same polls; from a phase
			// of its own over the window, each job's later records do not come due with theirs.
			// The next look comes sooner than the window, never later, so the restore bound holds.
			rc.env.lookedAt(rc, "checkpoints", spreadLooked(rc, "checkpoints", window))
		}
	}
	recordOverdueInStatus(rc)
	health, why := jobstate.JudgeHealth(rc.checkpointRecords().WithRecorded(js), rc.Now, checkpointsDue(rc))
	if health != js.Health && js.Health != "" {
		// Said when it changes, not at every poll.
		rc.event(health != v1beta1.Green, "JobHealthChanged", fmt.Sprintf("job %s is %s (was %s): %s", jobID, health, js.Health, why))
	}
	js.Health = health
	rc.healthReason = why
	if js.State != before && (js.State == v1beta1.JobFailed || js.State == v1beta1.JobFailing) {
		rc.event(true, "JobFailing", fmt.Sprintf("job %s is %s: %s", jobID, js.State, rc.pass().FailureCause(v.Ref)))
	}
}

// observeCheckpoints records the job's restarts and, when due, its newest completed checkpoint: in
// the checkpoint book, or in status with the checkpoint counters (checkpoint_book.go). window is
// how often the checkpoints are looked at.
func observeCheckpoints(rc *Context, ref jobs.Ref, window time.Duration) {
	js := &rc.Job.JobStatus
	cp, err := rc.pass().Checkpoints(ref)
	if err != nil {
		// Nothing is recorded, and the recorded checkpoint ages on toward Flink subsuming it: the
		// record window is what it outlives when every look records a newer one. The next pass
		// looks again, from the recorded checkpoint's time, not a window after this look.
		rc.env.lookFailed(rc, "checkpoints")
		return
	}
	// Every restore after the initial one is a failover restart.
	restarts := cp.Counts.Restored
	if js.RestorePath != "" && restarts > 0 {
		restarts--
	}
	js.JobRestartCount = int32(restarts)
	path, at := rc.checkpointRecords().Recorded()
	if c := cp.Latest.Completed; c != nil && c.ExternalPath != "" && jobstate.CheckpointRecordDue(path, at, c.ExternalPath, c.TriggerTimestamp) &&
		!rc.checkpointRecords().RecordInBook(window, rc.Settings.CheckpointInterval(), ref.ID, c, jobstate.TakenByFlink(rc.Now, c.TriggerTimestamp)) {
		// Recorded in the ledger as the job's checkpoint, which jobStatus.lastCheckpoint shows.
		rc.ledger().Record(v1beta1.StateCheckpoint, ref.ID, liveCluster(rc.Job), c.ExternalPath, jobstate.TakenByFlink(rc.Now, c.TriggerTimestamp))
		js.LastCheckpointPath, js.LastCheckpointTime = c.ExternalPath, jobstate.MsTime(c.TriggerTimestamp)
		js.CompletedCheckpointCount, js.FailedCheckpointCount = int32(cp.Counts.Completed), int32(cp.Counts.Failed)
	}
	if r := cp.Latest.Restored; r != nil && js.RestorePath == "" {
		js.RestorePath, js.RestoreTime = r.ExternalPath, jobstate.MsTime(r.RestoreTimestamp)
	}
}

// askTogether asks Flink at once for what observeLiveJob is about to read one after the other: the
// job, and, when they are due, the cluster's overview and the job's checkpoints. A poll that needs
// two answers then waits for the slower one, not for both in turn (at 10,000 applications a third
// of the polls read two). Whether the checkpoints are due is judged as observeLiveJob will judge
// it, but noted only there, once the job has answered: a job that did not has its checkpoints
// asked again at its next poll, as before, and the one call asked in vain costs no time, since it
// went out with the job's. A job Flink reports in another state than RUNNING has its checkpoints
// read after that answer, whether due or not, as before.
//
// The job is read on the pass's own goroutine (Together's first read), the others on their own,
// from values taken here: nothing but the job's read calls back into the pass's Context.
func askTogether(rc *Context, hash, jobID string, firstDue bool, window time.Duration) {
	if jobID == "" {
		return
	}
	p := rc.pass()
	reads := [3]func(){func() { p.View(hash, jobID) }}
	n := 1
	if clusterLookDue(rc, hash, false) {
		url := p.URL(hash)
		reads[n] = func() { _, _ = p.OverviewAt(hash, url) }
		n++
	}
	if firstDue || rc.env.lookWouldBeDue(rc, "checkpoints", window, checkpointsLooked(rc, window)) {
		ref := p.Ref(hash, jobID)
		reads[n] = func() { _, _ = p.Checkpoints(ref) }
		n++
	}
	if n > 1 {
		p.Together(reads[:n]...)
	}
}

// clusterLookDue tells whether the cluster's overview is read in this pass; note says whether to
// note it read.
func clusterLookDue(rc *Context, hash string, note bool) bool {
	if rc.Owned == nil {
		// A session job's cluster is its FlinkSessionCluster's to report.
		return false
	}
	// Slots and TaskManagers change rarely, and Kubernetes reports lost TaskManagers sooner.
	if rc.Owned.ClusterStatus.Health != v1beta1.Green {
		return true
	}
	every := rc.Config.CheckpointRecordInterval.Duration
	since := spreadLooked(rc, "overview/"+hash, every)
	if note {
		return rc.env.lookDue(rc, "overview/"+hash, every, since)
	}
	return rc.env.lookWouldBeDue(rc, "overview/"+hash, every, since)
}

func observeCluster(rc *Context, hash string) {
	if !clusterLookDue(rc, hash, true) {
		return
	}
	cs := &rc.Owned.ClusterStatus
	ov, err := rc.pass().Overview(hash)
	if err != nil {
		cs.Health = v1beta1.Red
		return
	}
	cs.NumberOfTaskManagers = int32(ov.TaskManagers)
	cs.HealthyTaskManagers = int32(ov.TaskManagers - ov.TaskManagersBlocked)
	cs.NumberOfTaskSlots = int32(ov.SlotsTotal)
	cs.AvailableTaskSlots = int32(ov.SlotsAvailable)
	want := rc.ClusterOwner.TaskManagers
	if c := rc.Clusters[hash]; c != nil && c.TaskManager != nil {
		want = replicas(c.TaskManager)
	}
	switch {
	case cs.HealthyTaskManagers >= want:
		cs.Health = v1beta1.Green
	default:
		cs.Health = v1beta1.Yellow
	}
}

// checkpointsDue is how old the recorded checkpoint may get before the job counts as not
// checkpointing: the record interval plus three checkpoint intervals; zero without checkpointing.
func checkpointsDue(rc *Context) time.Duration {
	interval := rc.Settings.CheckpointInterval()
	if interval <= 0 {
		return 0
	}
	return checkpointRecordWindow(rc) + 3*interval
}

// checkpointRecordWindow is how often a running job's checkpoints are looked at, and so how often
// the newest is recorded: checkpointRecordInterval, or sooner when Flink keeps too few checkpoints
// for the recorded one to outlive the next look. The recorded checkpoint was the newest completed
// when it was recorded, up to a checkpoint interval old, and the next look comes up to a status
// poll late, and a record in the checkpoint book waits up to checkpointBookInterval for its page's
// write; Flink keeps it for (num-retained − 1) checkpoint intervals. So the window is that survival
// less an interval, a poll and the book's wait: with Flink's default of one retained, every poll.
// When the spec sets no retention the operator's clusters keep enough (flink.CheckpointsToRetain)
// for the full interval, and the JobManager Deployment says how many.
func checkpointRecordWindow(rc *Context) time.Duration {
	return checkpointRecordWindowOn(rc, liveCluster(rc.Job))
}

// checkpointRecordWindowOn is checkpointRecordWindow for a job on the cluster of that hash.
func checkpointRecordWindowOn(rc *Context, hash string) time.Duration {
	window := rc.Config.CheckpointRecordInterval.Duration
	var annotations map[string]string
	if c := rc.Clusters[hash]; c != nil && c.JobManager != nil {
		annotations = c.JobManager.Annotations
	}
	survives, ok := flink.ClusterCheckpointSurvival(rc.Settings.FlinkConfig, annotations)
	if !ok {
		return 0
	}
	if survives == math.MaxInt64 {
		return window
	}
	interval := rc.Settings.CheckpointInterval()
	return max(0, min(window, survives-interval-rc.Config.StatusPollInterval.Duration-rc.checkpointRecords().Delay()))
}

// observe takes the pass's view of Flink before any decision: the jobs of both deployment records
// (the stable one and the candidate). A job's checkpoints and the other jobs on a cluster (strays)
// are read, in the same view, when a decision needs them: checkpoints before a stop or a restore
// and when their record is due, strays before a submission. Calls to a JobManager that did not
// answer once fail fast for the rest of the pass.
func observe(rc *Context) {
	st := rc.Job
	for _, r := range []*v1beta1.DeploymentRecord{stable(st), candidate(st)} {
		if r != nil && r.JobID != "" {
			rc.pass().View(r.ClusterHash, r.JobID)
		}
	}
	recordCheckpointsWhileReplaced(rc)
	recordCandidateCheckpoint(rc)
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
func recordCheckpointsWhileReplaced(rc *Context) {
	if observingTheLiveJob[rc.Subject.Phase().Normalized()] {
		return
	}
	recordDueCheckpoint(rc)
}

// recordDueCheckpoint records the newest checkpoint of the live job when its record is due and the
// job is not known stopped. The look is the one of Running (checkpointRecordWindow), at no more
// calls.
func recordDueCheckpoint(rc *Context) {
	if rc.Settings.CheckpointInterval() <= 0 {
		return
	}
	hash, jobID := liveJob(rc.Job)
	if jobID == "" || rc.Job.JobStatus.JobID != jobID {
		return
	}
	v := rc.pass().View(hash, jobID)
	if v.Liveness == jobs.Stopped {
		return
	}
	window := checkpointRecordWindow(rc)
	if rc.env.lookDue(rc, "checkpoints", window, checkpointsLooked(rc, window)) {
		observeCheckpoints(rc, v.Ref, window)
	}
}
