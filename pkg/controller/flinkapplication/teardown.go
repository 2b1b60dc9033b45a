package flinkapplication

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// handleTeardown removes the BlueGreen version status.teardownHash names. Its job stops per
// blueGreen.teardownMode: with a savepoint (the default), recorded in status.lastTeardown before the
// cluster goes, so the version's state is never lost; or by a cancel. Then its cluster and Services
// are deleted, and the other version is the deployed one, with the application's Service on it.
func handleTeardown(rc *Context) Outcome {
	st := &rc.App.Status
	s, c := jobstate.Stable(&st.JobOwnerStatus), jobstate.Candidate(&st.JobOwnerStatus)
	var gone, survivor *v1beta1.DeploymentRecord
	switch {
	case c != nil && c.SpecHash == st.TeardownHash:
		gone, survivor = c, s
	case s != nil && c != nil && s.SpecHash == st.TeardownHash:
		gone, survivor = s, c
	default:
		return moveTo(PhaseRunning, "TeardownCompleted", "no version left to tear down")
	}
	if gone == s && rc.App.Spec.ForceRollback {
		if out, rolledBack := forceRollbackInTeardown(rc, gone, survivor); rolledBack {
			return out
		}
	}
	if gone.JobID != "" {
		return stopVersion(rc, gone)
	}
	if survivor == nil {
		return moveTo(PhaseRunning, "TeardownCompleted", "no version left to tear down")
	}
	if gone.ClusterHash != survivor.ClusterHash {
		if err := rc.DeleteCluster(gone.ClusterHash); err != nil {
			return failed(err)
		}
	}
	if gone == s {
		// Promotion: the new version is the deployed one from now on.
		if err := pointGenericService(rc, survivor.ClusterHash); err != nil {
			return failed(err)
		}
		rc.Promote(survivor.RestorePath)
		st.FailedDeployHash, st.RollbackHash = "", ""
		if app := stableApp(rc); app != nil {
			// The application's job status is the promoted version's from now on.
			rc.StartedJob(specJobParams(app), survivor.RestorePath)
		}
	} else {
		jobstate.ClearTarget(&st.JobOwnerStatus)
		if st.FailedDeployHash == gone.SpecHash {
			// An aborted or rolled-back version: DeployFailed until the spec changes.
			reason := "BlueGreenAborted"
			if rc.App.Spec.ForceRollback {
				reason = "RolledBack"
			}
			st.RollbackHash = survivor.SpecHash
			return warnTo(PhaseDeployFailed, reason, fmt.Sprintf("%s; version %s (hash %s, job %s) stays deployed",
				st.Reason, survivor.Version, survivor.SpecHash, survivor.JobID))
		}
	}
	return moveTo(PhaseRunning, "TeardownCompleted", fmt.Sprintf("version %s (hash %s) torn down; version %s (hash %s, job %s) is deployed",
		gone.Version, gone.SpecHash, survivor.Version, survivor.SpecHash, survivor.JobID))
}

// forceRollbackInTeardown answers forceRollback set while the deployed version is being torn down
// for the new one (a promotion). Before its job was touched, the promotion is undone: both versions
// run again, and DualRunning tears the new one down. Once its job is being stopped, the rollback
// can no longer keep it: a Warning Event says so once, and how to go back.
func forceRollbackInTeardown(rc *Context, gone, survivor *v1beta1.DeploymentRecord) (Outcome, bool) {
	st := &rc.App.Status
	touched := gone.JobID == "" || rc.Ledger().Pending(gone.JobID, v1beta1.SavepointTeardown) != nil
	if !touched {
		// A cancel (teardownMode ForceCancel) leaves no entry: the job itself says whether it was sent.
		v := rc.Flink().View(gone.ClusterHash, gone.JobID)
		touched = v.Liveness != jobs.Alive || jobs.CancelIssued(v)
	}
	if !touched {
		st.TeardownHash = ""
		return warnTo(PhaseDualRunning, "ForceRollback", fmt.Sprintf(
			"forceRollback set before version %s's job was stopped: the promotion is undone and version %s is torn down instead",
			gone.Version, survivor.Version)), true
	}
	if st.ObservedGeneration != rc.App.Generation {
		rc.Event(true, "ForceRollbackIgnored", fmt.Sprintf("forceRollback is ignored: version %s (hash %s) is already being torn down "+
			"and its job stopped with its state recorded in status.lastTeardown; version %s is deployed. To go back, set the spec to version %s's",
			gone.Version, gone.SpecHash, survivor.Version, gone.Version))
	}
	return Outcome{}, false
}

