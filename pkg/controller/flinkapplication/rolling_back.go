package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// handleRollingBack returns a failed update to the previous cluster. It first stops and removes the
// failed cluster, so two jobs never run at once, then keeps the old job if it still runs, or starts it
// again as it was, from the state taken during the update.
func handleRollingBack(rc *Context) Outcome {
	st := &rc.App.Status
	live, failedHash := st.DeployHash, st.UpdatingHash
	cause := st.Reason
	if failedHash != "" && failedHash != live {
		if st.JobStatus.ClusterHash == failedHash {
			stopped, err := stopJob(rc, failedHash, st.JobStatus.JobID)
			if err != nil && rc.Clusters[failedHash].Ready() {
				return failed(err)
			}
			if err == nil && !stopped {
				return stay(0)
			}
			st.JobStatus.JobID, st.JobStatus.ClusterHash = "", ""
		}
		// Without HA, deleting the JobManager also ends anything the operator did not know was running there.
		if err := deleteCluster(rc, failedHash); err != nil {
			return failed(err)
		}
		st.FailedDeployHash, st.UpdatingHash = failedHash, ""
		// The update may have failed before the old job was stopped; then there is nothing to restart.
		alive, err := jobIsAlive(rc, live, st.JobStatus.JobID)
		if err != nil {
			return failed(err)
		}
		if alive {
			return rolledBack(rc, fmt.Sprintf("update failed (%s); the previous job %s kept running", cause, st.JobStatus.JobID))
		}
		st.JobStatus.JobID, st.JobStatus.ClusterHash = "", ""
		return persistThenContinue()
	}
	if err := pointGenericService(rc, live); err != nil {
		return failed(err)
	}
	if st.JobStatus.JobID == "" {
		// Before restarting, make sure nothing of this application already runs there.
		if id, err := aliveJobOn(rc, live); err != nil {
			return failed(err)
		} else if id != "" {
			st.JobStatus.JobID, st.JobStatus.ClusterHash = id, live
			return rolledBack(rc, fmt.Sprintf("update failed (%s); job %s was found running on the previous cluster and kept", cause, id))
		}
	}
	job := runJob(rc, live, statusJobParams(st), st.SavepointPath)
	switch {
	case job.Wait != nil:
		return *job.Wait
	case job.Failure != "":
		return rollbackFailed(rc, job.Failure)
	}
	restored := st.SavepointPath
	startedJob(rc, statusJobParams(st), restored)
	return rolledBack(rc, fmt.Sprintf("update failed (%s); previous job restarted as %s from %s on %s",
		cause, st.JobStatus.JobID, orNothing(restored), flink.VersionedServiceName(rc.App, live)))
}

func rolledBack(rc *Context, msg string) Outcome {
	st := &rc.App.Status
	st.RollbackHash = st.DeployHash
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

func orNothing(path string) string {
	if path == "" {
		return "no state"
	}
	return path
}
