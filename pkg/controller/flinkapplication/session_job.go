package flinkapplication

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// A FlinkSessionJob's own handlers: starting its job on the session cluster, watching it, and
// moving it when its spec or its cluster changes. Stopping it (Savepointing, Cancelling,
// Recovering) and deleting it are the handlers every job owner shares (lifecycle.StopPhases,
// lifecycle.Deleting), which read its JobOwnerStatus and jobSettings; see session_table.go.

// sessionState is what one pass of a session kind knows beyond the object itself.
type sessionState struct {
	// ClusterName is the FlinkSessionCluster a job names, or the cluster being reconciled.
	ClusterName string
	// Cluster is that FlinkSessionCluster; nil when it does not exist.
	Cluster *v1beta1.FlinkSessionCluster
	// Job is the FlinkSessionJob being reconciled, in its own shape; nil for a cluster.
	Job *v1beta1.FlinkSessionJob
	// Jobs are the FlinkSessionJobs that name the cluster being reconciled.
	Jobs []*v1beta1.FlinkSessionJob
	// OtherShardJobs are the FlinkSessionJobs of other shards that name the cluster, read only
	// when the cluster is about to remove a Flink cluster or its finalizer (kindpass/shard.go).
	OtherShardJobs []*v1beta1.FlinkSessionJob
	// ClusterHAConfigMaps names, for a session job, the ConfigMaps Flink's Kubernetes HA services
	// left of its FlinkSessionCluster's Flink clusters, by cluster hash (haKeepsJobs).
	ClusterHAConfigMaps map[string][]string
}

// handleSessionJobNew starts a new session job: on its cluster when that runs, from
// initialSavepointPath when one is given.
func handleSessionJobNew(rc *Context) Outcome {
	if err := rc.EnsureFinalizer(); err != nil {
		return failed(err)
	}
	st := rc.Job
	if why := rc.Settings.RestoreWaiting; why != "" {
		rc.WaitOn(why)
		return stay(0)
	}
	st.Deployments.NextRestorePath = rc.Settings.InitialSavepoint
	if rc.Settings.Suspend {
		return moveTo(PhaseSuspended, "CreatedSuspended", fmt.Sprintf("created with state Suspended; it starts from %s when Running",
			lifecycle.DescribeState(st.Deployments.NextRestorePath)))
	}
	return startSessionJob(rc, v1beta1.DeploymentUpdate, "Submitting", "submitting the job")
}

// startSessionJob records the job to start as the candidate, on the cluster's running Flink
// cluster, and submits it; without a ready cluster it waits for one.
func startSessionJob(rc *Context, kind v1beta1.DeploymentKind, reason, what string) Outcome {
	hash, why := sessionClusterReady(rc)
	if hash == "" {
		jobstate.ClearTarget(rc.Job)
		return moveTo(PhaseWaitingForCluster, "WaitingForCluster", fmt.Sprintf("%s: %s", what, why))
	}
	recordSessionTarget(rc, kind, hash)
	return moveTo(PhaseSubmitting, reason, fmt.Sprintf("%s on %s from %s", what,
		flink.VersionedServiceNameOf(rc.ClusterOwner.Name, hash), lifecycle.DescribeState(rc.Job.Deployments.NextRestorePath)))
}

// handleWaitingForCluster waits, with the job's state recorded, until its FlinkSessionCluster
// exists and runs a ready Flink cluster. Changes of the cluster wake it (the cluster-to-jobs index).
func handleWaitingForCluster(rc *Context) Outcome {
	st := rc.Job
	if rc.Settings.Suspend {
		jobstate.ClearTarget(st)
		return moveTo(PhaseSuspended, "Suspended", fmt.Sprintf("spec.job.state is Suspended and no job runs; it resumes from %s",
			lifecycle.DescribeState(st.Deployments.NextRestorePath)))
	}
	hash, why := sessionClusterReady(rc)
	if hash == "" {
		// Said on entering the phase and once more when the wait is long, not as an Event per pass.
		sayWaitingForCluster(rc, why)
		return stay(0)
	}
	kind := v1beta1.DeploymentUpdate
	if jobstate.Stable(st) != nil {
		kind = v1beta1.DeploymentRestart
	}
	recordSessionTarget(rc, kind, hash)
	return moveTo(PhaseSubmitting, "ClusterReady", fmt.Sprintf("session cluster %s is ready; submitting from %s",
		flink.VersionedServiceNameOf(rc.ClusterOwner.Name, hash), lifecycle.DescribeState(st.Deployments.NextRestorePath)))
}

