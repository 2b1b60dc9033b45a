package flinkapplication

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// besideLive tells whether the update in progress starts its job beside the deployed one, which
// keeps running: deploymentMode BlueGreen. Suspends and restarts stop the deployed job as always.
func besideLive(rc *Context) bool {
	return rc.App != nil && blueGreen(rc.App) && jobstate.Updating(rc.Job)
}

// startBeside takes the state a new BlueGreen version starts from without stopping the deployed
// job: a savepoint without cancel (upgradeMode Savepoint, and LastState unless blueGreen.lastStateFrom
// is Checkpoint or the newest checkpoint will not do), the newest checkpoint (LastState from
// Checkpoint), or nothing (Stateless).
func startBeside(rc *Context, ready string) Outcome {
	st := &rc.App.Status
	hash, jobID := jobstate.LiveJob(&st.JobOwnerStatus)
	st.Deployments.NextRestorePath = ""
	switch rc.Settings.UpgradeMode {
	case v1beta1.UpgradeModeStateless:
		return moveTo(PhaseSubmitting, "ClusterReady", fmt.Sprintf("%s; starting version %s without state beside job %s", ready, jobstate.Candidate(&st.JobOwnerStatus).Version, jobID))
	case v1beta1.UpgradeModeLastState:
		if lastStateFrom(rc.App) != v1beta1.LastStateFromCheckpoint {
			break
		}
		usable := func(ref jobs.Ref) bool { return rc.LastStateProblem(ref) == "" }
		if latest := newestCheckpointOfLiveJob(rc, hash, jobID, usable); latest != nil {
			st.Deployments.NextRestorePath = latest.ExternalPath
			return moveTo(PhaseSubmitting, "ClusterReady", fmt.Sprintf("%s; starting version %s from checkpoint %s of job %s, which keeps running",
				ready, jobstate.Candidate(&st.JobOwnerStatus).Version, st.Deployments.NextRestorePath, jobID))
		}
	}
	return moveTo(PhaseSavepointing, "ClusterReady", fmt.Sprintf("%s; taking a savepoint of job %s without cancelling it, for version %s",
		ready, jobID, jobstate.Candidate(&st.JobOwnerStatus).Version))
}

// lastStateFrom is what a new version of a LastState application starts from: a savepoint of the
// deployed job unless the spec asks for its newest checkpoint.
func lastStateFrom(app *v1beta1.FlinkApplication) v1beta1.LastStateSource {
	if b := app.Spec.BlueGreen; b != nil && b.LastStateFrom != "" {
		return b.LastStateFrom
	}
	return v1beta1.LastStateFromSavepoint
}

// enterDualRunning keeps both versions: the new one ran stable beside the deployed one, which the
// user tears down (tearDownVersionHash) when they choose.
func enterDualRunning(rc *Context, restorePath string) Outcome {
	st := &rc.App.Status
	s, c := jobstate.Stable(&st.JobOwnerStatus), jobstate.Candidate(&st.JobOwnerStatus)
	t := metav1.NewTime(rc.Now)
	c.StableTime, c.RestorePath, c.SubmittedAt = &t, restorePath, nil
	st.Deployments.NextRestorePath = ""
	return moveTo(PhaseDualRunning, "DualRunning", fmt.Sprintf(
		"version %s (hash %s, job %s) runs beside version %s (hash %s, job %s), %s; set tearDownVersionHash to the hash of the version to remove",
		c.Version, c.SpecHash, c.JobID, s.Version, s.SpecHash, s.JobID, jobs.RestoredFrom(restorePath)))
}

