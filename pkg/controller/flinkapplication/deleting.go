package flinkapplication

import (
	"fmt"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// handleDeleting deals with the live job per deleteMode before the finalizer goes: Savepoint takes a
// final savepoint and cancels the job, ForceCancel cancels it, None leaves Flink alone. The owned
// clusters then go by garbage collection. A job whose state is unknown is waited for: it is never
// taken as stopped because its JobManager does not answer.
func handleDeleting(rc *Context) Outcome {
	st := rc.Job
	if !hasFinalizer(rc.Meta) {
		return stay(untilChanged)
	}
	if out, stopping := stopSecondVersion(rc); stopping {
		return out
	}
	// The job is the candidate's while it has one (the stable job was stopped for it), else the
	// stable deployment's.
	rec := jobstate.Candidate(st)
	if rec == nil || rec.JobID == "" {
		rec = jobstate.Stable(st)
	}
	mode := rc.Settings.DeleteMode
	if mode != v1beta1.DeleteModeNone && rc.App != nil {
		target := ""
		if rec != nil {
			target = rec.ClusterHash
		}
		if out, gone := leftoverClustersGoneBeforeDelete(rc, target); !gone {
			return out
		}
	}
	if mode == v1beta1.DeleteModeNone {
		if out, waiting := leftJobWaits(rc, rec); waiting {
			return out
		}
	}
	if mode == v1beta1.DeleteModeNone || rec == nil {
		return finishDelete(rc, fmt.Sprintf("deleteMode %s: Flink left alone", mode))
	}
	v := rc.Flink().View(rec.ClusterHash, rec.JobID)
	// The delete's own savepoint with cancel: a manual or periodic one in flight is settled on its
	// own and never taken for it. One asked for before the user chose ForceCancel is still followed
	// to its end, so that the state it completed is the one recorded.
	wanted := mode == v1beta1.DeleteModeSavepoint && st.FinalSavepointPath == ""
	end := rc.EndJob(v1beta1.SavepointDelete, rec, v, wanted, "FinalSavepoint")
	switch {
	case end.Wait != nil:
		return *end.Wait
	case end.Missing != "":
		rc.Event(true, "FinalSavepointMissing", end.Missing)
	case end.SavepointPath != "":
		st.FinalSavepointPath = end.SavepointPath
		rc.TrimLedger()
		rc.Event(false, "FinalSavepoint", fmt.Sprintf("final savepoint of job %s: %s", rec.JobID, end.SavepointPath))
	}
	if st.FinalSavepointPath == "" {
		keepStateAddress(rc, rec, v)
	}
	if st.FinalSavepointPath != "" {
		return finishDelete(rc, fmt.Sprintf("job stopped; its state is at %s", st.FinalSavepointPath))
	}
	return finishDelete(rc, fmt.Sprintf("job stopped (deleteMode %s); no savepoint was recorded", mode))
}

// keepStateAddress names, in an Event that outlives the object, the newest state the application
// recorded when it goes away without a final savepoint: a suspended job's savepoint, what an update
// had stopped its job with, or the job's newest checkpoint. finalSavepointPath names it only when it
// is a savepoint: a field named savepoint never names a checkpoint.
func keepStateAddress(rc *Context, rec *v1beta1.DeploymentRecord, v *jobs.View) {
	st := rc.Job
	var points []jobs.StatePoint
	if v.Details != nil {
		points = rc.Flink().FlinkState(v.Ref, ledger.Trigger(rc.Ledger().Pending(rec.JobID)))
	}
	if rec.JobID != "" {
		points = append(points, rc.JobState().Recorded(rec.JobID).Points()...)
	}
	path := ""
	if p := jobs.Newest(points); p != nil {
		path = p.Path
	}
	if path == "" {
		// The stable job was stopped before (a suspend, or an update whose job has not run yet):
		// that stop recorded the state to resume from.
		path = st.Deployments.NextRestorePath
	}
	if path == "" {
		return
	}
	if rc.Ledger().IsSavepoint(path) {
		st.FinalSavepointPath = path
	}
	rc.Event(false, "StateKept", fmt.Sprintf("the job's state is at %s; restore it with %s", path, rc.Settings.Field("savepointPath")))
}

// finishDelete removes the finalizer once what status says about the job's state is persisted.
func finishDelete(rc *Context, msg string) Outcome {
	if rc.Stored != nil && rc.StoredJob.FinalSavepointPath != rc.Job.FinalSavepointPath {
		return persistThenContinue()
	}
	if out, waiting := removeHAConfigMapsBeforeFinalizer(rc); waiting {
		return out
	}
	if err := removeFinalizer(rc); err != nil {
		return failed(err)
	}
	return Outcome{Reason: "Deleted", Message: msg, After: untilChanged}
}

// stopSecondVersion cancels the job of the BlueGreen version that does not serve the application,
// before the serving version's job is dealt with per deleteMode: the serving version's state is the
// one recorded. That is the deployed version, unless the new one was promoted automatically and the
// deployed one only runs on for its teardown delay.
func stopSecondVersion(rc *Context) (Outcome, bool) {
	st := rc.Job
	s, c := jobstate.Stable(st), jobstate.Candidate(st)
	if c == nil || c.JobID == "" || s == nil || s.JobID == "" || rc.Settings.DeleteMode == v1beta1.DeleteModeNone {
		return Outcome{}, false
	}
	second := c
	if c.PromotedAt != nil {
		second = s
	}
	state, err := rc.Flink().Cancel(rc.Flink().View(second.ClusterHash, second.JobID))
	switch state {
	case jobs.Unknown:
		return failed(err), true
	case jobs.Alive:
		return stay(0), true
	}
	second.JobID, second.ApplicationID = "", ""
	return persistThenContinue(), true
}
