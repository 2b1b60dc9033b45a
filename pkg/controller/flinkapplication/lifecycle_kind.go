package flinkapplication

import (
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// otherVersionsJob is the job of the BlueGreen version beside the one whose job is jobID: the job
// of a record on another cluster, or else that of the version torn down last; "" when there is none.
func otherVersionsJob(rc *Context, jobID string) string {
	own := jobstate.ClusterOfJob(rc.Job, jobID)
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(rc.Job), jobstate.Candidate(rc.Job)} {
		if r != nil && r.JobID != "" && r.JobID != jobID && own != "" && r.ClusterHash != own {
			return r.JobID
		}
	}
	if t := rc.App.Status.LastTeardown; t != nil && t.JobID != jobID {
		return t.JobID
	}
	return ""
}

// RestoreByHand says how the user names the state a job starts from when the restore policy
// cannot choose it: with a new savepointRedeployNonce, from the state its path names.
func (rc *Context) RestoreByHand() string { return restoreByHand(rc) }

// RunConfig is the Flink configuration the job with this id was started with (runConfigOfJob).
func (rc *Context) RunConfig(jobID string) v1beta1.FlinkConfig { return runConfigOfJob(rc, jobID) }

// OtherVersion is the job of the BlueGreen version beside the one whose job is jobID
// (otherVersionsJob); ok is false for an application of another deployment mode, or another kind.
func (rc *Context) OtherVersion(jobID string) (string, bool) {
	if rc.App == nil || !blueGreen(rc.App) {
		return "", false
	}
	return otherVersionsJob(rc, jobID), true
}

// Beside tells whether a new BlueGreen version starts, or runs, beside the deployed one (besideLive).
func (rc *Context) Beside() bool { return besideLive(rc) }

// ForcedRollback tells whether the user asked to abandon the update in progress (forceRollback).
func (rc *Context) ForcedRollback() bool { return forcedRollback(rc) }

// KeepJobGivenUpOn keeps, as the object's job, a job of a deploy given up on that may still run
// (keepJobGivenUpOn).
func (rc *Context) KeepJobGivenUpOn() { keepJobGivenUpOn(rc) }

// Follows are the savepoints that the kind's handler of the phase follows itself.
func (rc *Context) Follows(phase Phase) []v1beta1.SavepointPurpose { return rc.phases()[phase].Follows }

// DeriveStatus writes the fields of status derived from the records and the ledger: an
// application's hashes and savepoint trigger besides the job's.
func (rc *Context) DeriveStatus() {
	if rc.App != nil {
		deriveStatus(&rc.App.Status)
		return
	}
	jobstate.DeriveJobStatus(rc.Job)
}

// SummarizeKind writes what an application shows beyond its job: its versions and its UI's
// address.
func (rc *Context) SummarizeKind() {
	if rc.App != nil {
		summarizeVersions(rc)
		showUIURLs(rc)
	}
}

// Poll is how soon the kind's phase looks again when its handler does not say.
func (rc *Context) Poll(phase Phase) func(*config.Config) time.Duration {
	return rc.phases()[phase].Poll
}

// RescalingInPlace tells whether the live job restarts because it rescales in place (rescalingInPlace).
func (rc *Context) RescalingInPlace() bool { return rescalingInPlace(rc) }

// RecordsCandidateCheckpoints tells whether the candidate's job has its checkpoints recorded while it
// starts (recordsCandidateCheckpoints).
func (rc *Context) RecordsCandidateCheckpoints() bool { return recordsCandidateCheckpoints(rc) }

// HoldDelete holds an application's deletion until its other clusters are gone.
func (rc *Context) HoldDelete(rec *v1beta1.DeploymentRecord) (Outcome, bool) {
	if rc.Settings.DeleteMode != v1beta1.DeleteModeNone && rc.App != nil {
		target := ""
		if rec != nil {
			target = rec.ClusterHash
		}
		if out, gone := leftoverClustersGoneBeforeDelete(rc, target); !gone {
			return out, true
		}
	}
	return Outcome{}, false
}

// ReleaseObject deletes the HA ConfigMaps the object's clusters left, then removes the finalizer.
func (rc *Context) ReleaseObject() (Outcome, bool) {
	if out, waiting := kindpass.RemoveHAConfigMapsBeforeFinalizer(rc.Pass); waiting {
		return out, true
	}
	if err := rc.RemoveFinalizer(); err != nil {
		return failed(err), true
	}
	return Outcome{}, false
}

// jobParams are what a job is submitted with (jobstate.JobParams).
type jobParams = jobstate.JobParams

func specJobParams(app *v1beta1.FlinkApplication) jobParams {
	s := app.Spec
	return jobParams{JarName: s.JobJar(), EntryClass: s.EntryClass, ProgramArgs: s.ProgramArgs, Args: s.ProgramArgsList, Parallelism: s.Parallelism,
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

// runConfigOfJob is the Flink configuration the application's job with this id was started with, as
// far as the operator recorded it: the spec of its deployment record; the current spec's when no
// record names the job or the record keeps no spec. What a job keeps of its checkpoints when it ends is what it runs with, not
// what a later edit of the spec says (explorer seed 10000102: an update that also set the
// retention policy to RETAIN_ON_CANCELLATION cancelled a job running with
// NO_EXTERNALIZED_CHECKPOINTS as if its checkpoints survived, and restored one Flink had discarded).
func runConfigOfJob(rc *Context, jobID string) v1beta1.FlinkConfig {
	if rc.Job == nil || jobID == "" {
		return rc.Settings.FlinkConfig
	}
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(rc.Job), jobstate.Candidate(rc.Job)} {
		if r == nil || r.JobID != jobID || r.Spec == "" {
			continue
		}
		if rc.App != nil {
			if app := withSpec(rc.App, r.Spec); app != nil {
				return app.Spec.FlinkConfig
			}
		}
	}
	return rc.Settings.FlinkConfig
}

// recordsCandidateCheckpoints tells whether the candidate's job has its checkpoints recorded while
// it starts (jobstate.Observe.CandidateCheckpoint): a new BlueGreen version's job while it runs
// beside the deployed version, which may subsume the checkpoint it started from. A new job of the
// other modes starts once the job before it stopped, from state nothing subsumes.
func recordsCandidateCheckpoints(rc *Context) bool {
	if rc.Job == nil {
		return false
	}
	c, s := jobstate.Candidate(rc.Job), jobstate.Stable(rc.Job)
	if c == nil {
		return false
	}
	return rc.App != nil && blueGreen(rc.App) && s != nil && s.ClusterHash != c.ClusterHash
}
