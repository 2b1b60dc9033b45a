package sessionjob

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// The kind's own handlers: starting its job on the session cluster, watching it, and
// moving it when its spec or its cluster changes. Stopping it (Savepointing, Cancelling,
// Recovering) and deleting it are the handlers every job owner shares (lifecycle.StopPhases,
// lifecycle.Deleting), which read its JobOwnerStatus and job settings; see table.go.

// handleNew starts a new session job: on its cluster when that runs, from
// initialSavepointPath when one is given.
func handleNew(p *Pass) fsm.Outcome {
	if err := p.EnsureFinalizer(); err != nil {
		return fsm.Failed(err)
	}
	st := p.Job
	if why := p.Settings.RestoreWaiting; why != "" {
		p.WaitOn(why)
		return fsm.Stay(0)
	}
	st.Deployments.NextRestorePath = p.Settings.InitialSavepoint
	if p.Settings.Suspend {
		return fsm.MoveTo(fsm.PhaseSuspended, "CreatedSuspended", fmt.Sprintf("created with state Suspended; it starts from %s when Running",
			lifecycle.DescribeState(st.Deployments.NextRestorePath)))
	}
	return startSessionJob(p, v1beta1.DeploymentUpdate, "Submitting", "submitting the job")
}

// startSessionJob records the job to start as the candidate, on the cluster's running Flink
// cluster, and submits it; without a ready cluster it waits for one.
func startSessionJob(p *Pass, kind v1beta1.DeploymentKind, reason, what string) fsm.Outcome {
	hash, why := sessionClusterReady(p)
	if hash == "" {
		jobstate.ClearTarget(p.Job)
		return fsm.MoveTo(fsm.PhaseWaitingForCluster, "WaitingForCluster", fmt.Sprintf("%s: %s", what, why))
	}
	recordSessionTarget(p, kind, hash)
	return fsm.MoveTo(fsm.PhaseSubmitting, reason, fmt.Sprintf("%s on %s from %s", what,
		flink.VersionedServiceNameOf(p.ClusterOwner.Name, hash), lifecycle.DescribeState(p.Job.Deployments.NextRestorePath)))
}

// handleWaitingForCluster waits, with the job's state recorded, until its FlinkSessionCluster
// exists and runs a ready Flink cluster. Changes of the cluster wake it (the cluster-to-jobs index).
func handleWaitingForCluster(p *Pass) fsm.Outcome {
	st := p.Job
	if p.Settings.Suspend {
		jobstate.ClearTarget(st)
		return fsm.MoveTo(fsm.PhaseSuspended, "Suspended", fmt.Sprintf("spec.job.state is Suspended and no job runs; it resumes from %s",
			lifecycle.DescribeState(st.Deployments.NextRestorePath)))
	}
	hash, why := sessionClusterReady(p)
	if hash == "" {
		// Said on entering the phase and once more when the wait is long, not as an Event per pass.
		sayWaitingForCluster(p, why)
		return fsm.Stay(0)
	}
	kind := v1beta1.DeploymentUpdate
	if jobstate.Stable(st) != nil {
		kind = v1beta1.DeploymentRestart
	}
	recordSessionTarget(p, kind, hash)
	return fsm.MoveTo(fsm.PhaseSubmitting, "ClusterReady", fmt.Sprintf("session cluster %s is ready; submitting from %s",
		flink.VersionedServiceNameOf(p.ClusterOwner.Name, hash), lifecycle.DescribeState(st.Deployments.NextRestorePath)))
}

