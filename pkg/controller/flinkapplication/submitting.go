package flinkapplication

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// handleSubmitting points the application's Service at the new cluster and starts the job there from
// the recorded state, until every task runs. Then the new spec is the live one.
func handleSubmitting(rc *Context) Outcome {
	st := &rc.App.Status
	target := st.UpdatingHash
	if rc.App.Spec.ForceRollback && st.DeployHash != "" {
		return warnTo(v1beta1.PhaseRollingBack, "ForceRollback", "forceRollback set: abandoning the update")
	}
	if err := pointGenericService(rc, target); err != nil {
		return failed(err)
	}
	params := specJobParams(rc.App)
	job := runJob(rc, target, params, st.SavepointPath)
	switch {
	case job.Wait != nil:
		return *job.Wait
	case job.Failure != "":
		return abandonUpdate(rc, job.Failure)
	}
	restored := st.SavepointPath
	st.DeployHash, st.UpdatingHash = target, ""
	st.FailedDeployHash, st.RollbackHash, st.SavepointTriggerID = "", "", ""
	startedJob(rc, params, restored)
	from := "without state"
	if restored != "" {
		from = "restored from " + restored
	}
	return moveTo(v1beta1.PhaseRunning, "JobRunning", fmt.Sprintf("job %s running on %s, %s",
		st.JobStatus.JobID, flink.VersionedServiceName(rc.App, target), from))
}

// startedJob records a job that just reached RUNNING: its parameters (for a later rollback) and the
// state it came from, and resets the counters of the job it replaced.
func startedJob(rc *Context, p jobParams, restorePath string) {
	st := &rc.App.Status
	p.recordIn(st)
	js := &st.JobStatus
	js.RestorePath, js.RestoreTime = restorePath, nil
	if restorePath != "" {
		t := metav1.NewTime(rc.Now)
		js.RestoreTime = &t
	}
	js.JobRestartCount, js.CompletedCheckpointCount, js.FailedCheckpointCount = 0, 0, 0
	js.LastFailingTime = nil
	observeLiveJob(rc)
}
