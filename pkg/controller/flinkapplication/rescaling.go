package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// handleRescaling changes the parallelism of the live job on its own cluster (scaleMode InPlace).
// Under the adaptive scheduler the running job is asked to rescale through its resource
// requirements and keeps its id; otherwise the job is stopped per upgradeMode and started again on
// the same cluster with the TaskManagers the new parallelism needs.
func handleRescaling(rc *Context) Outcome {
	st := &rc.App.Status
	hash, jobID := jobstate.LiveJob(&st.JobOwnerStatus)
	if jobstate.TargetSpecHash(&st.JobOwnerStatus) != rc.Hash {
		if jobID == "" {
			return moveTo(PhaseUpdating, "SpecChanged", "no job runs to rescale in place; deploying the spec")
		}
		if classifyChange(rc) != scaleChange {
			return moveTo(PhaseRunning, "SpecChanged", "spec changed before the rescale started")
		}
		recordTarget(rc)
		jobstate.Candidate(&st.JobOwnerStatus).ClusterHash = hash
		return persistThenContinue()
	}
	want := rc.App.Spec.Parallelism
	if !flink.AdaptiveScheduler(rc.App) {
		return rc.StopLiveJob("Rescaling", fmt.Sprintf("parallelism %d needs a new job (the cluster does not run the adaptive scheduler)", want))
	}
	if v := rc.FlinkVersion(hash); !client.HasResourceRequirements(v) {
		return rc.StopLiveJob("Rescaling", fmt.Sprintf("parallelism %d needs a new job (Flink %s cannot rescale a running job: "+
			"its resource requirements came with 1.18)", want, v))
	}
	// Slots first: the adaptive scheduler only grows a job into slots that exist.
	if tms := flink.TaskManagerReplicas(rc.App); rc.Clusters[hash] != nil && replicas(rc.Clusters[hash].TaskManager) < tms {
		if err := rc.ScaleTaskManagers(hash, tms); err != nil {
			return failed(err)
		}
	}
	v := rc.Flink().View(hash, jobID)
	switch v.Liveness {
	case jobs.Unknown:
		return failed(jobs.Retryable("ObserveJob", fmt.Errorf("%s", v.Evidence)))
	case jobs.Stopped:
		return rc.StopLiveJob("Rescaling", fmt.Sprintf("parallelism %d needs a new job: %s", want, v.Evidence))
	}
	job := v.Details
	if job.State == client.JobRunning && jobs.AllTasksRunning(job) && job.Parallelism() == want {
		if err := rc.ScaleTaskManagers(hash, flink.TaskManagerReplicas(rc.App)); err != nil {
			return failed(err)
		}
		p := specJobParams(rc.App)
		jobstate.TakeJob(jobstate.Candidate(&st.JobOwnerStatus), jobstate.Stable(&st.JobOwnerStatus))
		rc.Promote(jobstate.Stable(&st.JobOwnerStatus).RestorePath)
		st.FailedDeployHash, st.RollbackHash = "", ""
		p.RecordIn(&st.JobOwnerStatus)
		rc.ObserveLiveJob()
		return moveTo(PhaseRunning, "Rescaled", fmt.Sprintf("job %s rescaled in place to parallelism %d", jobID, want))
	}
	if err := requestParallelism(rc, hash, jobID, want); client.IsUnsupported(err) {
		rc.Event(true, "RescaleUnsupported", fmt.Sprintf("the JobManager refused to rescale job %s in place (%v); restarting it instead", jobID, err))
		return rc.StopLiveJob("Rescaling", fmt.Sprintf("parallelism %d needs a new job", want))
	} else if err != nil {
		return failed(err)
	}
	return stay(0)
}

// requestParallelism sets every vertex's upper parallelism bound to want, unless it already is.
func requestParallelism(rc *Context, hash, jobID string, want int32) error {
	url := rc.FlinkURL(hash)
	reqs, err := rc.Flink().Flink().GetJobResourceRequirements(rc, url, jobID)
	if err != nil {
		return err
	}
	changed := false
	for id, v := range reqs {
		if v.Parallelism.UpperBound != want {
			v.Parallelism.UpperBound, v.Parallelism.LowerBound = want, 1
			reqs[id] = v
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if err := rc.Flink().Flink().UpdateJobResourceRequirements(rc, url, jobID, reqs); err != nil {
		return err
	}
	rc.Event(false, "RescaleRequested", fmt.Sprintf("asked job %s to run with parallelism %d", jobID, want))
	return nil
}
