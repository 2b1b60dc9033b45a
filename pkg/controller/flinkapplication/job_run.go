package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// jobParams are what a job is submitted with (jobstate.JobParams).
type jobParams = jobstate.JobParams

func specJobParams(app *v1beta1.FlinkApplication) jobParams {
	s := app.Spec
	return jobParams{JarName: s.JarName, EntryClass: s.EntryClass, ProgramArgs: s.ProgramArgs, Args: s.ProgramArgsList, Parallelism: s.Parallelism,
		AllowNonRestoredState: s.AllowNonRestoredState}
}

// BeforeRun holds an application's job until its other clusters are gone (no job of it may run on
// another while this one starts), and sends a session job that its JobManager lost back to the
// newest state it completed.
func (rc *Context) BeforeRun(rec *v1beta1.DeploymentRecord, restorePath string) (Outcome, bool) {
	if rc.App != nil && rc.Flink().View(rec.ClusterHash, rec.JobID).Liveness != jobs.Alive {
		if wait, gone := leftoverClustersGone(rc, rec.ClusterHash); !gone {
			return wait, true
		}
	}
	if isSessionJob(rc) && rec.JobID != "" && jobUnknownToFlink(rc.Flink().View(rec.ClusterHash, rec.JobID)) {
		// The job ran (its checkpoints recorded) and its JobManager no longer knows it (lost with a
		// JobManager process without HA): submitted again under its id, it goes on from what it
		// completed, newer than what it started from. The restore is persisted before the submission.
		// A job Flink still reports (FAILED, say) ended through Flink, which may have discarded its
		// checkpoints: the phase that saw it end chose what to restore (attack review s6).
		if newest := rc.JobState().NewestStatePath(rec.JobID); newest != "" && newest != restorePath {
			rc.Job.Deployments.NextRestorePath = newest
			return persistThenContinue(), true
		}
	}
	return Outcome{}, false
}

// jobUnknownToFlink tells whether the job is gone without Flink having ended it: its JobManager no
// longer knows it, or is gone with it.
func jobUnknownToFlink(v *jobs.View) bool { return v.Liveness == jobs.Stopped && v.Details == nil }
