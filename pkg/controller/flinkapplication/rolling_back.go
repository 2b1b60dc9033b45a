package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// handleRollingBack returns a failed update to the stable deployment. It first ends the failed
// attempt: its job is stopped (its newest checkpoint is the newest state it left) and its cluster
// removed, so two jobs never run at once. A newer spec takes over from there. Otherwise the stable
// job is kept if it still runs, or started again as a rollback candidate: the stable spec on its
// cluster (created again if Single mode replaced it), from that newest state.
func handleRollingBack(rc *Context) Outcome {
	st := &rc.App.Status
	cause := st.Reason
	if cause == "" {
		// A rollback the Lyft operator left in flight: it kept no cause in status.
		cause = "cause not recorded"
	}
	if c := jobstate.Candidate(&st.JobOwnerStatus); c != nil && c.Kind != v1beta1.DeploymentRollback {
		return endFailedAttempt(rc, c)
	}
	if rc.Hash != st.FailedDeployHash && rc.Hash != jobstate.RunningSpecHash(&st.JobOwnerStatus) {
		if c := jobstate.Candidate(&st.JobOwnerStatus); c != nil && c.JobID != "" {
			// The stable spec's job the rollback started is the stable job again; the update stops it.
			jobstate.KeepCandidateJob(&st.JobOwnerStatus)
		}
		jobstate.ClearTarget(&st.JobOwnerStatus)
		return moveTo(PhaseUpdating, "SpecChanged", "spec changed during the rollback; deploying it instead")
	}
	s := jobstate.Stable(&st.JobOwnerStatus)
	if s == nil {
		return rollbackFailed(rc, "no stable deployment is recorded to return to")
	}
	live := s.ClusterHash
	if s.JobID != "" {
		v := rc.Flink().View(live, s.JobID)
		switch {
		case v.Liveness == jobs.Unknown:
			return failed(jobs.Retryable("ObserveJob", fmt.Errorf("%s", v.Evidence)))
		case v.State() == client.JobCancelling:
			return stay(0)
		case v.Liveness == jobs.Alive:
			return rolledBack(rc, fmt.Sprintf("update failed (%s); the previous job %s kept running", cause, s.JobID))
		}
		// The stable job stopped without its stop completing (the update gave up while it was
		// cancelling, say): it starts again from the newest state it left, as any stopped job does.
		choice := rc.ChooseRestore(v.Ref.ID, v.Answered())
		if choice.Unanswered != nil {
			return failed(choice.Unanswered)
		}
		if choice.Problem != "" {
			return rollbackFailed(rc, fmt.Sprintf("job %s stopped and %s", s.JobID, choice.Problem))
		}
		rc.UseRestore(choice)
		jobstate.StopRecorded(&st.JobOwnerStatus)
	}
	c := jobstate.Candidate(&st.JobOwnerStatus)
	if c == nil {
		if doubt := stableJobsDoubt(rc); doubt != "" {
			return rollbackFailed(rc, doubt+"; set spec.savepointRedeployNonce with the state to start from")
		}
		c = jobstate.RecordRestart(&st.JobOwnerStatus, v1beta1.DeploymentRollback)
	}
	objs := rc.Clusters[live]
	complete := objs != nil && objs.JobManager != nil && objs.TaskManager != nil && objs.Service != nil
	app := stableApp(rc)
	if app == nil && !complete {
		// Recorded by an operator version that kept no stable spec: only its cluster can be reused.
		return rollbackFailed(rc, "no stable spec is recorded to render the previous cluster from")
	}
	if !complete {
		if err := createCluster(rc, flink.OwnerFromApplication(app), live); err != nil {
			return failed(err)
		}
		return stay(0)
	}
	params := jobstate.StatusJobParams(&st.JobOwnerStatus)
	if app != nil {
		params = specJobParams(app)
		if err := rc.ScaleTaskManagers(live, flink.TaskManagerReplicas(app)); err != nil {
			return failed(err)
		}
	}
	if !objs.Ready() {
		return stay(0)
	}
	if err := pointGenericService(rc, live); err != nil {
		return failed(err)
	}
	job := rc.RunJob(c, params, st.Deployments.NextRestorePath)
	switch {
	case job.Wait != nil && !restoredJobRuns(rc, c):
		return *job.Wait
	case job.Failure != "":
		return rollbackFailed(rc, job.Failure)
	}
	restored := st.Deployments.NextRestorePath
	rc.Promote(restored)
	rc.StartedJob(params, restored)
	return rolledBack(rc, fmt.Sprintf("update failed (%s); previous job restarted as %s on %s, %s",
		cause, c.JobID, flink.VersionedServiceName(rc.App, live), jobs.RestoredFrom(restored)))
}