// handleSessionSubmitting uploads the job's jar to the session cluster and runs it with the
// persisted job id from the recorded state, until it runs stable. The jar is deleted from the
// cluster then: a restart uploads it again.
func handleSessionSubmitting(rc *Context) Outcome {
	st := rc.Job
	c := jobstate.Candidate(st)
	if c == nil {
		return moveTo(PhaseUpdating, "NothingToSubmit", "no submission is in progress; deploying the spec")
	}
	if live, why := sessionClusterReady(rc); c.ClusterHash != live && (c.JobID == "" || rc.Clusters[c.ClusterHash].JobManagerGone() && !haKeepsJobs(rc, c.ClusterHash)) {
		// The cluster recorded for the job is gone or replaced before the job ran there. What the
		// job completed there (as recorded) is newer than the state it started from.
		if c.JobID != "" {
			if p := rc.JobState().NewestStatePath(c.JobID); p != "" {
				st.Deployments.NextRestorePath = p
			}
		}
		if live == "" {
			return moveTo(PhaseWaitingForCluster, "WaitingForCluster", "the session cluster went away before the job ran: "+why)
		}
		jobstate.ForgetJob(c)
		c.ClusterHash, c.JarID = live, ""
		return persistThenContinue()
	}
	if c.JarID == "" && (c.JobID == "" || rc.Flink().View(c.ClusterHash, c.JobID).Liveness == jobs.Stopped) {
		return uploadJar(rc, c)
	}
	if wait := rc.RedeployFromNamedSavepoint(c); wait != nil {
		return *wait
	}
	params := sessionJobParams(c)
	job := rc.RunJob(c, params, st.Deployments.NextRestorePath)
	switch {
	case job.JarMissing:
		rc.Event(true, "JarMissing", fmt.Sprintf("the session cluster no longer has jar %s; uploading it again", c.JarID))
		c.JarID = ""
		return persistThenContinue()
	case job.Wait != nil:
		noteSlotWait(rc, c, waitingForSlots(rc, c))
		return *job.Wait
	case job.Failure != "":
		deleteUploadedJar(rc, c)
		goOnFromFailedJob(rc, c)
		return rc.DeployFailed("DeployFailed", job.Failure)
	}
	deleteUploadedJar(rc, c)
	restored := st.Deployments.NextRestorePath
	rc.Promote(restored)
	rc.Machine.FailedDeployHash = ""
	rc.StartedJob(params, restored)
	return moveTo(PhaseRunning, "JobRunning", fmt.Sprintf("job %s running on %s, %s",
		c.JobID, flink.VersionedServiceNameOf(rc.ClusterOwner.Name, c.ClusterHash), jobs.RestoredFrom(restored)))
}

// goOnFromFailedJob makes what is submitted next go on from the newest checkpoint that a job which
// ran and FAILED before it ran stable completed and Flink kept, not from the older state it started
// from: giving up never discards state Flink completed (explorer seed 9000160: its checkpoint,
// recorded in Submitting, was passed over by the next spec's job, which started without state).
func goOnFromFailedJob(rc *Context, c *v1beta1.DeploymentRecord) {
	if c.JobID == "" {
		return
	}
	v := rc.Flink().View(c.ClusterHash, c.JobID)
	if v.Details == nil {
		return
	}
	path, gone := rc.AttemptCheckpoint(v, c.ClusterHash)
	if path == "" && !gone {
		path = rc.JobState().NewestStatePath(c.JobID)
	}
	if path != "" {
		rc.Job.Deployments.NextRestorePath = path
	}
}

