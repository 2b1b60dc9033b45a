package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// handleSubmitting points the application's Service at the candidate's cluster and starts the
// candidate's job there from the recorded state, as the candidate's spec says, until it runs stable.
// Then the candidate is the stable deployment.
func handleSubmitting(rc *Context) Outcome {
	st := rc.Job
	d, ok := deployingNow(rc)
	if !ok {
		return moveTo(PhaseUpdating, "NothingToSubmit", "no deployment is in progress; deploying the spec")
	}
	if forcedRollback(rc) {
		return warnTo(PhaseRollingBack, "ForceRollback", "forceRollback set: abandoning the update")
	}
	c, app, beside := d.record, d.app, d.beside
	if tms, scaled := taskManagersToSubmit(rc, app); scaled || c.ClusterHash != c.SpecHash {
		// The cluster is kept, or started for the spec's parallelism; its TaskManagers follow the
		// parallelism the job is submitted with.
		if err := rc.ScaleTaskManagers(c.ClusterHash, tms); err != nil {
			return failed(err)
		}
	}
	if !beside {
		// A BlueGreen version beside the deployed one gets the application's Service at promotion.
		if err := pointGenericService(rc, c.ClusterHash); err != nil {
			return failed(err)
		}
	}
	if wait := rc.RedeployFromNamedSavepoint(c); wait != nil {
		return *wait
	}
	if wait := freshenBesideRestore(rc, c); wait != nil {
		return *wait
	}
	if out := haRecoveryMissed(rc, c); out != nil {
		return *out
	}
	params := specJobParams(app)
	job := rc.RunJob(c, withScaling(rc, params), st.Deployments.NextRestorePath)
	switch {
	case job.Wait != nil:
		return *job.Wait
	case job.Failure != "":
		return abandonUpdate(rc, job.Failure)
	}
	restored := st.Deployments.NextRestorePath
	if beside {
		return enterDualRunning(rc, restored)
	}
	rc.Promote(restored)
	rc.Machine.FailedDeployHash, rc.App.Status.RollbackHash = "", ""
	rc.StartedJob(params, restored)
	return moveTo(PhaseRunning, "JobRunning", fmt.Sprintf("job %s running on %s, %s",
		c.JobID, flink.VersionedServiceName(rc.App, c.ClusterHash), jobs.RestoredFrom(restored)))
}
