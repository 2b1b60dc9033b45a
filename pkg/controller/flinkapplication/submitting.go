package flinkapplication

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// handleSubmitting points the application's Service at the target cluster and starts the job there
// from the recorded state, as the recorded target spec says, until it runs stable. Then that spec is
// the live one and the last stable one.
func handleSubmitting(rc *Context) Outcome {
	st := &rc.App.Status
	target := targetCluster(st)
	if forcedRollback(rc) {
		return warnTo(v1beta1.PhaseRollingBack, "ForceRollback", "forceRollback set: abandoning the update")
	}
	app := targetApp(rc)
	if st.InPlaceUpdatedFromHash != "" {
		// The cluster is kept; only its TaskManagers follow the new parallelism.
		if err := scaleTaskManagers(rc, target, flink.TaskManagerReplicas(app)); err != nil {
			return failed(err)
		}
	}
	if err := pointGenericService(rc, target); err != nil {
		return failed(err)
	}
	params := specJobParams(app)
	job := runJob(rc, target, params, st.SavepointPath)
	switch {
	case job.Wait != nil:
		return *job.Wait
	case job.Failure != "":
		return abandonUpdate(rc, job.Failure)
	}
	restored := st.SavepointPath
	promote(rc, target, app, restored)
	startedJob(rc, params, restored)
	return moveTo(v1beta1.PhaseRunning, "JobRunning", fmt.Sprintf("job %s running on %s, %s",
		st.JobStatus.JobID, flink.VersionedServiceName(rc.App, target), restoredFrom(restored)))
}

// promote makes the deployed spec the live and the last stable one: its job ran stable on cluster.
func promote(rc *Context, cluster string, app *v1beta1.FlinkApplication, restorePath string) {
	st := &rc.App.Status
	specHash := st.UpdatingHash
	if specHash == "" {
		specHash = flink.ClusterHash(app)
	}
	b, _ := json.Marshal(app.Spec)
	st.LastStableSpec = &v1beta1.StableSpec{
		SpecHash: specHash, Spec: string(b), JobID: st.JobStatus.JobID, RestorePath: restorePath,
		StableTime: metav1.NewTime(rc.Now),
	}
	st.DeployHash = cluster
	clearTarget(st)
	st.FailedDeployHash, st.RollbackHash = "", ""
	clearSavepointTrigger(st)
}

// startedJob records a job that just ran stable: its parameters (for a later rollback) and the
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
	// The previous job's last checkpoint is older than what this one started from; a recovery must
	// never restore it.
	js.LastCheckpointPath, js.LastCheckpointTime, js.LastFailingTime = "", nil, nil
	observeLiveJob(rc)
}

func restoredFrom(path string) string {
	if path == "" {
		return "without state"
	}
	return "restored from " + path
}