// stopVersion stops the job of a version being torn down and records how it stopped, before its
// cluster goes.
func stopVersion(rc *Context, gone *v1beta1.DeploymentRecord) Outcome {
	st := &rc.App.Status
	v := rc.Flink().View(gone.ClusterHash, gone.JobID)
	end := rc.EndJob(v1beta1.SavepointTeardown, gone, v, teardownMode(rc.App) == v1beta1.TeardownModeSavepoint, "TeardownSavepoint")
	switch {
	case end.Wait != nil:
		return *end.Wait
	case end.Missing != "":
		rc.Event(true, "TeardownSavepointMissing", fmt.Sprintf("version %s: %s", gone.Version, end.Missing))
	}
	path := end.SavepointPath
	st.LastTeardown = &v1beta1.TeardownRecord{Version: gone.Version, VersionHash: gone.SpecHash, JobID: gone.JobID,
		SavepointPath: path, Time: metav1.NewTime(rc.Now)}
	rc.Event(false, "VersionStopped", fmt.Sprintf("job %s of version %s (%s) stopped, %s", gone.JobID, gone.Version,
		flink.VersionedServiceName(rc.App, gone.ClusterHash), describeStop(path, v)))
	discardedWithVersion(rc, gone, v)
	jobstate.ForgetJob(gone)
	rc.TrimLedger()
	// The record of how it stopped is persisted before its cluster, which knows the savepoint, goes.
	return persistThenContinue()
}

func describeStop(path string, v *jobs.View) string {
	switch {
	case path != "":
		return "with savepoint " + path
	case v.Liveness == jobs.Stopped:
		return "having ended already: " + v.Evidence
	}
	return "cancelled without a savepoint"
}

// discardedWithVersion marks gone, in the ledger, the checkpoint of the torn-down version's job that
// the other version's job started from, when Flink discarded it as that job ended: its retention
// policy keeps no checkpoint through the end it had (a stop with a savepoint, a cancel under
// DELETE_ON_CANCELLATION, any end under NO_EXTERNALIZED_CHECKPOINTS). The new version's job
// restored it without claiming it; when that job later ends without state of its own (it failed
// before completing a checkpoint, or its own were discarded too), no restore picks the checkpoint
// Flink deleted, and none older stands in for it (explorer seeds 13000260, 11000294: a new version
// started from a checkpoint of the deployed job, which was then torn down under
// NO_EXTERNALIZED_CHECKPOINTS; the new version's job failed, and its recovery sent a job to restore
// the deleted checkpoint). Only Flink's word on how the job ended counts: a job whose JobManager went
// with it left its checkpoints where they were.
func discardedWithVersion(rc *Context, gone *v1beta1.DeploymentRecord, v *jobs.View) {
	if v.Liveness != jobs.Stopped || v.Details == nil || flink.CheckpointsSurviveEnd(runConfigOfJob(rc, gone.JobID), v.Details.State) {
		return
	}
	st := &rc.App.Status.JobOwnerStatus
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(st), jobstate.Candidate(st)} {
		if r == nil || r == gone {
			continue
		}
		paths := []string{r.RestorePath}
		if r == jobstate.Candidate(st) {
			paths = append(paths, st.Deployments.NextRestorePath)
		}
		for _, p := range paths {
			if !jobstate.IsCheckpointOf(gone.JobID, p) {
				continue
			}
			// Taken before the job that started from it: that job's start stands in for a time the
			// operator did not record, kept before that job's own states (beforeOwnStates), which is
			// all it orders.
			at := rc.JobState().RecordedTimeOf(gone.JobID, p)
			if d := rc.Flink().View(r.ClusterHash, r.JobID).Details; at.IsZero() && d != nil && d.StartTime > 0 {
				at = time.UnixMilli(d.StartTime)
			}
			if at.IsZero() && r.SubmittedAt != nil {
				at = r.SubmittedAt.Time
			}
			at = rc.JobState().BeforeOwnStates(r.JobID, at)
			if !at.IsZero() {
				rc.Ledger().RecordGone(gone.JobID, gone.ClusterHash, p, at, rc.Now)
			}
		}
	}
}