// handleSessionJobRunning watches the job and starts what the spec or the cluster asks for: an
// update of this job only, a suspend, a move to the session cluster's new Flink cluster, or a
// restart from the job's newest state when the job or its cluster was lost.
func handleSessionJobRunning(rc *Context) Outcome {
	st := rc.Job
	if rc.Settings.Suspend {
		// As in handleRunning: the pass that leaves Running records the newest checkpoint first.
		rc.RecordDueCheckpoint()
		return rc.SuspendJob()
	}
	hash, jobID := jobstate.LiveJob(st)
	if jobID == "" {
		return startSessionJob(rc, v1beta1.DeploymentUpdate, "Submitting", "no job is recorded; submitting the job")
	}
	v := rc.Flink().View(hash, jobID)
	if v.Rerun != "" {
		return rc.FollowRerun(v)
	}
	live, _ := sessionClusterReady(rc)
	specChanged := rc.Hash != jobstate.RunningSpecHash(st) && rc.Hash != rc.Machine.FailedDeployHash
	moved := live != "" && live != hash && v.Liveness == jobs.Alive
	if specChanged || moved {
		rc.RecordDueCheckpoint()
	}
	switch {
	case v.Liveness == jobs.Unknown && rc.Clusters[hash].JobManagerGone() && haKeepsJobs(rc, hash):
		// HA brings the job back with the JobManager the session cluster creates again (explorer
		// seed 170083: taken for lost, the job was forgotten and ran on after its object was gone).
		return waitForHAJobManager(rc, hash, jobID)
	case v.Liveness == jobs.Stopped && v.Details == nil:
		return sessionJobLost(rc, v)
	case v.State() == client.JobFailed:
		return sessionJobFailed(rc, v)
	case specChanged:
		return moveTo(PhaseUpdating, "SpecChanged", fmt.Sprintf("job spec changed (%s -> %s)", jobstate.RunningSpecHash(st), rc.Hash))
	case moved:
		return moveTo(PhaseUpdating, "ClusterChanged", fmt.Sprintf("FlinkSessionCluster %s now runs Flink cluster %s; moving job %s there (upgradeMode %s)",
			rc.session.ClusterName, live, jobID, rc.Settings.UpgradeMode))
	}
	rc.ObserveLiveJob()
	if out, busy := rc.SavepointOnDemand(); busy {
		return rc.WakeForPeriodicSnapshots(out)
	}
	return rc.WakeForPeriodicSnapshots(stay(0))
}

// sessionJobLost restarts a job that is gone (its JobManager answers that it does not know it, or the
// session cluster's JobManager is gone) from the newest state recorded, on the session cluster as
// soon as it runs. Without usable state the job is not started again: DeployFailed says why.
func sessionJobLost(rc *Context, v *jobs.View) Outcome {
	st := rc.Job
	rc.Event(true, "JobLost", fmt.Sprintf("job %s is lost: %s", v.Ref.ID, v.Evidence))
	choice := rc.ChooseRestore(v.Ref.ID, nil)
	if choice.InDoubt {
		// The lost job stays the object's job: whatever replaces it asks the restore rule again,
		// and starts from nothing older than the savepoint in doubt.
		return rc.DeployFailed("JobLost", fmt.Sprintf("job %s is lost (%s) and %s; %s", v.Ref.ID, v.Evidence, choice.Problem, rc.RestoreByHand()))
	}
	if choice.Problem != "" {
		jobstate.StopRecorded(st)
		return rc.DeployFailed("JobLost", fmt.Sprintf("job %s is lost (%s) and %s; restore it by hand (spec.job.initialSavepointPath "+
			"on a new FlinkSessionJob)", v.Ref.ID, v.Evidence, choice.Problem))
	}
	rc.UseRestore(choice)
	jobstate.StopRecorded(st)
	return startSessionJob(rc, v1beta1.DeploymentRestart, "JobLost", fmt.Sprintf("job %s is lost (%s); restarting it", v.Ref.ID, v.Evidence))
}

// sessionJobFailed ends Running for a job that FAILED: with spec.job.restartFailedJob it starts again
// from its newest state, as a lost job does; without it the FlinkSessionJob rests in DeployFailed,
// saying so, until the spec changes or restartFailedJob is set.
func sessionJobFailed(rc *Context, v *jobs.View) Outcome {
	st := rc.Job
	what := fmt.Sprintf("job %s FAILED: %s", v.Ref.ID, rc.Flink().FailureCause(v.Ref))
	if !rc.Settings.RestartFailedJob {
		st.JobStatus.State = v1beta1.JobFailed
		return rc.DeployFailed("JobFailed", what+"; set spec.job.restartFailedJob to start it again from its newest state, or change the spec")
	}
	choice := rc.ChooseRestore(v.Ref.ID, &v.Ref)
	if choice.Unanswered != nil {
		return failed(choice.Unanswered)
	}
	if choice.Problem != "" {
		return rc.DeployFailed("RecoveryFailed", fmt.Sprintf("%s, and %s; restore it by hand (spec.job.initialSavepointPath "+
			"on a new FlinkSessionJob), or set spec.job.fallbackWithoutState", what, choice.Problem))
	}
	rc.UseRestore(choice)
	jobstate.StopRecorded(st)
	return startSessionJob(rc, v1beta1.DeploymentRestart, "RestartingFailedJob", what+"; restartFailedJob is set, starting it again")
}