// handleDualRunning watches both BlueGreen versions until one is to go: the one tearDownVersionHash
// names, or the new one when the spec changes again, the application is suspended or forceRollback
// is set.
func handleDualRunning(rc *Context) Outcome {
	st := &rc.App.Status
	if !dualRunning(st) {
		return moveTo(PhaseRunning, "VersionGone", "only one version is recorded")
	}
	s, c := jobstate.Stable(&st.JobOwnerStatus), jobstate.Candidate(&st.JobOwnerStatus)
	rc.ObserveLiveJob()
	switch {
	case rc.Settings.Suspend:
		return startTeardown(rc, c, "Suspending", "spec.state is Suspended; the deployed version is suspended once the new one is torn down")
	case rc.App.Spec.ForceRollback:
		if c.PromotedAt != nil {
			// Back from an automatic promotion: the application's Service returns to the deployed version.
			if err := pointGenericService(rc, s.ClusterHash); err != nil {
				return failed(err)
			}
		}
		st.FailedDeployHash = c.SpecHash
		return startTeardown(rc, c, "ForceRollback", fmt.Sprintf("forceRollback set; version %s stays deployed", s.Version))
	case rc.Hash != s.SpecHash && rc.Hash != c.SpecHash:
		return startTeardown(rc, c, "SpecChanged", fmt.Sprintf("spec changed (hash %s); its version replaces this one beside version %s", rc.Hash, s.Version))
	}
	if h := rc.App.Spec.TearDownVersionHash; h != "" && h != st.TeardownHash {
		switch h {
		case s.SpecHash:
			return startTeardown(rc, s, "TeardownRequested", fmt.Sprintf("tearDownVersionHash names the deployed version; version %s is deployed from now on", c.Version))
		case c.SpecHash:
			return startTeardown(rc, c, "TeardownRequested", fmt.Sprintf("tearDownVersionHash names the new version; version %s stays deployed", s.Version))
		}
		if st.ObservedGeneration != rc.App.Generation {
			rc.Event(true, "UnknownTeardownHash", fmt.Sprintf("tearDownVersionHash %s names no running version; the versions are %s (hash %s) and %s (hash %s)",
				h, s.Version, s.SpecHash, c.Version, c.SpecHash))
		}
	}
	return promoteOrAbort(rc)
}

// teardownMode is how a torn-down version's job stops.
func teardownMode(app *v1beta1.FlinkApplication) v1beta1.TeardownMode {
	if b := app.Spec.BlueGreen; b != nil && b.TeardownMode != "" {
		return b.TeardownMode
	}
	return v1beta1.TeardownModeSavepoint
}

// summarizeVersions writes the BlueGreen fields in the Lyft operator's shape: deployVersion and
// updatingVersion, and versionStatuses with the deployed version first and the updating one second.
// The top-level jobStatus and clusterStatus are the deployed version's.
func summarizeVersions(rc *Context) {
	st := &rc.App.Status
	if st.DeploymentMode != v1beta1.DeploymentModeBlueGreen {
		st.DeployVersion, st.UpdatingVersion, st.VersionStatuses = "", "", nil
		return
	}
	s, c := jobstate.Stable(&st.JobOwnerStatus), jobstate.Candidate(&st.JobOwnerStatus)
	statuses := make([]v1beta1.FlinkApplicationVersionStatus, 2)
	st.DeployVersion, st.UpdatingVersion = "", ""
	if s != nil {
		st.DeployVersion = s.Version
		statuses[0] = v1beta1.FlinkApplicationVersionStatus{Version: s.Version, VersionHash: s.SpecHash,
			ClusterStatus: st.ClusterStatus, JobStatus: st.JobStatus}
	}
	if c != nil && c.Version != "" {
		st.UpdatingVersion = c.Version
		if s == nil {
			// Lyft shows the first version as deployed from the start.
			st.DeployVersion = c.Version
		}
		statuses[1] = v1beta1.FlinkApplicationVersionStatus{Version: c.Version, VersionHash: c.SpecHash,
			JobStatus: versionJobStatus(rc, c)}
	}
	st.VersionStatuses = statuses
}

// versionJobStatus is what the pass saw of a version's job.
func versionJobStatus(rc *Context, r *v1beta1.DeploymentRecord) v1beta1.FlinkJobStatus {
	js := v1beta1.FlinkJobStatus{JobID: r.JobID, ClusterHash: r.ClusterHash, RestorePath: r.RestorePath}
	if r.JobID == "" {
		return js
	}
	v := rc.Flink().View(r.ClusterHash, r.JobID)
	if v.Details == nil {
		js.Health = v1beta1.Red
		return js
	}
	js.State = v1beta1.JobState(v.Details.State)
	for _, vx := range v.Details.Vertices {
		js.RunningTasks += int32(vx.Tasks.Running)
		js.TotalTasks += vx.Parallelism
	}
	js.StartTime = jobstate.MsTime(v.Details.StartTime)
	js.Health = jobstate.JobHealth(&js, rc.Now)
	return js
}

