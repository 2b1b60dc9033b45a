package flinkapplication

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// handleRollingBack returns a failed update to the last stable spec. It first ends the failed
// attempt: its job is stopped (its newest checkpoint is the newest state it left) and its cluster
// removed, so two jobs never run at once. A newer spec takes over from there. Otherwise the stable job
// is kept if it still runs, or started again as the stable spec had it, on its cluster (created again
// if Single mode replaced it), from that newest state.
func handleRollingBack(rc *Context) Outcome {
	st := &rc.App.Status
	cause := st.Reason
	if st.UpdatingHash != "" {
		return endFailedAttempt(rc)
	}
	if rc.Hash != st.FailedDeployHash && rc.Hash != runningSpecHash(st) {
		return moveTo(v1beta1.PhaseUpdating, "SpecChanged", "spec changed during the rollback; deploying it instead")
	}
	live := st.DeployHash
	if id := st.JobStatus.JobID; id != "" && isStableJob(st, id) {
		v := rc.JobView(live, id)
		switch {
		case v.Liveness == Unknown:
			return failed(retryable("ObserveJob", fmt.Errorf("%s", v.Evidence)))
		case v.State() == client.JobCancelling:
			return stay(0)
		case v.Liveness == Alive:
			return rolledBack(rc, fmt.Sprintf("update failed (%s); the previous job %s kept running", cause, id))
		}
		st.JobStatus.JobID, st.JobStatus.ClusterHash, st.JobStatus.SubmittedAt = "", "", nil
	}
	c := rc.Clusters[live]
	complete := c != nil && c.JobManager != nil && c.TaskManager != nil && c.Service != nil
	app := stableApp(rc)
	if app == nil && !complete {
		// Recorded by an operator version that kept no stable spec: only its cluster can be reused.
		return rollbackFailed(rc, "no stable spec is recorded to render the previous cluster from")
	}
	if !complete {
		if err := createCluster(rc, app, live); err != nil {
			return failed(err)
		}
		return stay(0)
	}
	params := statusJobParams(st)
	if app != nil {
		params = specJobParams(app)
		if err := scaleTaskManagers(rc, live, flink.TaskManagerReplicas(app)); err != nil {
			return failed(err)
		}
	}
	if !c.Ready() {
		return stay(0)
	}
	if err := pointGenericService(rc, live); err != nil {
		return failed(err)
	}
	job := runJob(rc, live, params, st.SavepointPath)
	switch {
	case job.Wait != nil:
		return *job.Wait
	case job.Failure != "":
		return rollbackFailed(rc, job.Failure)
	}
	restored := st.SavepointPath
	startedJob(rc, params, restored)
	return rolledBack(rc, fmt.Sprintf("update failed (%s); previous job restarted as %s on %s, %s",
		cause, st.JobStatus.JobID, flink.VersionedServiceName(rc.App, live), restoredFrom(restored)))
}

// endFailedAttempt stops the failed attempt's job and removes its cluster, unless the stable job
// lives there. The attempt's newest checkpoint, if it made one, replaces the state it started from;
// it is persisted before the cluster that knows it goes.
func endFailedAttempt(rc *Context) Outcome {
	st := &rc.App.Status
	if st.LastStableSpec == nil {
		// Written by an operator version that kept no stable spec: the live cluster and the job
		// recorded on it are the stable ones.
		st.LastStableSpec = &v1beta1.StableSpec{SpecHash: st.DeployHash, StableTime: metav1.NewTime(rc.Now)}
		if st.JobStatus.ClusterHash == st.DeployHash {
			st.LastStableSpec.JobID = st.JobStatus.JobID
		}
	}
	if id := st.JobStatus.JobID; id != "" && !isStableJob(st, id) {
		hash := st.JobStatus.ClusterHash
		v := rc.JobView(hash, id)
		live, err := stopJob(rc, v)
		switch {
		case live == Unknown:
			return failed(err)
		case live == Alive:
			return stay(0)
		}
		if path := attemptCheckpoint(rc, v); path != "" {
			st.SavepointPath = path
		}
		st.JobStatus.JobID, st.JobStatus.ClusterHash, st.JobStatus.SubmittedAt = "", "", nil
		return persistThenContinue()
	}
	if failedCluster := targetCluster(st); failedCluster != st.DeployHash {
		// Without HA, deleting the JobManager also ends anything the operator did not know was running there.
		if err := deleteCluster(rc, failedCluster); err != nil {
			return failed(err)
		}
	}
	st.FailedDeployHash = st.UpdatingHash
	clearTarget(st)
	return persistThenContinue()
}

// attemptCheckpoint is the newest completed checkpoint Flink reports for exactly this job.
func attemptCheckpoint(rc *Context, v *JobView) string {
	if v.Details == nil {
		return ""
	}
	rc.forget()
	cp, err := rc.checkpointsOf(v.Ref)
	if err != nil || cp.Latest.Completed == nil || !restorable(cp.Latest.Completed.ExternalPath) {
		return ""
	}
	return cp.Latest.Completed.ExternalPath
}

// isStableJob tells whether the recorded job is the last stable spec's, which a rollback keeps,
// rather than the failed attempt's, which it stops.
func isStableJob(st *v1beta1.FlinkApplicationStatus, jobID string) bool {
	return st.LastStableSpec != nil && st.LastStableSpec.JobID != "" && jobID == st.LastStableSpec.JobID
}

// rolledBack rests in DeployFailed with the stable spec's job running; from now on that job is
// the one a later rollback keeps.
func rolledBack(rc *Context, msg string) Outcome {
	st := &rc.App.Status
	if st.LastStableSpec != nil {
		st.LastStableSpec.JobID = st.JobStatus.JobID
	}
	st.RollbackHash = runningSpecHash(st)
	clearSavepointTrigger(st)
	return warnTo(v1beta1.PhaseDeployFailed, "RolledBack", msg)
}