// endFailedAttempt stops the failed attempt's job and removes its cluster, unless the stable
// deployment lives there. The attempt's newest checkpoint, if it made one, replaces the state it
// started from; it is persisted before the cluster that knows it goes.
func endFailedAttempt(rc *Context, c *v1beta1.DeploymentRecord) Outcome {
	st := &rc.App.Status
	named := ""
	if startedFromRedeploy(rc) {
		// The attempt started from the savepoint the user named, not from the previous job's state:
		// going back to the previous spec goes back to the newest state its job left, unless the
		// attempt completed newer state of its own (below).
		named = st.Deployments.NextRestorePath
		st.Deployments.NextRestorePath = stableJobsState(rc)
	}
	if c.JobID != "" {
		v := rc.Flink().View(c.ClusterHash, c.JobID)
		if conf := runConfigOfJob(rc, c.JobID); v.State() == client.JobFailing &&
			flink.CheckpointsSurviveEnd(conf, client.JobFailed) && !flink.CheckpointsSurviveEnd(conf, client.JobCanceled) {
			// Failing, the attempt keeps its checkpoints (DELETE_ON_CANCELLATION); cancelled,
			// it would lose them: it is let fail (attack review s6).
			return stay(0)
		}
		live, err := rc.Flink().Cancel(v)
		switch {
		case live == jobs.Unknown:
			return failed(err)
		case live == jobs.Alive:
			return stay(0)
		}
		if !stableJobKept(&st.JobOwnerStatus) {
			// Giving up on the attempt never discards state Flink completed: its newest checkpoint
			// is newer than anything the previous job left, a redeploy's included (what its
			// sinks committed is not rewound; explorer seed 1210598).
			path, gone := rc.AttemptCheckpoint(v, c.ClusterHash)
			if path == "" && !gone {
				// Flink cannot tell the attempt's checkpoints (its job status unreadable, its
				// JobManager gone): the newest the operator recorded of it is still newer than the
				// state it started from.
				path = rc.JobState().NewestStatePath(c.JobID)
			}
			if path == named {
				// Nothing completed since the named savepoint: the redeploy is what failed.
				path = ""
			}
			if path != "" {
				st.Deployments.NextRestorePath = path
				if s := jobstate.Stable(&st.JobOwnerStatus); s != nil && s.JobID == "" {
					// The stable spec goes on from the attempt's state: a redeploy that replaces
					// this rollback and fails goes back to it, not to the older state the
					// attempt started from.
					s.RestorePath = path
				}
			}
		}
		jobstate.ForgetJob(c)
		return persistThenContinue()
	}
	if c.ClusterHash != jobstate.LiveCluster(&st.JobOwnerStatus) {
		// Without HA, deleting the JobManager also ends anything the operator did not know was running there.
		if err := rc.DeleteCluster(c.ClusterHash); err != nil {
			return failed(err)
		}
	}
	st.FailedDeployHash = c.SpecHash
	jobstate.ClearTarget(&st.JobOwnerStatus)
	return persistThenContinue()
}