// handleSessionJobUpdating stops the job per its upgradeMode, then submits the new spec from the
// state it stopped with. Only this job is touched: the cluster and its other jobs run on.
func handleSessionJobUpdating(rc *Context) Outcome {
	st := rc.Job
	if rc.Settings.Suspend {
		return rc.SuspendJob()
	}
	hash, jobID := jobstate.LiveJob(st)
	if jobID == "" {
		return startSessionJob(rc, v1beta1.DeploymentUpdate, "Submitting", "submitting the job")
	}
	target := hash
	if live, _ := sessionClusterReady(rc); live != "" {
		target = live
	}
	recordSessionTarget(rc, v1beta1.DeploymentUpdate, target)
	return rc.StopLiveJob("StoppingJob", "updating the job")
}

// handleSessionJobSuspended rests without a job until the job is wanted Running again, then submits
// it from the state recorded when it was suspended.
func handleSessionJobSuspended(rc *Context) Outcome {
	if !rc.Settings.Suspend {
		return moveTo(PhaseUpdating, "Resuming", fmt.Sprintf("spec.job.state is Running; resuming from %s",
			lifecycle.DescribeState(rc.Job.Deployments.NextRestorePath)))
	}
	return stay(untilChanged)
}

// handleSessionJobDeployFailed rests after a failed submission or stop, watching whatever job still
// runs, until the spec changes.
func handleSessionJobDeployFailed(rc *Context) Outcome {
	st := rc.Job
	if rc.Settings.Suspend {
		return rc.SuspendJob()
	}
	hash, jobID := jobstate.LiveJob(st)
	if jobID != "" && rc.Settings.RestartFailedJob {
		if v := rc.Flink().View(hash, jobID); v.State() == client.JobFailed {
			return sessionJobFailed(rc, v)
		}
	}
	switch {
	case jobID != "" && rc.Hash == jobstate.RunningSpecHash(st) && rc.Hash != rc.Machine.FailedDeployHash:
		rc.Machine.FailedDeployHash = ""
		return moveTo(PhaseRunning, "SpecRestored", "spec is back to the running one")
	case rc.Hash != rc.Machine.FailedDeployHash && rc.Hash != jobstate.RunningSpecHash(st):
		return moveTo(PhaseUpdating, "SpecChanged", fmt.Sprintf("job spec changed (%s); deploying", rc.Hash))
	}
	rc.ObserveLiveJob()
	return stay(0)
}

// sessionClusterReady is the Flink cluster (hash) of the job's FlinkSessionCluster that jobs are
// submitted to, when it runs and is ready; otherwise "" and why not.
func sessionClusterReady(rc *Context) (hash, why string) {
	c := rc.session.Cluster
	name := rc.session.ClusterName
	switch {
	case c == nil:
		return "", fmt.Sprintf("FlinkSessionCluster %s does not exist", name)
	case c.DeletionTimestamp != nil:
		return "", fmt.Sprintf("FlinkSessionCluster %s is being deleted", name)
	case c.Status.DeployHash == "":
		return "", fmt.Sprintf("FlinkSessionCluster %s has not started a Flink cluster yet (phase %s)", name, c.Status.Phase)
	case !rc.Clusters[c.Status.DeployHash].Ready():
		return "", fmt.Sprintf("Flink cluster %s of FlinkSessionCluster %s is not ready", c.Status.DeployHash, name)
	}
	return c.Status.DeployHash, ""
}

// haKeepsJobs tells whether the session cluster's JobManager that is gone comes back with the jobs
// it ran: the cluster runs with Flink HA and is still the session cluster's, under the same hash,
// or Flink's HA data of that cluster is left, from which any JobManager created again for it (the
// session cluster's spec going back to it) recovers them. A job submitted there is then not gone
// with its JobManager (explorer seed 200040: a session job took it for gone, rested Suspended, and
// HA ran it on unseen, and beside the next one; seed 11000067: the session cluster's spec turned HA
// off and back on while the old cluster's JobManager was gone, and the job HA recovered there ran
// beside the one submitted on the cluster in between).
func haKeepsJobs(rc *Context, hash string) bool {
	return clusters.SessionKeepsJobs(rc.session.Cluster, hash, rc.session.ClusterHAConfigMaps)
}