// handleSubmitting uploads the job's jar to the session cluster and runs it with the
// persisted job id from the recorded state, until it runs stable. The jar is deleted from the
// cluster then: a restart uploads it again.
func handleSubmitting(p *Pass) fsm.Outcome {
	st := p.Job
	c := jobstate.Candidate(st)
	if c == nil {
		return fsm.MoveTo(fsm.PhaseUpdating, "NothingToSubmit", "no submission is in progress; deploying the spec")
	}
	if live, why := sessionClusterReady(p); c.ClusterHash != live && (c.JobID == "" || p.Clusters[c.ClusterHash].JobManagerGone() && !keepsJobs(p, c.ClusterHash)) {
		// The cluster recorded for the job is gone or replaced before the job ran there. What the
		// job completed there (as recorded) is newer than the state it started from.
		if c.JobID != "" {
			if p := p.JobState().NewestStatePath(c.JobID); p != "" {
				st.Deployments.NextRestorePath = p
			}
		}
		if live == "" {
			return fsm.MoveTo(fsm.PhaseWaitingForCluster, "WaitingForCluster", "the session cluster went away before the job ran: "+why)
		}
		jobstate.ForgetJob(c)
		c.ClusterHash, c.JarID = live, ""
		return fsm.PersistThenContinue()
	}
	if c.JarID == "" && (c.JobID == "" || p.Flink().View(c.ClusterHash, c.JobID).Liveness == jobs.Stopped) {
		return uploadJar(p, c)
	}
	if wait := p.RedeployFromNamedSavepoint(c); wait != nil {
		return *wait
	}
	params := sessionJobParams(c)
	job := p.RunJob(c, params, st.Deployments.NextRestorePath)
	switch {
	case job.JarMissing:
		p.Event(true, "JarMissing", fmt.Sprintf("the session cluster no longer has jar %s; uploading it again", c.JarID))
		c.JarID = ""
		return fsm.PersistThenContinue()
	case job.Wait != nil:
		noteSlotWait(p, c, waitingForSlots(p, c))
		return *job.Wait
	case job.Failure != "":
		deleteUploadedJar(p, c)
		goOnFromFailedJob(p, c)
		return p.DeployFailed("DeployFailed", job.Failure)
	}
	deleteUploadedJar(p, c)
	restored := st.Deployments.NextRestorePath
	p.Promote(restored)
	p.Machine.FailedDeployHash = ""
	p.StartedJob(params, restored)
	return fsm.MoveTo(fsm.PhaseRunning, "JobRunning", fmt.Sprintf("job %s running on %s, %s",
		c.JobID, flink.VersionedServiceNameOf(p.ClusterOwner.Name, c.ClusterHash), jobs.RestoredFrom(restored)))
}

// goOnFromFailedJob makes what is submitted next go on from the newest checkpoint that a job which
// ran and FAILED before it ran stable completed and Flink kept, not from the older state it started
// from: giving up never discards state Flink completed (explorer seed 9000160: its checkpoint,
// recorded in Submitting, was passed over by the next spec's job, which started without state).
func goOnFromFailedJob(p *Pass, c *v1beta1.DeploymentRecord) {
	if c.JobID == "" {
		return
	}
	v := p.Flink().View(c.ClusterHash, c.JobID)
	if v.Details == nil {
		return
	}
	path, gone := p.AttemptCheckpoint(v, c.ClusterHash)
	if path == "" && !gone {
		path = p.JobState().NewestStatePath(c.JobID)
	}
	if path != "" {
		p.Job.Deployments.NextRestorePath = path
	}
}

// handleRunning watches the job and starts what the spec or the cluster asks for: an
// update of this job only, a suspend, a move to the session cluster's new Flink cluster, or a
// restart from the job's newest state when the job or its cluster was lost.
func handleRunning(p *Pass) fsm.Outcome {
	st := p.Job
	if p.Settings.Suspend {
		// As in handleRunning: the pass that leaves Running records the newest checkpoint first.
		p.RecordDueCheckpoint()
		return p.SuspendJob()
	}
	hash, jobID := jobstate.LiveJob(st)
	if jobID == "" {
		return startSessionJob(p, v1beta1.DeploymentUpdate, "Submitting", "no job is recorded; submitting the job")
	}
	v := p.Flink().View(hash, jobID)
	if v.Rerun != "" {
		return p.FollowRerun(v)
	}
	live, _ := sessionClusterReady(p)
	specChanged := p.Hash != jobstate.RunningSpecHash(st) && p.Hash != p.Machine.FailedDeployHash
	moved := live != "" && live != hash && v.Liveness == jobs.Alive
	if specChanged || moved {
		p.RecordDueCheckpoint()
	}
	switch {
	case v.Liveness == jobs.Unknown && p.Clusters[hash].JobManagerGone() && keepsJobs(p, hash):
		// HA brings the job back with the JobManager the session cluster creates again (explorer
		// seed 170083: taken for lost, the job was forgotten and ran on after its object was gone).
		return waitForHAJobManager(p, hash, jobID)
	case v.Liveness == jobs.Stopped && v.Details == nil:
		return sessionJobLost(p, v)
	case v.State() == client.JobFailed:
		return sessionJobFailed(p, v)
	case specChanged:
		return fsm.MoveTo(fsm.PhaseUpdating, "SpecChanged", fmt.Sprintf("job spec changed (%s -> %s)", jobstate.RunningSpecHash(st), p.Hash))
	case moved:
		return fsm.MoveTo(fsm.PhaseUpdating, "ClusterChanged", fmt.Sprintf("FlinkSessionCluster %s now runs Flink cluster %s; moving job %s there (upgradeMode %s)",
			p.ClusterName, live, jobID, p.Settings.UpgradeMode))
	}
	p.ObserveLiveJob()
	if out, busy := p.SavepointOnDemand(); busy {
		return p.WakeForPeriodicSnapshots(out)
	}
	return p.WakeForPeriodicSnapshots(fsm.Stay(0))
}

