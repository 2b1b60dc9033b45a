package jobstate

import (
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// Observe is what reading an owner's jobs and clusters from Flink takes in one pass. It reports,
// it never acts: what it reads goes to the owner's status, its ledger and its checkpoint records.
type Observe struct {
	Job     Job
	Records CheckpointRecords
	Flink   *jobs.Pass
	Look    Look
	Now     time.Time
	// Owned is the status of the clusters the owner runs; nil for a session job, whose cluster its
	// FlinkSessionCluster reports.
	Owned *v1beta1.ClusterOwnerStatus
	// Clusters are the owner's Flink clusters as read, by hash.
	Clusters map[string]*clusters.Objects
	// TaskManagers is how many TaskManagers the spec asks for.
	TaskManagers int32
	// RecordInterval is checkpointRecordInterval, PollInterval statusPollInterval.
	RecordInterval, PollInterval time.Duration
	// RescalingInPlace says that the job restarts because it rescales in place, not because it fails.
	RescalingInPlace bool
	// RecordCandidate says that the candidate's job has its checkpoints recorded while it starts:
	// a BlueGreen version's beside the deployed one, or a session job's.
	RecordCandidate bool
	// DiscardsAt tells whether the job's checkpoints are discarded as it ends in this state, by
	// the configuration the job runs with (Restore.DiscardsAt).
	DiscardsAt func(jobID, state string) bool
	Announce   func(warning bool, reason, message string)
	Log        klog.Logger
}

// LiveJob refreshes status.clusterStatus and status.jobStatus from Flink for the live
// cluster. It reports, it never acts: a failing job is shown Red and announced once with its cause. It
// returns why the job's health is what it found.
func (o Observe) LiveJob() (healthReason string) {
	st := o.Job.Status
	hash := LiveCluster(st)
	if hash == "" {
		return ""
	}
	_, jobID := LiveJob(st)
	js := &st.JobStatus
	// A job that is not simply running is watched closely: its restarts count from its checkpoints.
	// So is one whose first checkpoint is not recorded yet: until then a job lost with its
	// JobManager has only the state it started from.
	firstDue := js.LastCheckpointPath == "" && o.Job.Settings.CheckpointInterval() > 0
	window := o.RecordWindow()
	o.askTogether(hash, jobID, firstDue, window)
	o.Cluster(hash)
	if jobID == "" {
		return ""
	}
	v := o.Flink.View(hash, jobID)
	job := v.Details
	if job == nil {
		// Lost (Stopped without an answer) or unknown: summarize says which in the Ready condition.
		st.JobStatus.Health = v1beta1.Red
		if v.Liveness == jobs.Unknown && (firstDue || o.Look.Due("checkpoints", window, o.checkpointsLooked(window))) {
			// The record of the newest checkpoint rests on the checkpoints' own endpoint alone: a
			// JobManager that fails to answer for the job while it checkpoints on would otherwise
			// leave the record as old as its errors, and Flink subsumes what it names.
			o.checkpoints(v.Ref, window, "")
		}
		return ""
	}
	before := st.JobStatus.State
	js.State = v1beta1.JobState(job.State)
	if job.StartTime > 0 {
		js.StartTime = MsTime(job.StartTime)
	}
	js.RunningTasks, js.TotalTasks = 0, 0
	for _, v := range job.Vertices {
		js.RunningTasks += int32(v.Tasks.Running)
		js.TotalTasks += v.Parallelism
	}
	if job.State == client.JobFailing || job.State == client.JobRestarting && !o.RescalingInPlace {
		t := metav1.NewTime(o.Now)
		js.LastFailingTime = &t
	}
	// A job marked as having ended with its checkpoints discarded that Flink shows running again
	// has its checkpoints read now: Flink's word that they are there takes the mark back.
	markedRunning := !client.IsGloballyTerminal(job.State) && !o.Job.Ledger().DiscardedUpTo(jobID).IsZero()
	if o.Look.Due("checkpoints", window, o.checkpointsLooked(window)) || job.State != client.JobRunning || firstDue || markedRunning {
		o.checkpoints(v.Ref, window, job.State)
		if firstDue && js.LastCheckpointPath != "" {
			// Jobs started together record their first checkpoints in the same polls; from a phase
			// of its own over the window, each job's later records do not come due with theirs.
			// The next look comes sooner than the window, never later, so the restore bound holds.
			o.Look.At("checkpoints", o.Look.Spread("checkpoints", window))
		}
	}
	o.OverdueInStatus()
	health, why := JudgeHealth(o.Records.WithRecorded(js), o.Now, o.CheckpointsDue())
	if health != js.Health && js.Health != "" {
		// Said when it changes, not at every poll.
		o.Announce(health != v1beta1.Green, "JobHealthChanged", fmt.Sprintf("job %s is %s (was %s): %s", jobID, health, js.Health, why))
	}
	js.Health = health
	if js.State != before && (js.State == v1beta1.JobFailed || js.State == v1beta1.JobFailing) {
		o.Announce(true, "JobFailing", fmt.Sprintf("job %s is %s: %s", jobID, js.State, o.Flink.FailureCause(v.Ref)))
	}
	return why
}

// checkpoints records the job's restarts and, when due, its newest completed checkpoint: in
// the checkpoint book, or in status with the checkpoint counters (CheckpointRecords). window is
// how often the checkpoints are looked at, state the job's state as Flink just told it ("" when it
// did not).
func (o Observe) checkpoints(ref jobs.Ref, window time.Duration, state string) {
	js := &o.Job.Status.JobStatus
	cp, err := o.Flink.Checkpoints(ref)
	if err != nil {
		// Nothing is recorded, and the recorded checkpoint ages on toward Flink subsuming it: the
		// record window is what it outlives when every look records a newer one. The next pass
		// looks again, from the recorded checkpoint's time, not a window after this look.
		o.Look.Failed("checkpoints")
		o.endedDiscarding(ref.ID, state)
		return
	}
	taken, earliest := jobs.Listed(cp)
	o.Job.Ledger().DateUndated(ref.ID, taken, earliest, o.Now)
	// Every restore after the initial one is a failover restart.
	restarts := cp.Counts.Restored
	if js.RestorePath != "" && restarts > 0 {
		restarts--
	}
	js.JobRestartCount = int32(restarts)
	path, at := o.Records.Recorded()
	c := cp.Latest.Completed
	switch {
	case c != nil && c.Discarded:
		o.discarded(ref, state, c)
	case c != nil && !client.IsGloballyTerminal(state) && state != "":
		o.stillThere(ref.ID, c)
	}
	if c != nil && !c.Discarded && c.ExternalPath != "" && CheckpointRecordDue(path, at, c.ExternalPath, c.TriggerTimestamp) &&
		!o.Records.RecordInBook(window, o.Job.Settings.CheckpointInterval(), ref.ID, c, TakenByFlink(o.Now, c.TriggerTimestamp)) {
		// Recorded in the ledger as the job's checkpoint, which jobStatus.lastCheckpoint shows.
		o.Job.Ledger().Record(v1beta1.StateCheckpoint, ref.ID, LiveCluster(o.Job.Status), c.ExternalPath, TakenByFlink(o.Now, c.TriggerTimestamp))
		js.LastCheckpointPath, js.LastCheckpointTime = c.ExternalPath, MsTime(c.TriggerTimestamp)
		js.CompletedCheckpointCount, js.FailedCheckpointCount = int32(cp.Counts.Completed), int32(cp.Counts.Failed)
	}
	if r := cp.Latest.Restored; r != nil && js.RestorePath == "" {
		js.RestorePath, js.RestoreTime = r.ExternalPath, MsTime(r.RestoreTimestamp)
	}
}

// discarded records that Flink discarded the job's checkpoints as it ended, c being the newest of
// them: Flink says so only while its JobManager knows the job. A JobManager that restarts without
// HA then forgets the job, and a restore chosen after reads the record (explorer seed 32000603: a
// job FAILED under NO_EXTERNALIZED_CHECKPOINTS, its JobManager restarted, and the job was sent
// again from its recorded checkpoint, which Flink refused). Only Flink's word on this very job
// counts, in the pass that reads its end: its checkpoint statistics say the newest is discarded,
// and its details say it ended.
func (o Observe) discarded(ref jobs.Ref, state string, c *client.Checkpoint) {
	if !client.IsGloballyTerminal(state) || !jobs.Restorable(c.ExternalPath) {
		return
	}
	o.Job.Ledger().RecordDiscarded(ref.ID, ClusterOfJob(o.Job.Status, ref.ID), c.ExternalPath, TakenByFlink(o.Now, c.TriggerTimestamp), o.Now)
}

// endedDiscarding records, when Flink did not tell the job's checkpoint statistics, that the job
// ended where the configuration it runs with discards its checkpoints (DiscardsAt), as Flink's
// details of this very job just said: a JobManager that fails those reads until it restarts
// without HA would otherwise leave the job's discarded checkpoints to the restore (attack review
// of the discard record). The newest checkpoint recorded of the job is marked, and every one
// taken up to it with it.
func (o Observe) endedDiscarding(jobID, state string) {
	if !client.IsGloballyTerminal(state) || o.DiscardsAt == nil || !o.DiscardsAt(jobID, state) {
		return
	}
	newest := jobs.Newest(CheckpointsOf(jobID, o.Job.Recorded(jobID).Completed))
	if newest == nil {
		return
	}
	o.Job.Ledger().RecordDiscarded(jobID, ClusterOfJob(o.Job.Status, jobID), newest.Path, newest.At, o.Now)
}

// stillThere judges the mark that the job's checkpoints were discarded when Flink reports the job
// not ended and its newest checkpoint, c, not discarded. One newer than the one marked takes the
// mark back: the job ran on after all, and the mark came of a word Flink took back (a JobManager's
// passing error, or a lie); kept, it would send the job back to older state while its checkpoints
// are there (attack review of the discard record). The checkpoint marked itself, reported there
// again, only disputes the mark: Flink never runs a job again that it ended, and either word may
// be the lie. Taken back, a JobManager that says so of a job it ended has the job sent from
// checkpoints that are gone (second attack review); kept, one that lied the other way has it sent
// from older state. Disputed, no restore chooses between them (Restore.Choose).
func (o Observe) stillThere(jobID string, c *client.Checkpoint) {
	upTo := o.Job.Ledger().DiscardedUpTo(jobID)
	taken := TakenByFlink(o.Now, c.TriggerTimestamp)
	switch {
	case upTo.IsZero() || !jobs.Restorable(c.ExternalPath) || taken.Before(upTo):
	case taken.After(upTo):
		o.Job.Ledger().KeepCheckpoints(jobID)
	default:
		o.Job.Ledger().DisputeDiscard(jobID, o.Now)
	}
}

// askTogether asks Flink at once for what LiveJob is about to read one after the other: the
// job, and, when they are due, the cluster's overview and the job's checkpoints. A poll that needs
// two answers then waits for the slower one, not for both in turn (at 10,000 applications a third
// of the polls read two). Whether the checkpoints are due is judged as LiveJob will judge
// it, but noted only there, once the job has answered: a job that did not has its checkpoints
// asked again at its next poll, as before, and the one call asked in vain costs no time, since it
// went out with the job's. A job Flink reports in another state than RUNNING has its checkpoints
// read after that answer, whether due or not, as before.
//
// The job is read on the pass's own goroutine (Together's first read), the others on their own,
// from values taken here: nothing but the job's read calls back into the pass.
func (o Observe) askTogether(hash, jobID string, firstDue bool, window time.Duration) {
	if jobID == "" {
		return
	}
	p := o.Flink
	reads := [3]func(){func() { p.View(hash, jobID) }}
	n := 1
	if o.clusterLookDue(hash, false) {
		url := p.URL(hash)
		reads[n] = func() { _, _ = p.OverviewAt(hash, url) }
		n++
	}
	if firstDue || o.Look.WouldBeDue("checkpoints", window, o.checkpointsLooked(window)) {
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
func (o Observe) clusterLookDue(hash string, note bool) bool {
	if o.Owned == nil {
		// A session job's cluster is its FlinkSessionCluster's to report.
		return false
	}
	// Slots and TaskManagers change rarely, and Kubernetes reports lost TaskManagers sooner.
	if o.Owned.ClusterStatus.Health != v1beta1.Green {
		return true
	}
	every := o.RecordInterval
	since := o.Look.Spread("overview/"+hash, every)
	if note {
		return o.Look.Due("overview/"+hash, every, since)
	}
	return o.Look.WouldBeDue("overview/"+hash, every, since)
}

// Cluster reads the overview of the owner's cluster with this hash into its cluster status, when it
// is due: its TaskManagers and slots, and its health by the TaskManagers the spec asks for.
func (o Observe) Cluster(hash string) {
	if !o.clusterLookDue(hash, true) {
		return
	}
	cs := &o.Owned.ClusterStatus
	ov, err := o.Flink.Overview(hash)
	if err != nil {
		cs.Health = v1beta1.Red
		return
	}
	cs.NumberOfTaskManagers = int32(ov.TaskManagers)
	cs.HealthyTaskManagers = int32(ov.TaskManagers - ov.TaskManagersBlocked)
	cs.NumberOfTaskSlots = int32(ov.SlotsTotal)
	cs.AvailableTaskSlots = int32(ov.SlotsAvailable)
	want := o.TaskManagers
	if c := o.Clusters[hash]; c != nil && c.TaskManager != nil {
		want = clusters.Replicas(c.TaskManager)
	}
	switch {
	case cs.HealthyTaskManagers >= want:
		cs.Health = v1beta1.Green
	default:
		cs.Health = v1beta1.Yellow
	}
}

// CheckpointsDue is how old the recorded checkpoint may get before the job counts as not
// checkpointing: the record interval plus three checkpoint intervals; zero without checkpointing.
func (o Observe) CheckpointsDue() time.Duration {
	interval := o.Job.Settings.CheckpointInterval()
	if interval <= 0 {
		return 0
	}
	return o.RecordWindow() + 3*interval
}

// RecordWindow is how often a running job's checkpoints are looked at, and so how often
// the newest is recorded: checkpointRecordInterval, or sooner when Flink keeps too few checkpoints
// for the recorded one to outlive the next look. The recorded checkpoint was the newest completed
// when it was recorded, up to a checkpoint interval old, and the next look comes up to a status
// poll late, and a record in the checkpoint book waits up to checkpointBookInterval for its page's
// write; Flink keeps it for (num-retained − 1) checkpoint intervals. So the window is that survival
// less an interval, a poll and the book's wait: with Flink's default of one retained, every poll.
// When the spec sets no retention the operator's clusters keep enough (flink.CheckpointsToRetain)
// for the full interval, and the JobManager Deployment says how many.
func (o Observe) RecordWindow() time.Duration {
	return o.RecordWindowOn(LiveCluster(o.Job.Status))
}

// RecordWindowOn is RecordWindow for a job on the cluster of that hash.
func (o Observe) RecordWindowOn(hash string) time.Duration {
	window := o.RecordInterval
	var annotations map[string]string
	if c := o.Clusters[hash]; c != nil && c.JobManager != nil {
		annotations = c.JobManager.Annotations
	}
	survives, ok := flink.ClusterCheckpointSurvival(o.Job.Settings.FlinkConfig, annotations)
	if !ok {
		return 0
	}
	if survives == math.MaxInt64 {
		return window
	}
	interval := o.Job.Settings.CheckpointInterval()
	return max(0, min(window, survives-interval-o.PollInterval-o.Records.Delay()))
}

// Views take the pass's view of Flink before any decision: the jobs of both deployment records
// (the stable one and the candidate). A job's checkpoints and the other jobs on a cluster (strays)
// are read, in the same view, when a decision needs them: checkpoints before a stop or a restore
// and when their record is due, strays before a submission. Calls to a JobManager that did not
// answer once fail fast for the rest of the pass.
func (o Observe) Views() {
	st := o.Job.Status
	for _, r := range []*v1beta1.DeploymentRecord{Stable(st), Candidate(st)} {
		if r != nil && r.JobID != "" {
			o.Flink.View(r.ClusterHash, r.JobID)
		}
	}
}

// DueCheckpoint records the newest checkpoint of the live job when its record is due and the
// job is not known stopped. The look is the one of a running job's (RecordWindow), at no more
// calls.
func (o Observe) DueCheckpoint() {
	if o.Job.Settings.CheckpointInterval() <= 0 {
		return
	}
	hash, jobID := LiveJob(o.Job.Status)
	if jobID == "" || o.Job.Status.JobStatus.JobID != jobID {
		return
	}
	v := o.Flink.View(hash, jobID)
	if v.Liveness == jobs.Stopped {
		return
	}
	window := o.RecordWindow()
	if o.Look.Due("checkpoints", window, o.checkpointsLooked(window)) {
		state := ""
		if v.Details != nil {
			state = v.Details.State
		}
		o.checkpoints(v.Ref, window, state)
	}
}

// candidateCheckpoints names the look at the candidate job's checkpoints (Look.Due).
const candidateCheckpoints = "candidate checkpoints"

// CandidateCheckpoint records in the ledger the newest checkpoint of a new BlueGreen
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
func (o Observe) CandidateCheckpoint() {
	c := Candidate(o.Job.Status)
	if c == nil || c.JobID == "" || o.Job.Settings.CheckpointInterval() <= 0 || !o.RecordCandidate {
		return
	}
	v := o.Flink.View(c.ClusterHash, c.JobID)
	if v.Liveness == jobs.Stopped {
		return
	}
	recorded := o.Job.Ledger().Checkpoint(c.JobID)
	since := time.Time{}
	if recorded != nil && recorded.Time != nil {
		since = recorded.Time.Time
	}
	due := o.Look.Due(candidateCheckpoints, o.RecordWindowOn(c.ClusterHash), since)
	if !due && recorded != nil {
		return
	}
	cp, err := o.Flink.Checkpoints(v.Ref)
	if err != nil {
		o.Look.Failed(candidateCheckpoints)
		return
	}
	taken, earliest := jobs.Listed(cp)
	o.Job.Ledger().DateUndated(c.JobID, taken, earliest, o.Now)
	if l := cp.Latest.Completed; l != nil && jobs.Restorable(l.ExternalPath) {
		o.Job.Ledger().Record(v1beta1.StateCheckpoint, c.JobID, c.ClusterHash, l.ExternalPath, TakenByFlink(o.Now, l.TriggerTimestamp))
	}
}

// checkpointsLooked is when the job's checkpoints were read at the latest, for a process that has
// not read them: the trigger time of the checkpoint recorded (in status or the checkpoint book,
// whichever is newer), which the read that recorded it
// followed. Reading them again a record window after that is no later than the operator that
// recorded it would have, so the recorded checkpoint still outlives the next read
// (RecordWindow); past it (a long outage) they are read at once. A job with no checkpoint
// recorded only has its restart count to show from them (one that checkpoints has them read at
// every pass until its first is recorded): its first read is spread.
func (o Observe) checkpointsLooked(every time.Duration) time.Time {
	if path, at := o.Records.Recorded(); path != "" && !at.IsZero() {
		return at
	}
	return o.Look.Spread("checkpoints", every)
}

// OverdueInStatus records in status, and in the ledger, a checkpoint noted in the book that its
// page has not taken for two flushes (CheckpointRecords.OverdueInBook).
func (o Observe) OverdueInStatus() {
	e, overdue := o.Records.OverdueInBook()
	if !overdue {
		return
	}
	o.Log.Info("checkpoint book page not written; recording the checkpoint in status", "page", checkpointbook.PageName(o.Records.Key))
	o.Job.Ledger().Record(v1beta1.StateCheckpoint, e.JobID, LiveCluster(o.Job.Status), e.Path, e.At)
	js := &o.Job.Status.JobStatus
	js.LastCheckpointPath, js.LastCheckpointTime = e.Path, MsTime(e.At.UnixMilli())
}