// freshenBesideRestore chooses again, before a new BlueGreen version's job is sent (again), the
// state it starts from, when the choice made earlier may no longer hold:
//
//   - a job of the version that ran and was lost (its JobManager says it has no such job) after it
//     completed state of its own starts again from its own newest state, never from the one it
//     started from (jobstate.Observe.CandidateCheckpoint);
//   - a version that is to start from a checkpoint of the deployed version's job, which keeps
//     running, and waited in Submitting (a FlinkSnapshot the spec names, a jar, the leftover
//     clusters) past the record window (the time Flink is counted on to keep a checkpoint) moves to
//     that job's newest: the running job subsumes older checkpoints as it goes. A fresh one is left
//     as it is, so that a pass slower than the job's checkpoint interval cannot move it on and on.
//
// A state the user named (a savepointRedeployNonce, by savepointPath or restoreSnapshot) is never
// moved. The new choice is persisted before the submission that uses it. A job sent without an
// answer (SubmittedAt) may be starting, and is waited for as it is.
func freshenBesideRestore(rc *Context, c *v1beta1.DeploymentRecord) *Outcome {
	next := rc.Job.Deployments.NextRestorePath
	if !besideLive(rc) || c.SubmittedAt != nil || namedRedeploy(rc, next) {
		return nil
	}
	if c.JobID != "" {
		if v := rc.Flink().View(c.ClusterHash, c.JobID); v.Liveness != jobs.Stopped || v.Details != nil {
			return nil
		}
		if own := rc.JobState().NewestStatePath(c.JobID); own != "" {
			if own == next {
				return nil
			}
			rc.Job.Deployments.NextRestorePath = own
			o := persistThenContinue()
			return &o
		}
	}
	hash, jobID := jobstate.LiveJob(rc.Job)
	if over := deployedJobOver(rc, hash, jobID, next); over != nil {
		return over
	}
	if next == "" || jobID == "" || rc.Ledger().IsSavepoint(next) || !strings.Contains(next, jobID) {
		return nil
	}
	fresh := rc.Observation().RecordWindowOn(hash)
	if fresh <= 0 {
		fresh = rc.Settings.CheckpointInterval()
	}
	if at := rc.Ledger().TimeOf(next); !at.IsZero() && rc.Now.Sub(at) < fresh {
		return nil
	}
	latest := newestCheckpointOfLiveJob(rc, hash, jobID, nil)
	if latest == nil || !jobs.Restorable(latest.ExternalPath) || latest.ExternalPath == next {
		return nil
	}
	rc.Ledger().Record(v1beta1.StateCheckpoint, jobID, hash, latest.ExternalPath, jobstate.TakenByFlink(rc.Now, latest.TriggerTimestamp))
	rc.Job.Deployments.NextRestorePath = latest.ExternalPath
	o := persistThenContinue()
	return &o
}