// sessionJobLost restarts a job that is gone (its JobManager answers that it does not know it, or the
// session cluster's JobManager is gone) from the newest state recorded, on the session cluster as
// soon as it runs. Without usable state the job is not started again: DeployFailed says why.
func sessionJobLost(p *Pass, v *jobs.View) fsm.Outcome {
	st := p.Job
	p.Event(true, "JobLost", fmt.Sprintf("job %s is lost: %s", v.Ref.ID, v.Evidence))
	choice := p.ChooseRestore(v.Ref.ID, nil)
	if choice.InDoubt {
		// The lost job stays the object's job: whatever replaces it asks the restore rule again,
		// and starts from nothing older than the savepoint in doubt.
		return p.DeployFailed("JobLost", fmt.Sprintf("job %s is lost (%s) and %s; %s", v.Ref.ID, v.Evidence, choice.Problem, p.RestoreByHand()))
	}
	if choice.Problem != "" {
		jobstate.StopRecorded(st)
		return p.DeployFailed("JobLost", fmt.Sprintf("job %s is lost (%s) and %s; restore it by hand (spec.job.initialSavepointPath "+
			"on a new FlinkSessionJob)", v.Ref.ID, v.Evidence, choice.Problem))
	}
	p.UseRestore(choice)
	jobstate.StopRecorded(st)
	return startSessionJob(p, v1beta1.DeploymentRestart, "JobLost", fmt.Sprintf("job %s is lost (%s); restarting it", v.Ref.ID, v.Evidence))
}

// sessionJobFailed ends Running for a job that FAILED: with spec.job.restartFailedJob it starts again
// from its newest state, as a lost job does; without it the FlinkSessionJob rests in DeployFailed,
// saying so, until the spec changes or restartFailedJob is set.
func sessionJobFailed(p *Pass, v *jobs.View) fsm.Outcome {
	st := p.Job
	what := fmt.Sprintf("job %s FAILED: %s", v.Ref.ID, p.Flink().FailureCause(v.Ref))
	if !p.Settings.RestartFailedJob {
		st.JobStatus.State = v1beta1.JobFailed
		return p.DeployFailed("JobFailed", what+"; set spec.job.restartFailedJob to start it again from its newest state, or change the spec")
	}
	choice := p.ChooseRestore(v.Ref.ID, &v.Ref)
	if choice.Unanswered != nil {
		return fsm.Failed(choice.Unanswered)
	}
	if choice.Problem != "" {
		return p.DeployFailed("RecoveryFailed", fmt.Sprintf("%s, and %s; restore it by hand (spec.job.initialSavepointPath "+
			"on a new FlinkSessionJob), or set spec.job.fallbackWithoutState", what, choice.Problem))
	}
	p.UseRestore(choice)
	jobstate.StopRecorded(st)
	return startSessionJob(p, v1beta1.DeploymentRestart, "RestartingFailedJob", what+"; restartFailedJob is set, starting it again")
}

