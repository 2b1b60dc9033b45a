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
// another while this one starts).
func (rc *Context) BeforeRun(rec *v1beta1.DeploymentRecord, restorePath string) (Outcome, bool) {
	if rc.App != nil && rc.Flink().View(rec.ClusterHash, rec.JobID).Liveness != jobs.Alive {
		if wait, gone := leftoverClustersGone(rc, rec.ClusterHash); !gone {
			return wait, true
		}
	}
	return Outcome{}, false
}