// startedFromRedeploy tells whether the state the attempt was to start from is the savepoint a
// savepointRedeployNonce named (redeployFromNamedSavepoint records it in the ledger).
func startedFromRedeploy(rc *Context) bool {
	next := rc.Job.Deployments.NextRestorePath
	if next == "" {
		return false
	}
	var newest *v1beta1.StateEntry
	for i, e := range rc.Job.Ledger {
		if e.Purpose == v1beta1.SavepointRedeploy && e.Time != nil && (newest == nil || !e.Time.Before(newest.Time)) {
			newest = &rc.Job.Ledger[i]
		}
	}
	return newest != nil && newest.Path == next
}

// stableJobsState is the newest state the stable deployment's jobs left, by the guardian's rule:
// what they completed on its cluster, or what the stable job started from.
func stableJobsState(rc *Context) string {
	return jobstate.StableFloor(rc.Job, func(jobID string) []jobs.StatePoint { return rc.JobState().BookPoints(jobID) })
}

// stableJobsDoubt says, when the rollback returns from a failed redeploy, why the stable
// deployment's recorded state may not be its newest: a savepoint asked of one of its jobs whose end
// Flink could not tell (its JobManager lost the job). Going back from a redeploy reads the stable
// jobs' state from the ledger alone, and a redeploy settles no doubt but its own start. Whether the
// savepoint was taken before or after a recorded checkpoint is not known (it was sent after it was
// asked for, when is not recorded), so any such doubt stops the choice. An ordinary update's
// rollback restores what its own restore chose (with Flink's answer) or its attempt's newer
// checkpoint, and is not asked; nor is a Stateless application. "" when there is no doubt.
func stableJobsDoubt(rc *Context) string {
	s := jobstate.Stable(rc.Job)
	if s == nil || rc.Settings.UpgradeMode == v1beta1.UpgradeModeStateless || !redeployedSinceStable(rc.Job, s) {
		return ""
	}
	seen := map[string]bool{}
	for _, e := range rc.Job.Ledger {
		if e.ClusterHash != s.ClusterHash || e.JobID == "" || seen[e.JobID] {
			continue
		}
		seen[e.JobID] = true
		if doubt := (guardian.Job{ID: e.JobID, InDoubt: rc.Ledger().InDoubt(e.JobID)}).Doubt(false); doubt != "" {
			return doubt
		}
	}
	return ""
}

// redeployedSinceStable tells whether a savepointRedeployNonce started a job after the stable
// deployment last ran stable: the ledger's Redeploy entry is newer than the stable record.
func redeployedSinceStable(st *v1beta1.JobOwnerStatus, s *v1beta1.DeploymentRecord) bool {
	for _, e := range st.Ledger {
		if e.Purpose == v1beta1.SavepointRedeploy && e.Time != nil && (s.StableTime == nil || e.Time.After(s.StableTime.Time)) {
			return true
		}
	}
	return false
}

// rolledBack rests in DeployFailed with the stable spec's job running.
func rolledBack(rc *Context, msg string) Outcome {
	st := &rc.App.Status
	st.RollbackHash = jobstate.RunningSpecHash(&st.JobOwnerStatus)
	if s := jobstate.Stable(&st.JobOwnerStatus); s != nil {
		s.Savepoint = nil
	}
	return warnTo(PhaseDeployFailed, "RolledBack", msg)
}

// restoredJobRuns tells whether the job a rollback restarted runs, even while it restarts: the
// stability gate is for updates, which have something to go back to. A rollback's job that keeps
// failing for a reason outside any spec (a sink down for everyone) is kept, shown Red, rather than
// given up on; a rollback that cannot submit its job at all still fails.
func restoredJobRuns(rc *Context, c *v1beta1.DeploymentRecord) bool {
	if c.JobID == "" {
		return false
	}
	v := rc.Flink().View(c.ClusterHash, c.JobID)
	if v.Liveness != jobs.Alive {
		return false
	}
	// Running means its tasks run (or ran, and it restarts): a job still waiting for slots is not
	// known to run at all.
	return v.State() == client.JobRestarting || v.State() == client.JobRunning && jobs.AllTasksRunning(v.Details)
}