// handleUpdating stops the job per its upgradeMode, then submits the new spec from the
// state it stopped with. Only this job is touched: the cluster and its other jobs run on.
func handleUpdating(p *Pass) fsm.Outcome {
	st := p.Job
	if p.Settings.Suspend {
		return p.SuspendJob()
	}
	hash, jobID := jobstate.LiveJob(st)
	if jobID == "" {
		return startSessionJob(p, v1beta1.DeploymentUpdate, "Submitting", "submitting the job")
	}
	target := hash
	if live, _ := sessionClusterReady(p); live != "" {
		target = live
	}
	recordSessionTarget(p, v1beta1.DeploymentUpdate, target)
	return p.StopLiveJob("StoppingJob", "updating the job")
}

// handleSuspended rests without a job until the job is wanted Running again, then submits
// it from the state recorded when it was suspended.
func handleSuspended(p *Pass) fsm.Outcome {
	if !p.Settings.Suspend {
		return fsm.MoveTo(fsm.PhaseUpdating, "Resuming", fmt.Sprintf("spec.job.state is Running; resuming from %s",
			lifecycle.DescribeState(p.Job.Deployments.NextRestorePath)))
	}
	return fsm.Stay(fsm.UntilChanged)
}

// handleDeployFailed rests after a failed submission or stop, watching whatever job still
// runs, until the spec changes.
func handleDeployFailed(p *Pass) fsm.Outcome {
	st := p.Job
	if p.Settings.Suspend {
		return p.SuspendJob()
	}
	hash, jobID := jobstate.LiveJob(st)
	if jobID != "" && p.Settings.RestartFailedJob {
		if v := p.Flink().View(hash, jobID); v.State() == client.JobFailed {
			return sessionJobFailed(p, v)
		}
	}
	switch {
	case jobID != "" && p.Hash == jobstate.RunningSpecHash(st) && p.Hash != p.Machine.FailedDeployHash:
		p.Machine.FailedDeployHash = ""
		return fsm.MoveTo(fsm.PhaseRunning, "SpecRestored", "spec is back to the running one")
	case p.Hash != p.Machine.FailedDeployHash && p.Hash != jobstate.RunningSpecHash(st):
		return fsm.MoveTo(fsm.PhaseUpdating, "SpecChanged", fmt.Sprintf("job spec changed (%s); deploying", p.Hash))
	}
	p.ObserveLiveJob()
	return fsm.Stay(0)
}

// sessionClusterReady is the Flink cluster (hash) of the job's FlinkSessionCluster that jobs are
// submitted to, when it runs and is ready; otherwise "" and why not.
func sessionClusterReady(p *Pass) (hash, why string) {
	c := p.Cluster
	name := p.ClusterName
	switch {
	case c == nil:
		return "", fmt.Sprintf("FlinkSessionCluster %s does not exist", name)
	case c.DeletionTimestamp != nil:
		return "", fmt.Sprintf("FlinkSessionCluster %s is being deleted", name)
	case c.Status.DeployHash == "":
		return "", fmt.Sprintf("FlinkSessionCluster %s has not started a Flink cluster yet (phase %s)", name, c.Status.Phase)
	case !p.Clusters[c.Status.DeployHash].Ready():
		return "", fmt.Sprintf("Flink cluster %s of FlinkSessionCluster %s is not ready", c.Status.DeployHash, name)
	}
	return c.Status.DeployHash, ""
}

// keepsJobs tells whether the session cluster's JobManager that is gone comes back with the jobs
// it ran: the cluster runs with Flink HA and is still the session cluster's, under the same hash,
// or Flink's HA data of that cluster is left, from which any JobManager created again for it (the
// session cluster's spec going back to it) recovers them. A job submitted there is then not gone
// with its JobManager (explorer seed 200040: a session job took it for gone, rested Suspended, and
// HA ran it on unseen, and beside the next one; seed 11000067: the session cluster's spec turned HA
// off and back on while the old cluster's JobManager was gone, and the job HA recovered there ran
// beside the one submitted on the cluster in between).
func keepsJobs(p *Pass, hash string) bool {
	return clusters.SessionKeepsJobs(p.Cluster, hash, p.ClusterHAConfigMaps)
}