// waitForHAJobManager waits for the JobManager of the job's cluster, which Flink HA brings back
// with the job. A cluster the FlinkSessionCluster no longer runs gets no JobManager again unless
// its spec goes back to it: a Warning says so once, with the ways out (attack review s8: the job
// waited for hours, silently).
func waitForHAJobManager(rc *Context, hash, jobID string) Outcome {
	name := flink.VersionedServiceNameOf(rc.ClusterOwner.Name, hash)
	msg := fmt.Sprintf("the JobManager of %s is gone; Flink HA recovers job %s when it is back", name, jobID)
	if c := rc.session.Cluster; c != nil && c.Status.DeployHash != hash && c.Status.UpdatingHash != hash {
		msg += fmt.Sprintf(", but FlinkSessionCluster %s no longer runs %s and does not create its JobManager again: "+
			"change its spec back to bring the job back, or delete the Flink HA ConfigMaps of %s to start the job again "+
			"from its recorded state", rc.session.ClusterName, name, name)
		if rc.Machine.Reason != "waiting: "+msg {
			rc.Event(true, "JobManagerNotComingBack", msg)
		}
	}
	rc.WaitOn(msg)
	return stay(0)
}

// jobManagerHABringsBack says, for a session job whose job's JobManager is gone while Flink HA brings
// it back with the job (haKeepsJobs), what it waits for; "" otherwise.
func jobManagerHABringsBack(rc *Context) string {
	if !isSessionJob(rc) {
		return ""
	}
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(rc.Job), jobstate.Candidate(rc.Job)} {
		if r != nil && r.JobID != "" && rc.Clusters[r.ClusterHash].JobManagerGone() && haKeepsJobs(rc, r.ClusterHash) {
			return fmt.Sprintf("the JobManager of %s is gone; Flink HA recovers job %s when it is back",
				flink.VersionedServiceNameOf(rc.ClusterOwner.Name, r.ClusterHash), r.JobID)
		}
	}
	return ""
}

// recordSessionTarget records the job spec about to run as the candidate, on the given cluster,
// before anything is done for it.
func recordSessionTarget(rc *Context, kind v1beta1.DeploymentKind, hash string) {
	b, _ := json.Marshal(rc.session.Job.Spec)
	rc.Job.Deployments.Candidate = &v1beta1.DeploymentRecord{Kind: kind, SpecHash: rc.Hash, Spec: string(b), ClusterHash: hash}
}

// recordedSessionSpec is the session job spec a record was made for.
func recordedSessionSpec(rec *v1beta1.DeploymentRecord) v1beta1.FlinkSessionJobSpec {
	var spec v1beta1.FlinkSessionJobSpec
	_ = json.Unmarshal([]byte(rec.Spec), &spec)
	return spec
}

// sessionJobParams are what the record's job is submitted with: the uploaded jar, its arguments as
// a list (none is re-split) and the job's own Flink configuration.
func sessionJobParams(rec *v1beta1.DeploymentRecord) jobParams {
	spec := recordedSessionSpec(rec)
	j := spec.Job
	p := jobParams{JarName: rec.JarID, EntryClass: j.EntryClass, Args: j.Args, AllowNonRestoredState: j.AllowNonRestoredState,
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
func waitingForSlots(rc *Context, c *v1beta1.DeploymentRecord) string {
	if c.JobID == "" {
		return ""
	}
	v := rc.Flink().View(c.ClusterHash, c.JobID)
	if v.Liveness != jobs.Alive || jobs.AllTasksRunning(v.Details) {
		return ""
	}
	var needs int32
	for _, vx := range v.Details.Vertices {
		needs = max(needs, vx.Parallelism)
	}
	ov, err := rc.Flink().Overview(c.ClusterHash)
	if err != nil || int32(ov.SlotsAvailable) >= needs {
		return ""
	}
	return fmt.Sprintf("job %s waits for task slots: it needs %d, the session cluster has %d of %d free", c.JobID, needs, ov.SlotsAvailable, ov.SlotsTotal)
}

// sessionJobHash identifies what a session job runs: its jar, entry class, arguments, parallelism,
// its own Flink configuration, the restart nonce and the redeploy nonce. The upgrade mode, the
// desired state, the initial savepoint and the delete mode only say how to get there, and changing
// them restarts nothing. A field added here is omitted while empty, so that the hashes of jobs
// running before it existed stay the same.
func sessionJobHash(job *v1beta1.FlinkSessionJob) string {
	j := job.Spec.Job
	b, _ := json.Marshal(struct {
		JarURI, JarSHA256, EntryClass, RestartNonce string
		Args                                        []string
		Parallelism                                 *int32
		AllowNonRestoredState                       bool
		FlinkConfig                                 v1beta1.FlinkConfig
		SavepointRedeployNonce                      string `json:",omitempty"`
	}{j.JarURI, j.JarSHA256, j.EntryClass, j.RestartNonce, j.Args, j.Parallelism, j.AllowNonRestoredState, job.Spec.FlinkConfig,
		j.SavepointRedeployNonce})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:8]
}
