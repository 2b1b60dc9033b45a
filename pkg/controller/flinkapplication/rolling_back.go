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
		job, err := rc.Job(live, id)
		switch {
		case err == nil && job.State == client.JobCancelling:
			return stay(0)
		case err == nil && !client.IsGloballyTerminal(job.State):
			return rolledBack(rc, fmt.Sprintf("update failed (%s); the previous job %s kept running", cause, id))
		case err != nil && !client.IsNotFound(err) && rc.Clusters[live].Ready():
			return failed(err)
		}
		st.JobStatus.JobID, st.JobStatus.ClusterHash = "", ""
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
	if st.JobStatus.JobID == "" {
		// Before starting the job again, make sure nothing of this application already runs there.
		if id, err := aliveJobOn(rc, live); err != nil {
			return failed(err)
		} else if id != "" {
			st.JobStatus.JobID, st.JobStatus.ClusterHash = id, live
			return rolledBack(rc, fmt.Sprintf("update failed (%s); job %s was found running on the stable cluster and kept", cause, id))
		}
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
		stopped, err := stopJob(rc, hash, id)
		if err != nil && rc.Clusters[hash].Ready() {
			return failed(err)
		}
		if err == nil && !stopped {
			return stay(0)
		}
		if path := attemptCheckpoint(rc, hash, id); path != "" {
			st.SavepointPath = path
		}
		st.JobStatus.JobID, st.JobStatus.ClusterHash = "", ""
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
func attemptCheckpoint(rc *Context, hash, jobID string) string {
	rc.forget()
	cp, err := rc.Checkpoints(hash, jobID)
	if err != nil || cp.Latest.Completed == nil {
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
	st.SavepointTriggerID = ""
	return warnTo(v1beta1.PhaseDeployFailed, "RolledBack", msg)
}

// aliveJobOn finds a job that is not globally terminal on the cluster with this hash.
func aliveJobOn(rc *Context, hash string) (string, error) {
	jobs, err := rc.Jobs(hash)
	if err != nil {
		return "", err
	}
	for _, j := range jobs {
		if !client.IsGloballyTerminal(j.Status) {
			return j.ID, nil
		}
	}
	return "", nil
}