// waitForHAJobManager waits for the JobManager of the job's cluster, which Flink HA brings back
// with the job. A cluster the FlinkSessionCluster no longer runs gets no JobManager again unless
// its spec goes back to it: a Warning says so once, with the ways out (attack review s8: the job
// waited for hours, silently).
func waitForHAJobManager(p *Pass, hash, jobID string) fsm.Outcome {
	name := flink.VersionedServiceNameOf(p.ClusterOwner.Name, hash)
	msg := fmt.Sprintf("the JobManager of %s is gone; Flink HA recovers job %s when it is back", name, jobID)
	if c := p.Cluster; c != nil && c.Status.DeployHash != hash && c.Status.UpdatingHash != hash {
		msg += fmt.Sprintf(", but FlinkSessionCluster %s no longer runs %s and does not create its JobManager again: "+
			"change its spec back to bring the job back, or delete the Flink HA ConfigMaps of %s to start the job again "+
			"from its recorded state", p.ClusterName, name, name)
		if p.Machine.Reason != "waiting: "+msg {
			p.Event(true, "JobManagerNotComingBack", msg)
		}
	}
	p.WaitOn(msg)
	return fsm.Stay(0)
}

// jobManagerHABringsBack says, for a session job whose job's JobManager is gone while Flink HA brings
// it back with the job (keepsJobs), what it waits for; "" otherwise.
func jobManagerHABringsBack(p *Pass) string {
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(p.Job), jobstate.Candidate(p.Job)} {
		if r != nil && r.JobID != "" && p.Clusters[r.ClusterHash].JobManagerGone() && keepsJobs(p, r.ClusterHash) {
			return fmt.Sprintf("the JobManager of %s is gone; Flink HA recovers job %s when it is back",
				flink.VersionedServiceNameOf(p.ClusterOwner.Name, r.ClusterHash), r.JobID)
		}
	}
	return ""
}

// recordSessionTarget records the job spec about to run as the candidate, on the given cluster,
// before anything is done for it.
func recordSessionTarget(p *Pass, kind v1beta1.DeploymentKind, hash string) {
	b, _ := json.Marshal(p.Object.Spec)
	p.Job.Deployments.Candidate = &v1beta1.DeploymentRecord{Kind: kind, SpecHash: p.Hash, Spec: string(b), ClusterHash: hash}
}

// recordedSessionSpec is the session job spec a record was made for.
func recordedSessionSpec(rec *v1beta1.DeploymentRecord) v1beta1.FlinkSessionJobSpec {
	var spec v1beta1.FlinkSessionJobSpec
	_ = json.Unmarshal([]byte(rec.Spec), &spec)
	return spec
}

// sessionJobParams are what the record's job is submitted with: the uploaded jar, its arguments as
// a list (none is re-split) and the job's own Flink configuration.
func sessionJobParams(rec *v1beta1.DeploymentRecord) jobstate.JobParams {
	spec := recordedSessionSpec(rec)
	j := spec.Job
	p := jobstate.JobParams{JarName: rec.JarID, EntryClass: j.EntryClass, Args: j.Args, AllowNonRestoredState: j.AllowNonRestoredState,
		Uploaded: !strings.HasPrefix(j.JarURI, "local://")}
	if j.Parallelism != nil {
		p.Parallelism = *j.Parallelism
	}
	if conf, err := spec.FlinkConfig.Strings(); err == nil && len(conf) > 0 {
		p.FlinkConfig = conf
	}
	return p
}

// waitingForSlots says why a submitted job does not run yet when that is a lack of task slots on the
// session cluster: it then waits, it is not failed. "" when that is not the reason.
func waitingForSlots(p *Pass, c *v1beta1.DeploymentRecord) string {
	if c.JobID == "" {
		return ""
	}
	v := p.Flink().View(c.ClusterHash, c.JobID)
	if v.Liveness != jobs.Alive || jobs.AllTasksRunning(v.Details) {
		return ""
	}
	var needs int32
	for _, vx := range v.Details.Vertices {
		needs = max(needs, vx.Parallelism)
	}
	ov, err := p.Flink().Overview(c.ClusterHash)
	if err != nil || int32(ov.SlotsAvailable) >= needs {
		return ""
	}
	return fmt.Sprintf("job %s waits for task slots: it needs %d, the session cluster has %d of %d free", c.JobID, needs, ov.SlotsAvailable, ov.SlotsTotal)
}