// deployedJobOver chooses the state a new BlueGreen version starts from again when the deployed
// version's job is over (Flink's positive word) before the new version's job is sent: the new
// version replaces it rather than starting beside it, and so starts from its newest state, as the
// one restore policy finds it, when that is newer than the state chosen while it ran (explorer seed
// 13000489: the deployed job completed a checkpoint after the savepoint taken for the new version,
// then failed, and the new version went back behind that checkpoint). nil when there is nothing to
// change; an Outcome that persists the new choice, or waits for Flink's answer, otherwise. While
// Flink does not say whether the deployed job runs, the new version waits.
func deployedJobOver(rc *Context, hash, jobID, next string) *Outcome {
	if jobID == "" || next == "" {
		return nil
	}
	v := rc.Flink().View(hash, jobID)
	switch v.Liveness {
	case jobs.Unknown:
		// Beside a job that runs, the new version starts from the state chosen while it ran; in the
		// place of one that is over, from its newest state. While Flink does not say which, the new
		// version is not sent (explorer seed 20000000: the deployed job's status unreadable, its
		// JobManager lost it, and the new version went back to the savepoint behind checkpoints
		// the operator had recorded). The phase's deadline bounds the wait.
		rc.WaitOn(fmt.Sprintf("Flink does not say whether job %s of the deployed version still runs, which decides the state the new version starts from: %s",
			jobID, v.Evidence))
		o := stay(0)
		return &o
	case jobs.Alive:
		return nil
	}
	// Dated before the policy runs: it records Flink's newest checkpoint of the job, which takes the
	// place of the job's one checkpoint entry, the one that may date next (attack review s9).
	before := rc.JobState().RecordedTimeOf(jobID, next)
	choice := rc.ChooseRestore(jobID, v.Answered())
	if choice.Unanswered != nil {
		o := failed(choice.Unanswered)
		return &o
	}
	if choice.Problem != "" {
		// The new version now replaces the deployed job, whose newest state the policy cannot name:
		// the state chosen while that job ran may be older than what it completed since, so nothing
		// is sent from it (explorer seed 34000468: a savepoint of the deployed job in doubt, and the
		// new version went back behind a checkpoint recorded after the one it was to start from).
		o := rc.DeployFailed("RecoveryFailed", fmt.Sprintf("job %s of the deployed version is over before the new version's job was sent, and %s; %s",
			jobID, choice.Problem, restoreByHand(rc)))
		return &o
	}
	if choice.Path == "" || jobstate.SamePath(choice.Path, next) || !newerOfOneJob(rc, jobID, choice.Path, next, before) {
		return nil
	}
	rc.Event(false, "RestoreMoved", fmt.Sprintf("job %s of the deployed version is over; the new version starts from its newest state %s instead of %s",
		jobID, choice.Path, next))
	rc.Job.Deployments.NextRestorePath = choice.Path
	o := persistThenContinue()
	return &o
}

// newerOfOneJob tells whether the state at path is newer than the one at than (taken at thanAt, as
// recorded; zero when unknown), both of the job: two of its checkpoints are in the order of their
// ids, which Flink counts up; otherwise by the times recorded.
func newerOfOneJob(rc *Context, jobID, path, than string, thanAt time.Time) bool {
	if a, ok := checkpointNumber(jobID, path); ok {
		if b, ok := checkpointNumber(jobID, than); ok {
			return a > b
		}
	}
	at := rc.JobState().RecordedTimeOf(jobID, path)
	return !at.IsZero() && !thanAt.IsZero() && at.After(thanAt)
}

// checkpointNumber is n of the job's checkpoint <dir>/<job id>/chk-<n>.
func checkpointNumber(jobID, path string) (int, bool) {
	if !jobstate.IsCheckpointOf(jobID, path) {
		return 0, false
	}
	marker := "/" + jobID + "/chk-"
	rest := path[strings.LastIndex(path, marker)+len(marker):]
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSuffix(rest, "/_metadata"), "/"))
	return n, err == nil
}

// newestCheckpointOfLiveJob is the newest checkpoint Flink lists for the deployed job, which keeps
// running beside a new version; nil unless Flink answered that the job is alive, usable (when
// given) accepts it, and Flink lists a completed checkpoint.
func newestCheckpointOfLiveJob(rc *Context, hash, jobID string, usable func(jobs.Ref) bool) *client.Checkpoint {
	v := rc.Flink().View(hash, jobID)
	if v.Liveness != jobs.Alive || (usable != nil && !usable(v.Ref)) {
		return nil
	}
	cps, err := rc.Flink().Checkpoints(v.Ref)
	if err != nil {
		return nil
	}
	return cps.Latest.Completed
}

// namedRedeploy tells whether path is the state a savepointRedeployNonce had the next job start
// from: the user's choice, which no policy moves.
func namedRedeploy(rc *Context, path string) bool {
	s := rc.Settings
	return s != nil && path != "" && s.RedeployNonce != "" && s.RedeployNonce == rc.Job.SavepointRedeployNonce && path == s.RedeployFrom
}
